#include "server/peer_identity.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <spdlog/fmt/fmt.h>

namespace pmixpp::server {

namespace {

// The hex form /proc/net/tcp{,6} gives an address:port: the address's bytes
// as stored (4 x 32-bit host-order words), then the port.
std::string proc_net_endpoint(const sockaddr_storage &ss) {
    if (ss.ss_family == AF_INET) {
        const auto &a = reinterpret_cast<const sockaddr_in &>(ss);
        return fmt::format("{:08X}:{:04X}", a.sin_addr.s_addr, ntohs(a.sin_port));
    }
    const auto &a = reinterpret_cast<const sockaddr_in6 &>(ss);
    std::uint32_t words[4];
    std::memcpy(words, &a.sin6_addr, sizeof words);
    return fmt::format("{:08X}{:08X}{:08X}{:08X}:{:04X}", words[0], words[1], words[2], words[3],
                       ntohs(a.sin6_port));
}

}  // namespace

std::optional<uid_t> tcp_peer_uid(int fd) {
    sockaddr_storage local{}, peer{};
    socklen_t llen = sizeof local, plen = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr *>(&local), &llen) != 0 ||
        getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &plen) != 0) {
        return std::nullopt;
    }
    if (local.ss_family != AF_INET && local.ss_family != AF_INET6) return std::nullopt;
    const std::string want_local = proc_net_endpoint(peer);
    const std::string want_remote = proc_net_endpoint(local);
    std::ifstream table(local.ss_family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6");
    std::string line;
    std::getline(table, line);  // header
    while (std::getline(table, line)) {
        std::istringstream in(line);
        std::string slot, l, r, state, queues, timer, retr;
        unsigned long uid = 0;
        if (!(in >> slot >> l >> r >> state >> queues >> timer >> retr >> uid)) continue;
        if (l == want_local && r == want_remote) return static_cast<uid_t>(uid);
    }
    return std::nullopt;
}

}  // namespace pmixpp::server
