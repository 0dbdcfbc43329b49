// Socket plumbing shared by the stream transports ptl_usock and ptl_tcp.
//
// Header-only on purpose: each component DSO gets its own (hidden) copy, and
// when both are compiled into libpmix (PMIXPP_COMPONENTS_STATIC) the inline
// definitions merge instead of clashing. Lives in ptl_usock/common/ and is put
// on ptl_tcp's include path by its CMakeLists.txt.
//
// Everything here may run on any thread; nothing keeps state.
#pragma once

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
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

// --- reading the caller's pmix_info_t arrays ----------------------------------

inline const pmix_info_t *find_info(std::span<const pmix_info_t> infos, std::string_view key) {
    for (const pmix_info_t &info : infos) {
        if (std::string_view(info.key, strnlen(info.key, sizeof(info.key))) == key) return &info;
    }
    return nullptr;
}

// A string value; std::nullopt when absent, not a string, or empty.
inline std::optional<std::string> info_string(std::span<const pmix_info_t> infos,
                                              std::string_view key) {
    const pmix_info_t *info = find_info(infos, key);
    if (info == nullptr || info->value.type != PMIX_STRING || info->value.data.string == nullptr ||
        info->value.data.string[0] == '\0') {
        return std::nullopt;
    }
    return std::string(info->value.data.string);
}

// A flag as PMIx reads them: a bool, or a key without a value (PMIX_UNDEF)
// meaning true; std::nullopt when absent or of another type.
inline std::optional<bool> info_flag(std::span<const pmix_info_t> infos, std::string_view key) {
    const pmix_info_t *info = find_info(infos, key);
    if (info == nullptr) return std::nullopt;
    if (info->value.type == PMIX_BOOL) return info->value.data.flag;
    if (info->value.type == PMIX_UNDEF) return true;
    return std::nullopt;
}

// An integer of any PMIx integer type; std::nullopt when absent or not an integer.
inline std::optional<std::int64_t> info_integer(std::span<const pmix_info_t> infos,
                                                std::string_view key) {
    const pmix_info_t *info = find_info(infos, key);
    if (info == nullptr) return std::nullopt;
    const auto &d = info->value.data;
    switch (info->value.type) {
        case PMIX_INT:
            return d.integer;
        case PMIX_INT8:
            return d.int8;
        case PMIX_INT16:
            return d.int16;
        case PMIX_INT32:
            return d.int32;
        case PMIX_INT64:
            return d.int64;
        case PMIX_UINT:
            return d.uint;
        case PMIX_UINT8:
            return d.uint8;
        case PMIX_UINT16:
            return d.uint16;
        case PMIX_UINT32:
            return d.uint32;
        case PMIX_UINT64:
            return static_cast<std::int64_t>(d.uint64);
        case PMIX_SIZE:
            return static_cast<std::int64_t>(d.size);
        case PMIX_PID:
            return d.pid;
        default:
            return std::nullopt;
    }
}

}  // namespace pmixpp::ptl_socket
