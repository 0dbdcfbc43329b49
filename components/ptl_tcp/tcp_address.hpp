// Addresses of ptl_tcp: the URIs "tcp4://<a.b.c.d>:<port>" and
// "tcp6://[<addr>[%<scope>]]:<port>", and the choice of the address to listen
// on from ptl_tcp_if_include. Pure functions, no sockets held.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>
#include <string_view>
#include <vector>

#include "pmixpp/mca/sdk_types.hpp"

namespace pmixpp::ptl_tcp {

// An IPv4 or IPv6 socket address (port included).
struct SocketAddress {
    sockaddr_storage storage{};
    socklen_t length = 0;

    int family() const noexcept { return storage.ss_family; }
    const sockaddr *get() const noexcept { return reinterpret_cast<const sockaddr *>(&storage); }
    sockaddr *get() noexcept { return reinterpret_cast<sockaddr *>(&storage); }
    unsigned port() const noexcept;
    void set_port(unsigned port) noexcept;

    static SocketAddress loopback(int family, unsigned port);
};

// "tcp4://127.0.0.1:4711", "tcp6://[::1]:4711" (with "%<interface>" for a
// scoped address).
std::string format_uri(const SocketAddress &address);

// The address of a tcp4/tcp6 URI with a numeric address and a port in
// 1..65535; PMIX_ERR_BAD_PARAM with a message naming the URI otherwise.
mca::Result<SocketAddress> parse_uri(std::string_view uri);

// Which families to listen on.
struct FamilyChoice {
    bool ipv4 = true;
    bool ipv6 = true;
};

// The addresses to listen on, at most one per family, port 0. An empty
// `if_include` means the loopback addresses (127.0.0.1, ::1). Otherwise it is a
// comma-separated list of interface names ("lo", "eth0"), addresses and CIDR
// blocks ("10.1.0.0/16", "fd00::/8"); per family, the first element that
// matches an address of an interface that is up gives the address.
// PMIX_ERR_BAD_PARAM for an element that is none of these or when nothing
// matches (the message lists the addresses there are).
mca::Result<std::vector<SocketAddress>> listen_addresses(std::string_view if_include,
                                                         FamilyChoice families);

}  // namespace pmixpp::ptl_tcp
