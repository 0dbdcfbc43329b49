#include "wire/rendezvous.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

namespace pmixpp::wire {

namespace {

constexpr std::string_view kMagic = "pmixpp-rendezvous=1";

template <typename T>
bool parse_number(std::string_view s, T &out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

std::string read_text(const std::string &path) {
    std::string text;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return text;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            text.append(buf, static_cast<std::size_t>(n));
            if (text.size() > (1u << 20)) break;  // not a rendezvous file
        } else if (n == 0 || errno != EINTR) {
            break;
        }
    }
    ::close(fd);
    return text;
}

bool write_all(int fd, const std::string &text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

}  // namespace

std::string rendezvous_hostname() {
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
    return name;
}

std::string system_rendezvous_name() {
    return "pmixpp.sys." + rendezvous_hostname();
}

std::string session_rendezvous_prefix() {
    return "pmixpp." + rendezvous_hostname() + ".tool.";
}

std::string session_rendezvous_name(const std::string &tag) {
    return session_rendezvous_prefix() + tag;
}

std::string format_rendezvous(const Rendezvous &r) {
    std::string text(kMagic);
    text += "\nnspace=" + r.nspace + "\nrank=" + std::to_string(r.rank) +
            "\npid=" + std::to_string(r.pid) + "\n";
    for (const auto &u : r.uris) text += "uri=" + u + "\n";
    return text;
}

std::optional<Rendezvous> parse_rendezvous(const std::string &text) {
    Rendezvous r;
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty() || line == kMagic) continue;
        auto value = [&](std::string_view key) -> std::optional<std::string_view> {
            if (line.size() > key.size() && line.substr(0, key.size()) == key &&
                line[key.size()] == '=')
                return line.substr(key.size() + 1);
            return std::nullopt;
        };
        if (auto v = value("uri")) {
            if (!v->empty()) r.uris.emplace_back(*v);
        } else if (auto v = value("nspace")) {
            r.nspace = std::string(*v);
        } else if (auto v = value("rank")) {
            if (!parse_number(*v, r.rank)) return std::nullopt;
        } else if (auto v = value("pid")) {
            if (!parse_number(*v, r.pid)) return std::nullopt;
        } else {
            // A bare URI or "nspace.rank;uri" (PMIX_SERVER_URI* form).
            const auto semi = line.find(';');
            const auto scheme = line.find("://");
            if (scheme == std::string_view::npos) return std::nullopt;
            if (semi != std::string_view::npos && semi < scheme) {
                const std::string_view id = line.substr(0, semi);
                if (const auto dot = id.rfind('.'); dot != std::string_view::npos) {
                    std::uint32_t rank = 0;
                    if (parse_number(id.substr(dot + 1), rank) && r.nspace.empty()) {
                        r.nspace = std::string(id.substr(0, dot));
                        r.rank = rank;
                    }
                }
                line.remove_prefix(semi + 1);
            }
            r.uris.emplace_back(line);
        }
    }
    if (r.uris.empty()) return std::nullopt;
    return r;
}

std::optional<Rendezvous> read_rendezvous(const std::string &path) {
    auto r = parse_rendezvous(read_text(path));
    if (r) r->path = path;
    return r;
}

bool process_alive(pid_t pid) {
    return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

std::string write_file_atomically(const std::string &path, const std::string &text, unsigned mode) {
    const std::string temporary = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return temporary + ": " + std::strerror(errno);
    const bool ok = write_all(fd, text) && ::fchmod(fd, static_cast<mode_t>(mode)) == 0;
    const int err = errno;
    ::close(fd);
    if (!ok || ::rename(temporary.c_str(), path.c_str()) != 0) {
        const int e = ok ? errno : err;
        ::unlink(temporary.c_str());
        return path + ": " + std::strerror(e);
    }
    return {};
}

int create_exclusively(const std::string &path, const std::string &text, unsigned mode) {
    // Complete before it appears (a reader never sees it half written), and
    // only if nothing is there: a temporary file hard-linked to the name.
    const std::string temporary = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    const bool ok = write_all(fd, text) && ::fchmod(fd, static_cast<mode_t>(mode)) == 0;
    int err = ok ? 0 : (errno != 0 ? errno : EIO);
    ::close(fd);
    if (err == 0 && ::link(temporary.c_str(), path.c_str()) != 0) err = errno;
    ::unlink(temporary.c_str());
    return err;
}

std::size_t remove_stale_session_files(const std::string &dir) {
    const std::string prefix = session_rendezvous_prefix();
    std::vector<std::string> stale;
    DIR *d = ::opendir(dir.c_str());
    if (d == nullptr) return 0;
    while (const dirent *entry = ::readdir(d)) {
        const std::string_view name(entry->d_name);
        if (!name.starts_with(prefix)) continue;
        // Another server's file being written (write_file_atomically) may
        // still be partial: never judged.
        if (name.find(".tmp.") != std::string_view::npos) continue;
        auto r = read_rendezvous(dir + "/" + std::string(name));
        if (r && r->pid > 0 && !process_alive(r->pid)) stale.emplace_back(name);
    }
    ::closedir(d);
    std::size_t removed = 0;
    for (const auto &name : stale) removed += ::unlink((dir + "/" + name).c_str()) == 0;
    return removed;
}

std::vector<Rendezvous> list_session_servers(const std::string &dir) {
    std::vector<Rendezvous> out;
    const std::string prefix = session_rendezvous_prefix();
    DIR *d = ::opendir(dir.c_str());
    if (d == nullptr) return out;
    while (const dirent *entry = ::readdir(d)) {
        const std::string_view name(entry->d_name);
        if (!name.starts_with(prefix)) continue;
        pid_t owner = 0;
        if (!parse_number(name.substr(prefix.size()), owner)) continue;  // the nspace-tagged twin
        if (!process_alive(owner)) continue;
        auto r = read_rendezvous(dir + "/" + std::string(name));
        if (!r || r->pid != owner) continue;
        out.push_back(std::move(*r));
    }
    ::closedir(d);
    std::sort(out.begin(), out.end(),
              [](const Rendezvous &a, const Rendezvous &b) { return a.pid < b.pid; });
    return out;
}

}  // namespace pmixpp::wire
