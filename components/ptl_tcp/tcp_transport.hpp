// ptl_tcp: PMIx connections over TCP (IPv4 and IPv6), for tools and for
// clients that cannot use AF_UNIX. No kernel credentials: the handshake's
// per-job secret vouches for the peer. TCP_NODELAY on every connection.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pmixpp/mca/ptl.hpp"

namespace pmixpp::ptl_tcp {

// When listen() opens listeners (parameter ptl_tcp_listen).
enum class ListenPolicy {
    // When the server info asks for tool, system or remote support
    // (PMIX_SERVER_TOOL_SUPPORT, _SYSTEM_SUPPORT, _REMOTE_CONNECTIONS), sets a
    // PMIX_TCP_* listening attribute, or when the ptl base says local clients
    // depend on TCP (ListenRequest::serve_local_clients: PMIX_MCA_ptl names
    // tcp, or no higher-priority transport such as usock is selected).
    automatic,
    always,
    never,
};

// The component's parameters and what the host offers, fixed at creation.
struct TcpConfig {
    int priority = 0;
    ListenPolicy listen = ListenPolicy::automatic;
    std::string if_include;  // ptl_tcp_if_include; empty: loopback
    unsigned port = 0;       // ptl_tcp_port; 0: ephemeral
    bool ipv4 = true;        // ptl_tcp_ipv4 and the host has IPv4
    bool ipv6 = true;        // ptl_tcp_ipv6 and the host has IPv6
};

// Whether this host can make TCP sockets of `family` (AF_INET, AF_INET6) and
// bind its loopback address.
bool family_available(int family);

// Immutable after construction: connect() and listen() may overlap.
class TcpModule final : public mca::ptl::Module {
  public:
    explicit TcpModule(TcpConfig config) : config_(std::move(config)) {}

    std::vector<std::string> uri_schemes() const override { return {"tcp4", "tcp6"}; }
    // Refuses the URIs of a family that is disabled or missing here.
    bool handles_uri(std::string_view uri) const override;
    int priority() const override { return config_.priority; }

    // At most one listener per family (see ListenPolicy and
    // listen_addresses()); ports from PMIX_TCP_IPV4_PORT / PMIX_TCP_IPV6_PORT,
    // else ptl_tcp_port. PMIX_TCP_IF_INCLUDE replaces ptl_tcp_if_include,
    // PMIX_TCP_DISABLE_IPV4/6 drop a family. The rendezvous files that
    // name these listeners are the server core's (server/rendezvous.hpp).
    mca::Result<std::vector<std::unique_ptr<mca::ptl::Listener>>> listen(
        const mca::ptl::ListenRequest &request) override;

    // Non-blocking connect, then poll until connected or `timeout`.
    mca::Result<std::unique_ptr<mca::ptl::Connection>> connect(
        std::string_view uri, std::chrono::milliseconds timeout) override;

  private:
    TcpConfig config_;
};

}  // namespace pmixpp::ptl_tcp
