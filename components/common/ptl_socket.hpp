// Socket plumbing shared by the stream transports ptl_usock and ptl_tcp.
//
// Header-only on purpose: each component DSO gets its own (hidden) copy, and
// when both are compiled into libpmix (PMIXPP_COMPONENTS_STATIC) the inline
// definitions merge instead of clashing. Lives in components/common/, which
// each component's CMakeLists.txt puts on its include path. Reading the
// caller's pmix_info_t arrays is the SDK's (pmixpp/mca/info.hpp).
//
// Everything here may run on any thread; nothing keeps state.
#pragma once

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "pmixpp/mca/ptl.hpp"

namespace pmixpp::ptl_socket {

using mca::Result;
using mca::Status;
using mca::ptl::PeerCredentials;
using Clock = std::chrono::steady_clock;

// "Connection refused", thread-safe (unlike strerror).
inline std::string errno_text(int err) {
    return std::error_code(err, std::system_category()).message();
}

// Owns one file descriptor; closes it on destruction. Move-only.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) noexcept : fd_(fd) {}
    UniqueFd(UniqueFd &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd &operator=(UniqueFd &&other) noexcept {
        if (this != &other) reset(std::exchange(other.fd_, -1));
        return *this;
    }
    UniqueFd(const UniqueFd &) = delete;
    UniqueFd &operator=(const UniqueFd &) = delete;
    ~UniqueFd() { reset(); }

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

  private:
    int fd_ = -1;
};

// A connected stream socket as the core sees it. Credentials and the peer's
// description are fixed when the connection is made (read once at
// accept/connect), so the accessors never touch the socket.
class StreamConnection final : public mca::ptl::Connection {
  public:
    StreamConnection(UniqueFd fd, std::optional<PeerCredentials> credentials, std::string peer)
        : fd_(std::move(fd)), credentials_(credentials), peer_(std::move(peer)) {}

    int fd() const override { return fd_.get(); }
    std::optional<PeerCredentials> peer_credentials() const override { return credentials_; }
    std::string describe_peer() const override { return peer_; }

  private:
    UniqueFd fd_;
    std::optional<PeerCredentials> credentials_;
    std::string peer_;
};

// Accepts one pending connection on `listen_fd` as a non-blocking,
// close-on-exec socket. PMIX_ERR_WOULD_BLOCK when nothing is pending (or the
// pending one vanished before we took it); any other failure's message names
// the component ("ptl_tcp") and the listener's URI.
inline Result<UniqueFd> accept_pending(int listen_fd, std::string_view component,
                                       std::string_view uri) {
    for (;;) {
        const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) return UniqueFd(fd);
        const int err = errno;
        if (err == EINTR) continue;
        if (err == EAGAIN || err == EWOULDBLOCK || err == ECONNABORTED) {
            return Status(PMIX_ERR_WOULD_BLOCK, "");
        }
        const bool exhausted = err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
        return Status(
            exhausted ? PMIX_ERR_OUT_OF_RESOURCE : PMIX_ERROR,
            std::string(component) + ": accept on " + std::string(uri) + ": " + errno_text(err));
    }
}

// The status of a failed connect() for errno `err`: PMIX_ERR_UNREACH when the
// peer is not there or refuses (try the next URI), PMIX_ERROR otherwise. The
// message names the URI.
inline Status connect_failure(int err, std::string_view component, std::string_view uri) {
    pmix_status_t code = PMIX_ERROR;
    switch (err) {
        case ECONNREFUSED:
        case ENOENT:
        case ENOTDIR:
        case EACCES:
        case EPERM:
        case ENETUNREACH:
        case EHOSTUNREACH:
        case EHOSTDOWN:
        case ENETDOWN:
        case ECONNRESET:
        case EADDRNOTAVAIL:
            code = PMIX_ERR_UNREACH;
            break;
        case ETIMEDOUT:
            code = PMIX_ERR_TIMEOUT;
            break;
        default:
            break;
    }
    return Status(code, std::string(component) + ": cannot connect to " + std::string(uri) + ": " +
                            errno_text(err));
}

inline Status connect_timeout(std::chrono::milliseconds timeout, std::string_view component,
                              std::string_view uri) {
    return Status(PMIX_ERR_TIMEOUT, std::string(component) + ": no answer from " +
                                        std::string(uri) + " within " +
                                        std::to_string(timeout.count()) + " ms");
}

// Milliseconds left until `deadline`, never negative, rounded up so that a
// wait does not return just before the deadline and spin.
inline int remaining_ms(Clock::time_point deadline) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, INT32_MAX));
}

}  // namespace pmixpp::ptl_socket
