#include "usock_transport.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <cstdlib>
#include <optional>

#include "pmixpp/mca/info.hpp"
#include "ptl_socket.hpp"

namespace pmixpp::ptl_usock {
namespace {

using mca::Result;
using mca::Status;
using mca::ptl::PeerCredentials;
using ptl_socket::errno_text;
using ptl_socket::UniqueFd;

constexpr const char *kComponent = "ptl_usock";
// Longest path an AF_UNIX address holds (sun_path keeps a terminating NUL).
constexpr std::size_t kMaxPathLength = sizeof(sockaddr_un::sun_path) - 1;

std::string uri_of(std::string_view path) {
    return std::string(kScheme) + "://" + std::string(path);
}

// An AF_UNIX address and the length to hand to bind()/connect(): a socket
// path ("/dir/name", NUL-terminated in sun_path) or a name in Linux's abstract
// namespace ("@name": sun_path[0] is NUL and the length counts the name only).
struct UnixAddress {
    sockaddr_un address{};
    socklen_t length = 0;
    const sockaddr *get() const { return reinterpret_cast<const sockaddr *>(&address); }
};

bool is_abstract(std::string_view path) {
    return !path.empty() && path.front() == '@';
}

// The address of `path`, or a BAD_PARAM status saying why it cannot be one.
// `what` names the path in the message ("socket path /tmp/x"), `hint` is what
// the user can do about it.
Result<UnixAddress> unix_address(std::string_view path, std::string_view what,
                                 std::string_view hint) {
    if (path.size() > kMaxPathLength) {
        return Status(PMIX_ERR_BAD_PARAM, std::string(kComponent) + ": " + std::string(what) +
                                              " is " + std::to_string(path.size()) +
                                              " bytes long; an AF_UNIX socket path holds at most " +
                                              std::to_string(kMaxPathLength) + " bytes" +
                                              std::string(hint));
    }
    UnixAddress a;
    a.address.sun_family = AF_UNIX;
    if (is_abstract(path)) {
        // '@' becomes the leading NUL; no terminator, the length ends the name.
        std::memcpy(a.address.sun_path + 1, path.data() + 1, path.size() - 1);
        a.length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
    } else {
        std::memcpy(a.address.sun_path, path.data(), path.size());
        a.length = sizeof(sockaddr_un);
    }
    return a;
}

// The path of "usock://<absolute path>", or "@name" of "usock://@name".
Result<std::string> parse_uri(std::string_view uri) {
    const std::string_view prefix = "usock://";
    const auto bad = [&](std::string_view why) {
        return Status(PMIX_ERR_BAD_PARAM,
                      std::string(kComponent) + ": malformed URI '" + std::string(uri) +
                          "': " + std::string(why) +
                          " (expected usock://<absolute socket path> or usock://@<abstract name>)");
    };
    if (!uri.starts_with(prefix)) return bad("not a usock URI");
    const std::string_view path = uri.substr(prefix.size());
    if (path.find('\0') != std::string_view::npos) return bad("the path contains a NUL byte");
    if (is_abstract(path)) {
        if (path.size() == 1) return bad("the abstract name is empty");
        return std::string(path);
    }
    if (path.empty() || path.front() != '/') return bad("the path is not absolute");
    return std::string(path);
}

std::optional<PeerCredentials> read_peer_credentials(int fd) {
    ucred cred{};
    socklen_t length = sizeof(cred);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0 || length != sizeof(cred)) {
        return std::nullopt;
    }
    return PeerCredentials{cred.uid, cred.gid, cred.pid};
}

std::string describe(std::string_view uri, const std::optional<PeerCredentials> &cred) {
    std::string text(uri);
    if (cred) {
        text += " (pid " + std::to_string(cred->pid) + ", uid " + std::to_string(cred->uid) + ")";
    }
    return text;
}

// Whether `path` is a socket nobody listens on any more (left behind by a
// process that died without cleaning up, whose pid we now have).
bool is_abandoned_socket(const UnixAddress &address) {
    struct stat st {};
    if (::lstat(address.address.sun_path, &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
    UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!probe) return false;
    const int rc = ::connect(probe.get(), address.get(), address.length);
    return rc != 0 && errno == ECONNREFUSED;
}

std::string default_tmpdir(std::span<const pmix_info_t> server_info, const UsockConfig &config) {
    if (auto dir = mca::info_string(server_info, PMIX_SERVER_TMPDIR)) return *dir;
    if (!config.tmpdir.empty()) return config.tmpdir;
    if (const char *env = std::getenv("TMPDIR"); env != nullptr && env[0] != '\0') return env;
    return "/tmp";
}

class UsockListener final : public mca::ptl::Listener {
  public:
    UsockListener(UniqueFd fd, std::string path, dev_t dev, ino_t ino)
        : fd_(std::move(fd)), path_(std::move(path)), uri_(uri_of(path_)), dev_(dev), ino_(ino) {}

    // Removes the socket file, unless someone replaced it with another file
    // since we bound it (then it is not ours to remove). An abstract name
    // goes with the socket.
    ~UsockListener() override {
        if (is_abstract(path_)) return;
        struct stat st {};
        if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) {
            ::unlink(path_.c_str());
        }
    }

    int fd() const override { return fd_.get(); }
    std::string uri() const override { return uri_; }

    Result<std::unique_ptr<mca::ptl::Connection>> accept() override {
        auto accepted = ptl_socket::accept_pending(fd_.get(), kComponent, uri_);
        if (!accepted) return accepted.status();
        UniqueFd fd = std::move(accepted).value();
        const auto cred = read_peer_credentials(fd.get());
        std::string peer = describe(uri_, cred);
        return std::make_unique<ptl_socket::StreamConnection>(std::move(fd), cred, std::move(peer));
    }

  private:
    UniqueFd fd_;
    std::string path_;
    std::string uri_;
    dev_t dev_;
    ino_t ino_;
};

// Distinguishes the listeners of one process (a server and a tool in one
// process, tests): the pid makes the name unique among live processes.
std::atomic<unsigned> listener_sequence{0};

// "pmixpp.<pid>.<n>", the next listener name of this process.
std::string next_listener_name() {
    return "pmixpp." + std::to_string(::getpid()) + "." +
           std::to_string(listener_sequence.fetch_add(1));
}

// A non-blocking, close-on-exec AF_UNIX stream socket for a listener.
Result<UniqueFd> listener_socket() {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
        return Status(PMIX_ERROR, std::string(kComponent) +
                                      ": cannot create an AF_UNIX socket: " + errno_text(errno));
    }
    return fd;
}

// A listener on "@pmixpp.<pid>.<n>" in the abstract namespace. Nothing in the
// file system: a host that empties its session directory (Open MPI's orted
// does when a second daemon starts on the same host) cannot take it away.
// Another pid namespace sharing this network namespace may hold the same
// name: then the next <n>.
Result<std::vector<std::unique_ptr<mca::ptl::Listener>>> listen_abstract() {
    auto socket = listener_socket();
    if (!socket) return socket.status();
    UniqueFd fd = std::move(socket).value();
    std::string name;
    int err = EADDRINUSE;
    for (int attempt = 0; attempt < 64 && err == EADDRINUSE; ++attempt) {
        name = "@" + next_listener_name();
        auto address = unix_address(name, "abstract name " + name, "");
        if (!address) return address.status();
        err = ::bind(fd.get(), address.value().get(), address.value().length) == 0 ? 0 : errno;
    }
    if (err != 0) {
        return Status(PMIX_ERROR, std::string(kComponent) + ": cannot bind abstract name " + name +
                                      ": " + errno_text(err));
    }
    if (::listen(fd.get(), SOMAXCONN) != 0) {
        return Status(PMIX_ERROR, std::string(kComponent) + ": cannot listen on " + name + ": " +
                                      errno_text(errno));
    }
    std::vector<std::unique_ptr<mca::ptl::Listener>> listeners;
    listeners.push_back(std::make_unique<UsockListener>(std::move(fd), name, 0, 0));
    return listeners;
}

}  // namespace

Result<std::vector<std::unique_ptr<mca::ptl::Listener>>> UsockModule::listen(
    const mca::ptl::ListenRequest &request) {
    const std::span<const pmix_info_t> server_info = request.server_info;
    if (config_.abstract) return listen_abstract();
    std::string dir = default_tmpdir(server_info, config_);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string path = dir + "/" + next_listener_name();
    auto address =
        unix_address(path, "socket path " + path,
                     " (set PMIX_SERVER_TMPDIR or ptl_usock_tmpdir to a shorter directory)");
    if (!address) return address.status();

    auto socket = listener_socket();
    if (!socket) return socket.status();
    UniqueFd fd = std::move(socket).value();
    const UnixAddress &sa = address.value();
    int rc = ::bind(fd.get(), sa.get(), sa.length);
    if (rc != 0 && errno == EADDRINUSE && is_abandoned_socket(sa)) {
        ::unlink(path.c_str());
        rc = ::bind(fd.get(), sa.get(), sa.length);
    }
    if (rc != 0) {
        const int err = errno;
        return Status(err == EACCES ? PMIX_ERR_NO_PERMISSIONS : PMIX_ERROR,
                      std::string(kComponent) + ": cannot bind " + path + ": " + errno_text(err));
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || ::listen(fd.get(), SOMAXCONN) != 0) {
        const int err = errno;
        ::unlink(path.c_str());
        return Status(PMIX_ERROR, std::string(kComponent) + ": cannot listen on " + path + ": " +
                                      errno_text(err));
    }
    std::vector<std::unique_ptr<mca::ptl::Listener>> listeners;
    listeners.push_back(std::make_unique<UsockListener>(std::move(fd), path, st.st_dev, st.st_ino));
    return listeners;
}

// AF_UNIX connect never reports EINPROGRESS: a full backlog is EAGAIN on a
// non-blocking socket, while a blocking one sleeps until the server accepts or
// SO_SNDTIMEO runs out. So the socket stays blocking, with SO_SNDTIMEO set to
// what is left of the timeout, and turns non-blocking once connected.
Result<std::unique_ptr<mca::ptl::Connection>> UsockModule::connect(
    std::string_view uri, std::chrono::milliseconds timeout) {
    auto path = parse_uri(uri);
    if (!path) return path.status();
    auto address = unix_address(path.value(), "the path of URI " + std::string(uri), "");
    if (!address) return address.status();

    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) {
        return Status(PMIX_ERROR, std::string(kComponent) +
                                      ": cannot create an AF_UNIX socket: " + errno_text(errno));
    }
    const auto deadline = ptl_socket::Clock::now() + timeout;
    for (;;) {
        const int left_ms = ptl_socket::remaining_ms(deadline);
        if (left_ms == 0) {
            // SO_SNDTIMEO 0 would mean "forever": make the last try non-blocking.
            ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
        } else {
            const timeval tv{left_ms / 1000, (left_ms % 1000) * 1000};
            ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        }
        if (::connect(fd.get(), address.value().get(), address.value().length) == 0) {
            break;
        }
        const int err = errno;
        if (err == EINTR) continue;
        if (err == EAGAIN || err == EWOULDBLOCK) {
            if (left_ms == 0) return ptl_socket::connect_timeout(timeout, kComponent, uri);
            continue;  // the backlog stayed full for SO_SNDTIMEO; try once more at the deadline
        }
        return ptl_socket::connect_failure(err, kComponent, uri);
    }
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
        return Status(PMIX_ERROR, std::string(kComponent) + ": cannot make the connection to " +
                                      std::string(uri) + " non-blocking: " + errno_text(errno));
    }
    // The server's credentials, as of its listen().
    const auto cred = read_peer_credentials(fd.get());
    std::string peer = describe(uri, cred);
    return std::make_unique<ptl_socket::StreamConnection>(std::move(fd), cred, std::move(peer));
}

}  // namespace pmixpp::ptl_usock
