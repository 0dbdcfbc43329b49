#include "tcp_rendezvous.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string_view>

#include "pmixpp/mca/info.hpp"
#include "ptl_socket.hpp"

namespace pmixpp::ptl_tcp {
namespace {

using mca::Result;
using mca::Status;
using ptl_socket::errno_text;

std::string hostname() {
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
    return name;
}

std::string file_prefix() {
    return "pmixpp." + hostname() + ".tool.";
}

bool process_alive(pid_t pid) {
    return ::kill(pid, 0) == 0 || errno == EPERM;
}

}  // namespace

Result<std::shared_ptr<RendezvousFile>> RendezvousFile::write(
    const std::string &dir, const std::vector<std::string> &uris) {
    const std::string path = dir + "/" + file_prefix() + std::to_string(::getpid());
    const std::string temporary = path + ".tmp";
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return Status(PMIX_ERROR, "ptl_tcp: cannot write the rendezvous file " + temporary + ": " +
                                      errno_text(errno));
    }
    std::string text;
    for (const std::string &uri : uris) text += uri + "\n";
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int err = errno;
    ::close(fd);
    if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
        const int rename_err = written ? errno : err;
        ::unlink(temporary.c_str());
        return Status(PMIX_ERROR, "ptl_tcp: cannot write the rendezvous file " + path + ": " +
                                      errno_text(rename_err));
    }
    return std::shared_ptr<RendezvousFile>(new RendezvousFile(path));
}

RendezvousFile::~RendezvousFile() {
    ::unlink(path_.c_str());
}

std::vector<std::string> rendezvous_dirs(std::span<const pmix_info_t> info) {
    std::vector<std::string> dirs;
    const auto add = [&](std::string dir) {
        if (!dir.empty() && std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) {
            dirs.push_back(std::move(dir));
        }
    };
    add(mca::info_string(info, PMIX_SERVER_TMPDIR).value_or(""));
    add(mca::info_string(info, PMIX_SYSTEM_TMPDIR).value_or(""));
    if (const char *env = std::getenv("TMPDIR")) add(env);
    add("/tmp");
    return dirs;
}

std::vector<std::string> find_rendezvous(const std::vector<std::string> &dirs,
                                         std::optional<pid_t> pid) {
    const std::string prefix = file_prefix();
    std::vector<std::string> uris;
    for (const std::string &dir : dirs) {
        DIR *d = ::opendir(dir.c_str());
        if (d == nullptr) continue;
        while (const dirent *entry = ::readdir(d)) {
            const std::string_view name(entry->d_name);
            if (!name.starts_with(prefix)) continue;
            const std::string_view pid_text = name.substr(prefix.size());
            pid_t owner = 0;
            const auto [end, parse_ec] =
                std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), owner);
            if (parse_ec != std::errc() || end != pid_text.data() + pid_text.size()) continue;
            if ((pid && owner != *pid) || !process_alive(owner)) continue;
            // POSIX, not std::filesystem / std::ifstream: those bring ~1 MB of
            // libstdc++ (locale, codecvt, iostreams) into the component, which
            // every client maps and relocates when it loads it.
            std::string text;
            const int fd = ::openat(::dirfd(d), entry->d_name, O_RDONLY | O_CLOEXEC);
            if (fd < 0) continue;
            char buf[4096];
            for (;;) {
                const ssize_t n = ::read(fd, buf, sizeof buf);
                if (n > 0) {
                    text.append(buf, static_cast<std::size_t>(n));
                } else if (n == 0 || errno != EINTR) {
                    break;
                }
            }
            ::close(fd);
            std::string_view rest = text;
            while (!rest.empty()) {
                const auto nl = rest.find('\n');
                const std::string_view line = rest.substr(0, nl);
                if (!line.empty()) uris.emplace_back(line);
                if (nl == std::string_view::npos) break;
                rest.remove_prefix(nl + 1);
            }
        }
        ::closedir(d);
    }
    return uris;
}

}  // namespace pmixpp::ptl_tcp
