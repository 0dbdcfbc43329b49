#include "server/rendezvous.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <spdlog/fmt/fmt.h>

#include "mca/logging.hpp"
#include "pmixpp/mca/info.hpp"
#include "wire/rendezvous.hpp"

namespace pmixpp::server {

namespace {

auto log() {
    return mca::framework_logger("server");
}

std::string tmpdir(std::span<const pmix_info_t> info, const char *key) {
    if (auto d = mca::info_string(info, key)) return *d;
    if (const char *env = std::getenv("TMPDIR"); env != nullptr && *env != '\0') return env;
    return "/tmp";
}

}  // namespace

mca::Status RendezvousFiles::write(std::span<const pmix_info_t> info, const pmix_proc_t &self,
                                   const std::vector<std::string> &uris) {
    remove();
    const bool system = mca::info_flag(info, PMIX_SERVER_SYSTEM_SUPPORT).value_or(false);
    const bool session = mca::info_flag(info, PMIX_SERVER_SESSION_SUPPORT).value_or(false) ||
                         mca::info_flag(info, PMIX_SERVER_TOOL_SUPPORT).value_or(false);
    if (!system && !session) return mca::Status::success();
    unsigned mode = 0600;
    if (const pmix_info_t *m = mca::find_info(info, PMIX_SOCKET_MODE)) {
        auto v = mca::as_u32(m->value);
        if (!v || (*v & ~0777u) != 0)
            return mca::Status(PMIX_ERR_BAD_PARAM,
                               "server: PMIX_SOCKET_MODE must be a mode (0-0777)");
        mode = *v;
    }
    wire::Rendezvous r;
    r.nspace = std::string(self.nspace, strnlen(self.nspace, PMIX_MAX_NSLEN));
    r.rank = self.rank;
    r.pid = ::getpid();
    r.uris = uris;
    const std::string text = wire::format_rendezvous(r);

    if (system) {
        const std::string path =
            tmpdir(info, PMIX_SYSTEM_TMPDIR) + "/" + wire::system_rendezvous_name();
        int err = wire::create_exclusively(path, text, mode);
        if (err == EEXIST) {
            auto other = wire::read_rendezvous(path);
            if (other && other->pid != r.pid && wire::process_alive(other->pid)) {
                return mca::Status(
                    PMIX_ERR_RESOURCE_BUSY,
                    fmt::format("server: this node already has a system server: pid {} (nspace "
                                "{}) holds {}",
                                other->pid, other->nspace, path));
            }
            // A dead server's file (or an unreadable one): ours replaces it.
            log()->info("server: replacing the stale system rendezvous file {} (pid {})", path,
                        other ? other->pid : 0);
            ::unlink(path.c_str());
            err = wire::create_exclusively(path, text, mode);
        }
        if (err != 0) {
            return mca::Status(PMIX_ERROR,
                               fmt::format("server: cannot write the system rendezvous file {}: {}",
                                           path, std::strerror(err)));
        }
        written_.push_back(path);
    }
    if (session) {
        const std::string dir = tmpdir(info, PMIX_SERVER_TMPDIR);
        if (auto n = wire::remove_stale_session_files(dir))
            log()->info("server: removed {} rendezvous file(s) of dead servers in {}", n, dir);
        for (const std::string &tag : {std::to_string(r.pid), r.nspace}) {
            if (tag.find('/') != std::string::npos) continue;  // not a file name
            const std::string path = dir + "/" + wire::session_rendezvous_name(tag);
            if (auto e = wire::write_file_atomically(path, text, mode); !e.empty()) {
                remove();
                return mca::Status(PMIX_ERROR,
                                   "server: cannot write the session rendezvous file " + e);
            }
            written_.push_back(path);
        }
    }
    for (const auto &p : written_) log()->info("server: rendezvous file {}", p);
    return mca::Status::success();
}

void RendezvousFiles::remove() {
    for (const auto &p : written_) ::unlink(p.c_str());
    written_.clear();
}

}  // namespace pmixpp::server
