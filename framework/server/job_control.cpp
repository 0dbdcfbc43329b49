// Job control on the server side: the Cleanup service (cleanup.hpp).
//
// Cleanup directives (PMIX_REGISTER_CLEANUP, PMIX_REGISTER_CLEANUP_DIR and
// their PMIX_CLEANUP_* modifiers) are the library's own business: it records
// them for the requesting client and removes the files and directories when
// that client finalizes, loses its connection or is deregistered. They never
// reach the host (OPENMPI-CONTRACT §2.6: ORTE does not know them). Every other
// directive goes to the host's job_control upcall, with the client's
// PMIX_USERID and PMIX_GRPID added; NULL upcall: PMIX_ERR_NOT_SUPPORTED.
//
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <system_error>

#include "mca/logging.hpp"
#include "server/cleanup.hpp"
#include "server/upcall_results.hpp"
#include "server/upcalls.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;
namespace fs = std::filesystem;

namespace {

auto log() {
    return mca::framework_logger("server");
}

constexpr std::initializer_list<const char *> kCleanupKeys = {
    PMIX_REGISTER_CLEANUP, PMIX_REGISTER_CLEANUP_DIR, PMIX_CLEANUP_RECURSIVE,
    PMIX_CLEANUP_EMPTY,    PMIX_CLEANUP_IGNORE,       PMIX_CLEANUP_LEAVE_TOPDIR};

bool is_cleanup_key(const pmix_info_t &i) {
    return std::any_of(kCleanupKeys.begin(), kCleanupKeys.end(),
                       [&](const char *k) { return PMIX_CHECK_KEY(&i, k); });
}

bool flag(const pmix_info_t &i) {
    return i.value.type == PMIX_UNDEF || (i.value.type == PMIX_BOOL && i.value.data.flag);
}

std::vector<std::string> split_commas(const pmix_value_t &v) {
    std::vector<std::string> out;
    if (v.type != PMIX_STRING || v.data.string == nullptr) return out;
    std::string s = v.data.string;
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t end = s.find(',', start);
        if (end == std::string::npos) end = s.size();
        if (end > start) out.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

bool ignored(const fs::path &p, const std::vector<std::string> &ignore) {
    const std::string name = p.filename().string();
    return std::find(ignore.begin(), ignore.end(), name) != ignore.end() ||
           std::find(ignore.begin(), ignore.end(), p.string()) != ignore.end();
}

// Removes what is below `dir` (depth first); returns whether `dir` is now empty.
bool clean_tree(const fs::path &dir, bool empty_only, const std::vector<std::string> &ignore) {
    std::error_code ec;
    bool empty = true;
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        entries.push_back(it->path());
    }
    for (const auto &p : entries) {
        if (ignored(p, ignore)) {
            empty = false;
            continue;
        }
        if (fs::is_directory(fs::symlink_status(p, ec))) {
            if (clean_tree(p, empty_only, ignore)) {
                fs::remove(p, ec);
            } else {
                empty = false;
            }
        } else if (!empty_only) {
            if (!fs::remove(p, ec)) empty = false;
        } else {
            empty = false;
        }
    }
    return empty;
}

}  // namespace

Cleanup::Cleanup(const HostUpcalls &host, RequestTable &requests) : host_(host) {
    requests.add(wire::Command::job_control,
                 [this](Channel &ch, Frame &frame, ClientRecord *client) {
                     handle_job_control(ch, frame, client);
                 });
}

void Cleanup::client_departed(const ProcKey &client, Departure) {
    run(client);
}

void Cleanup::run(const ProcKey &proc) {
    auto it = cleanups_.find(proc);
    if (it == cleanups_.end()) return;
    auto requests = std::move(it->second);
    cleanups_.erase(it);
    std::error_code ec;
    for (const auto &req : requests) {
        for (const auto &f : req.files) {
            if (!ignored(f, req.ignore)) fs::remove(f, ec);
        }
        for (const auto &d : req.dirs) {
            const fs::path dir(d);
            if (!fs::is_directory(dir, ec)) continue;
            if (req.recursive) {
                const bool empty = clean_tree(dir, req.empty_only, req.ignore);
                if (empty && !req.leave_top) fs::remove(dir, ec);
            } else if (!req.leave_top) {
                fs::remove(dir, ec);  // only succeeds when empty
            }
        }
    }
    log()->debug("server: ran {} cleanup request(s) of {}:{}", requests.size(), proc.first,
                 proc.second);
}

void Cleanup::handle_job_control(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::vector<pmix_proc_t> targets;
    wire::InfoArray directives;
    r.procs(targets);
    r.infos(directives);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed job_control request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    const ProcKey me = key_of(client->proc);

    CleanupRequest cleanup;
    bool has_cleanup = false, has_other = false;
    for (const auto &d : directives.span()) {
        if (!is_cleanup_key(d)) {
            // Our own identity keys are replaced below, never forwarded as given.
            if (!PMIX_CHECK_KEY(&d, PMIX_USERID) && !PMIX_CHECK_KEY(&d, PMIX_GRPID))
                has_other = true;
            continue;
        }
        has_cleanup = true;
        if (PMIX_CHECK_KEY(&d, PMIX_REGISTER_CLEANUP)) {
            for (auto &f : split_commas(d.value)) cleanup.files.push_back(std::move(f));
        } else if (PMIX_CHECK_KEY(&d, PMIX_REGISTER_CLEANUP_DIR)) {
            for (auto &f : split_commas(d.value)) cleanup.dirs.push_back(std::move(f));
        } else if (PMIX_CHECK_KEY(&d, PMIX_CLEANUP_RECURSIVE)) {
            cleanup.recursive = flag(d);
        } else if (PMIX_CHECK_KEY(&d, PMIX_CLEANUP_EMPTY)) {
            cleanup.empty_only = flag(d);
        } else if (PMIX_CHECK_KEY(&d, PMIX_CLEANUP_LEAVE_TOPDIR)) {
            cleanup.leave_top = flag(d);
        } else if (PMIX_CHECK_KEY(&d, PMIX_CLEANUP_IGNORE)) {
            for (auto &f : split_commas(d.value)) cleanup.ignore.push_back(std::move(f));
        }
    }
    if (has_cleanup) {
        if (cleanup.empty_only && !cleanup.recursive && !cleanup.dirs.empty()) {
            // "only remove empty subdirectories" needs a walk of subdirectories.
            cleanup.recursive = true;
        }
        if (cleanup.files.empty() && cleanup.dirs.empty()) {
            send_reply(reply, BodyWriter().i32(PMIX_ERR_BAD_PARAM).infos(nullptr, 0).take());
            return;
        }
        cleanups_[me].push_back(std::move(cleanup));
    }
    if (!has_other) {
        send_reply(reply, BodyWriter().i32(PMIX_SUCCESS).infos(nullptr, 0).take());
        return;
    }
    if (host_->job_control == nullptr) {
        send_reply(reply, BodyWriter().i32(PMIX_ERR_NOT_SUPPORTED).infos(nullptr, 0).take());
        return;
    }
    // The cleanup directives stay here (shallow copies: add_copies deep-copies them).
    std::vector<pmix_info_t> keep;
    for (const auto &d : directives.span()) {
        if (!is_cleanup_key(d)) keep.push_back(d);
    }
    auto args = std::make_shared<HostInfo>();
    args->add_copies_as(keep, static_cast<std::uint32_t>(client->uid),
                        static_cast<std::uint32_t>(client->gid));
    // No targets: every process of the caller's namespace.
    auto procs = std::make_shared<std::vector<pmix_proc_t>>(std::move(targets));
    if (procs->empty()) procs->push_back(proc_of({me.first, PMIX_RANK_WILDCARD}));
    const pmix_proc_t requestor = client->proc;
    call_host_info(
        [this, requestor, procs, args](pmix_info_cbfunc_t cb, void *cbdata) {
            return host_->job_control(&requestor, procs->data(), procs->size(), args->data(),
                                      args->size(), cb, cbdata);
        },
        [reply, procs, args](pmix_status_t s, wire::InfoArray results) {
            send_reply(reply, BodyWriter().i32(s).infos(results.data(), results.size()).take());
        });
}

}  // namespace pmixpp::server
