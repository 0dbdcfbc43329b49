#include "tcp_transport.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include "pmixpp/mca/info.hpp"
#include "ptl_socket.hpp"
#include "tcp_address.hpp"

namespace pmixpp::ptl_tcp {
namespace {

using mca::Result;
using mca::Status;
using ptl_socket::errno_text;
using ptl_socket::UniqueFd;

constexpr const char *kComponent = "ptl_tcp";

// Events and small requests must not wait for Nagle's algorithm.
bool set_nodelay(int fd) {
    const int one = 1;
    return ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0;
}

std::string peer_uri(int fd) {
    SocketAddress peer;
    peer.length = sizeof(peer.storage);
    if (::getpeername(fd, peer.get(), &peer.length) != 0) return "tcp (peer address unknown)";
    return format_uri(peer);
}

class TcpListener final : public mca::ptl::Listener {
  public:
    TcpListener(UniqueFd fd, std::string uri) : fd_(std::move(fd)), uri_(std::move(uri)) {}

    int fd() const override { return fd_.get(); }
    std::string uri() const override { return uri_; }

    Result<std::unique_ptr<mca::ptl::Connection>> accept() override {
        auto accepted = ptl_socket::accept_pending(fd_.get(), kComponent, uri_);
        if (!accepted) return accepted.status();
        UniqueFd fd = std::move(accepted).value();
        if (!set_nodelay(fd.get())) {
            return Status(PMIX_ERROR, std::string(kComponent) + ": cannot set TCP_NODELAY on a " +
                                          "connection accepted on " + uri_ + ": " +
                                          errno_text(errno));
        }
        std::string peer = peer_uri(fd.get());
        return std::make_unique<ptl_socket::StreamConnection>(std::move(fd), std::nullopt,
                                                              std::move(peer));
    }

  private:
    UniqueFd fd_;
    std::string uri_;
};

Result<std::unique_ptr<TcpListener>> open_listener(SocketAddress address) {
    const std::string wanted = format_uri(address);
    UniqueFd fd(::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
        return Status(PMIX_ERROR, std::string(kComponent) + ": cannot create a socket for " +
                                      wanted + ": " + errno_text(errno));
    }
    const int one = 1;
    // A fixed port must be reusable right after a server restarts (TIME_WAIT).
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    // An IPv6 listener serves IPv6 only; IPv4 has its own (same port possible).
    if (address.family() == AF_INET6) {
        ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    }
    if (::bind(fd.get(), address.get(), address.length) != 0) {
        const int err = errno;
        return Status(err == EACCES ? PMIX_ERR_NO_PERMISSIONS : PMIX_ERROR,
                      std::string(kComponent) + ": cannot bind " + wanted + ": " + errno_text(err));
    }
    if (::listen(fd.get(), SOMAXCONN) != 0) {
        return Status(PMIX_ERROR, std::string(kComponent) + ": cannot listen on " + wanted + ": " +
                                      errno_text(errno));
    }
    SocketAddress bound;
    bound.length = sizeof(bound.storage);
    if (::getsockname(fd.get(), bound.get(), &bound.length) != 0) {
        return Status(PMIX_ERROR, std::string(kComponent) + ": cannot read the address of " +
                                      wanted + ": " + errno_text(errno));
    }
    return std::make_unique<TcpListener>(std::move(fd), format_uri(bound));
}

// A port from the server info, or `fallback`.
Result<unsigned> port_for(std::span<const pmix_info_t> info, const char *key, unsigned fallback) {
    const auto port = mca::info_int(info, key);
    if (!port) return fallback;
    if (*port < 0 || *port > 65535) {
        return Status(PMIX_ERR_BAD_PARAM, std::string(kComponent) + ": " + key + " = " +
                                              std::to_string(*port) + " is not a port (0..65535)");
    }
    return static_cast<unsigned>(*port);
}

bool listening_requested(std::span<const pmix_info_t> info) {
    for (const char *key :
         {PMIX_SERVER_TOOL_SUPPORT, PMIX_SERVER_SYSTEM_SUPPORT, PMIX_SERVER_REMOTE_CONNECTIONS}) {
        if (mca::info_flag(info, key).value_or(false)) return true;
    }
    for (const char *key : {PMIX_TCP_IF_INCLUDE, PMIX_TCP_IPV4_PORT, PMIX_TCP_IPV6_PORT}) {
        if (mca::find_info(info, key) != nullptr) return true;
    }
    return false;
}

}  // namespace

static bool probe_family(int family) {
    UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) return false;
    const SocketAddress loopback = SocketAddress::loopback(family, 0);
    return ::bind(fd.get(), loopback.get(), loopback.length) == 0;
}

bool family_available(int family) {
    // Probed once per process: query and create_module both ask, in every
    // client's PMIx_Init, and a host's loopback families do not come and go.
    if (family == AF_INET) {
        static const bool ipv4 = probe_family(AF_INET);
        return ipv4;
    }
    if (family == AF_INET6) {
        static const bool ipv6 = probe_family(AF_INET6);
        return ipv6;
    }
    return probe_family(family);
}

bool TcpModule::handles_uri(std::string_view uri) const {
    const std::string_view scheme = mca::ptl::uri_scheme(uri);
    return (scheme == "tcp4" && config_.ipv4) || (scheme == "tcp6" && config_.ipv6);
}

Result<std::vector<std::unique_ptr<mca::ptl::Listener>>> TcpModule::listen(
    const mca::ptl::ListenRequest &request) {
    const std::span<const pmix_info_t> server_info = request.server_info;
    std::vector<std::unique_ptr<mca::ptl::Listener>> listeners;
    const bool wanted = config_.listen == ListenPolicy::always ||
                        (config_.listen == ListenPolicy::automatic &&
                         (request.serve_local_clients || listening_requested(server_info)));
    if (!wanted) return listeners;

    FamilyChoice families{config_.ipv4, config_.ipv6};
    if (mca::info_flag(server_info, PMIX_TCP_DISABLE_IPV4).value_or(false)) {
        families.ipv4 = false;
    }
    if (mca::info_flag(server_info, PMIX_TCP_DISABLE_IPV6).value_or(false)) {
        families.ipv6 = false;
    }
    if (!families.ipv4 && !families.ipv6) return listeners;

    const auto port4 = port_for(server_info, PMIX_TCP_IPV4_PORT, config_.port);
    if (!port4) return port4.status();
    const auto port6 = port_for(server_info, PMIX_TCP_IPV6_PORT, config_.port);
    if (!port6) return port6.status();

    const std::string if_include =
        mca::info_string(server_info, PMIX_TCP_IF_INCLUDE).value_or(config_.if_include);
    auto addresses = listen_addresses(if_include, families);
    if (!addresses) return addresses.status();

    std::vector<std::unique_ptr<TcpListener>> opened;
    std::vector<std::string> uris;
    for (SocketAddress &address : addresses.value()) {
        address.set_port(address.family() == AF_INET ? port4.value() : port6.value());
        auto listener = open_listener(address);
        if (!listener) return listener.status();
        uris.push_back(listener.value()->uri());
        opened.push_back(std::move(listener).value());
    }
    for (auto &listener : opened) listeners.push_back(std::move(listener));
    return listeners;
}

Result<std::unique_ptr<mca::ptl::Connection>> TcpModule::connect(
    std::string_view uri, std::chrono::milliseconds timeout) {
    auto address = parse_uri(uri);
    if (!address) return address.status();
    if (!handles_uri(uri)) {
        return Status(PMIX_ERR_UNREACH,
                      std::string(kComponent) + ": cannot connect to " + std::string(uri) + ": " +
                          (address.value().family() == AF_INET ? "IPv4" : "IPv6") +
                          " is disabled or not available on this host");
    }

    UniqueFd fd(::socket(address.value().family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
        return Status(PMIX_ERROR, std::string(kComponent) + ": cannot create a socket for " +
                                      std::string(uri) + ": " + errno_text(errno));
    }
    if (!set_nodelay(fd.get())) {
        return Status(PMIX_ERROR, std::string(kComponent) + ": cannot set TCP_NODELAY for " +
                                      std::string(uri) + ": " + errno_text(errno));
    }
    const auto deadline = ptl_socket::Clock::now() + timeout;
    if (::connect(fd.get(), address.value().get(), address.value().length) != 0) {
        const int err = errno;
        // EINTR: the connection goes on asynchronously, as with EINPROGRESS.
        if (err != EINPROGRESS && err != EINTR) {
            return ptl_socket::connect_failure(err, kComponent, uri);
        }
        for (;;) {
            pollfd p{fd.get(), POLLOUT, 0};
            const int ready = ::poll(&p, 1, ptl_socket::remaining_ms(deadline));
            if (ready > 0) break;
            if (ready == 0) return ptl_socket::connect_timeout(timeout, kComponent, uri);
            if (errno != EINTR) {
                return Status(PMIX_ERROR, std::string(kComponent) + ": waiting for " +
                                              std::string(uri) + ": " + errno_text(errno));
            }
        }
        int so_error = 0;
        socklen_t length = sizeof(so_error);
        if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &length) != 0) {
            so_error = errno;
        }
        if (so_error != 0) return ptl_socket::connect_failure(so_error, kComponent, uri);
    }
    return std::make_unique<ptl_socket::StreamConnection>(std::move(fd), std::nullopt,
                                                          std::string(uri));
}

}  // namespace pmixpp::ptl_tcp
