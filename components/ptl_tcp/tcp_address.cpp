#include "tcp_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <charconv>
#include <cstring>
#include <memory>
#include <optional>

namespace pmixpp::ptl_tcp {
namespace {

using mca::Result;
using mca::Status;

constexpr const char *kComponent = "ptl_tcp";

std::optional<unsigned> parse_number(std::string_view text, unsigned max) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > max) {
        return std::nullopt;
    }
    return value;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// One element of ptl_tcp_if_include.
struct IncludeRule {
    std::string interface;   // non-empty: matches every address of that interface
    int family = AF_UNSPEC;  // else: an address block of this family
    unsigned char bytes[16] = {};
    unsigned prefix_bits = 0;

    bool matches(const char *if_name, const sockaddr *sa) const {
        if (!interface.empty()) return interface == if_name;
        if (sa->sa_family != family) return false;
        const auto *addr = family == AF_INET
                               ? reinterpret_cast<const unsigned char *>(
                                     &reinterpret_cast<const sockaddr_in *>(sa)->sin_addr)
                               : reinterpret_cast<const unsigned char *>(
                                     &reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_addr);
        const unsigned full = prefix_bits / 8;
        if (std::memcmp(addr, bytes, full) != 0) return false;
        const unsigned rest = prefix_bits % 8;
        if (rest == 0) return true;
        const auto mask = static_cast<unsigned char>(0xffu << (8 - rest));
        return (addr[full] & mask) == (bytes[full] & mask);
    }
};

Result<IncludeRule> parse_rule(std::string_view element, std::string_view whole) {
    IncludeRule rule;
    const auto slash = element.find('/');
    const std::string address(element.substr(0, slash));
    if (::inet_pton(AF_INET, address.c_str(), rule.bytes) == 1) {
        rule.family = AF_INET;
    } else if (::inet_pton(AF_INET6, address.c_str(), rule.bytes) == 1) {
        rule.family = AF_INET6;
    } else if (slash == std::string_view::npos) {
        rule.interface = address;
        return rule;
    } else {
        return Status(PMIX_ERR_BAD_PARAM, std::string(kComponent) + ": '" + std::string(element) +
                                              "' in if_include '" + std::string(whole) +
                                              "' is neither an interface nor an address block");
    }
    const unsigned max_bits = rule.family == AF_INET ? 32 : 128;
    rule.prefix_bits = max_bits;
    if (slash != std::string_view::npos) {
        const auto bits = parse_number(element.substr(slash + 1), max_bits);
        if (!bits) {
            return Status(PMIX_ERR_BAD_PARAM, std::string(kComponent) + ": bad prefix length in '" +
                                                  std::string(element) + "' of if_include '" +
                                                  std::string(whole) + "'");
        }
        rule.prefix_bits = *bits;
    }
    return rule;
}

std::string describe_interface_addresses(const ifaddrs *list) {
    std::string text;
    for (const ifaddrs *ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
        if (ifa->ifa_addr == nullptr) continue;
        const int family = ifa->ifa_addr->sa_family;
        if (family != AF_INET && family != AF_INET6) continue;
        SocketAddress a;
        a.length = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
        std::memcpy(&a.storage, ifa->ifa_addr, a.length);
        const std::string uri = format_uri(a);
        // "tcp4://10.0.0.1:0" -> "10.0.0.1"
        const auto start = uri.find("://") + 3;
        if (!text.empty()) text += ", ";
        text += std::string(ifa->ifa_name) + " " + uri.substr(start, uri.rfind(':') - start);
        if ((ifa->ifa_flags & IFF_UP) == 0) text += " (down)";
    }
    return text.empty() ? "none" : text;
}

}  // namespace

unsigned SocketAddress::port() const noexcept {
    if (family() == AF_INET)
        return ntohs(reinterpret_cast<const sockaddr_in *>(&storage)->sin_port);
    return ntohs(reinterpret_cast<const sockaddr_in6 *>(&storage)->sin6_port);
}

void SocketAddress::set_port(unsigned port) noexcept {
    const auto p = htons(static_cast<uint16_t>(port));
    if (family() == AF_INET) {
        reinterpret_cast<sockaddr_in *>(&storage)->sin_port = p;
    } else {
        reinterpret_cast<sockaddr_in6 *>(&storage)->sin6_port = p;
    }
}

SocketAddress SocketAddress::loopback(int family, unsigned port) {
    SocketAddress a;
    if (family == AF_INET) {
        auto *in = reinterpret_cast<sockaddr_in *>(&a.storage);
        in->sin_family = AF_INET;
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.length = sizeof(sockaddr_in);
    } else {
        auto *in6 = reinterpret_cast<sockaddr_in6 *>(&a.storage);
        in6->sin6_family = AF_INET6;
        in6->sin6_addr = in6addr_loopback;
        a.length = sizeof(sockaddr_in6);
    }
    a.set_port(port);
    return a;
}

std::string format_uri(const SocketAddress &address) {
    char text[INET6_ADDRSTRLEN] = {};
    if (address.family() == AF_INET) {
        const auto *in = reinterpret_cast<const sockaddr_in *>(&address.storage);
        ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
        return "tcp4://" + std::string(text) + ":" + std::to_string(address.port());
    }
    const auto *in6 = reinterpret_cast<const sockaddr_in6 *>(&address.storage);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    std::string host(text);
    if (in6->sin6_scope_id != 0) {
        char name[IF_NAMESIZE] = {};
        host += "%";
        host += ::if_indextoname(in6->sin6_scope_id, name) != nullptr
                    ? std::string(name)
                    : std::to_string(in6->sin6_scope_id);
    }
    return "tcp6://[" + host + "]:" + std::to_string(address.port());
}

Result<SocketAddress> parse_uri(std::string_view uri) {
    const auto bad = [&](std::string_view why) {
        return Status(PMIX_ERR_BAD_PARAM,
                      std::string(kComponent) + ": malformed URI '" + std::string(uri) +
                          "': " + std::string(why) +
                          " (expected tcp4://<a.b.c.d>:<port> or tcp6://[<address>]:<port>)");
    };
    const bool v4 = uri.starts_with("tcp4://");
    if (!v4 && !uri.starts_with("tcp6://")) return bad("not a tcp4 or tcp6 URI");
    const std::string_view rest = uri.substr(7);
    std::string_view host;
    std::string_view port_text;
    if (v4) {
        const auto colon = rest.rfind(':');
        if (colon == std::string_view::npos) return bad("no port");
        host = rest.substr(0, colon);
        port_text = rest.substr(colon + 1);
    } else {
        const auto close = rest.find("]:");
        if (!rest.starts_with('[') || close == std::string_view::npos) {
            return bad("the address must be in brackets and followed by :<port>");
        }
        host = rest.substr(1, close - 1);
        port_text = rest.substr(close + 2);
    }
    const auto port = parse_number(port_text, 65535);
    if (!port || *port == 0) return bad("the port must be a number in 1..65535");

    SocketAddress address = SocketAddress::loopback(v4 ? AF_INET : AF_INET6, *port);
    if (v4) {
        auto *in = reinterpret_cast<sockaddr_in *>(&address.storage);
        if (::inet_pton(AF_INET, std::string(host).c_str(), &in->sin_addr) != 1) {
            return bad("'" + std::string(host) + "' is not a numeric IPv4 address");
        }
        return address;
    }
    auto *in6 = reinterpret_cast<sockaddr_in6 *>(&address.storage);
    const auto percent = host.find('%');
    if (percent != std::string_view::npos) {
        const std::string scope(host.substr(percent + 1));
        const auto numeric = parse_number(scope, UINT32_MAX);
        in6->sin6_scope_id = numeric ? *numeric : ::if_nametoindex(scope.c_str());
        if (in6->sin6_scope_id == 0) return bad("unknown interface '" + scope + "'");
        host = host.substr(0, percent);
    }
    if (::inet_pton(AF_INET6, std::string(host).c_str(), &in6->sin6_addr) != 1) {
        return bad("'" + std::string(host) + "' is not a numeric IPv6 address");
    }
    return address;
}

Result<std::vector<SocketAddress>> listen_addresses(std::string_view if_include,
                                                    FamilyChoice families) {
    std::vector<SocketAddress> chosen;
    if_include = trim(if_include);
    if (if_include.empty()) {
        if (families.ipv4) chosen.push_back(SocketAddress::loopback(AF_INET, 0));
        if (families.ipv6) chosen.push_back(SocketAddress::loopback(AF_INET6, 0));
        return chosen;
    }

    std::vector<IncludeRule> rules;
    for (std::string_view rest = if_include; !rest.empty();) {
        const auto comma = rest.find(',');
        const std::string_view element = trim(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        if (element.empty()) continue;
        auto rule = parse_rule(element, if_include);
        if (!rule) return rule.status();
        rules.push_back(std::move(rule).value());
    }

    ifaddrs *raw = nullptr;
    if (::getifaddrs(&raw) != 0) {
        return Status(PMIX_ERROR, std::string(kComponent) +
                                      ": cannot list the interfaces: " + std::strerror(errno));
    }
    const std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> list(raw, &::freeifaddrs);

    for (const int family : {AF_INET, AF_INET6}) {
        if ((family == AF_INET && !families.ipv4) || (family == AF_INET6 && !families.ipv6)) {
            continue;
        }
        bool found = false;
        for (const IncludeRule &rule : rules) {
            for (const ifaddrs *ifa = list.get(); ifa != nullptr && !found; ifa = ifa->ifa_next) {
                if (ifa->ifa_addr == nullptr || ifa->ifa_addr->sa_family != family ||
                    (ifa->ifa_flags & IFF_UP) == 0 || !rule.matches(ifa->ifa_name, ifa->ifa_addr)) {
                    continue;
                }
                SocketAddress a;
                a.length = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
                std::memcpy(&a.storage, ifa->ifa_addr, a.length);
                a.set_port(0);
                chosen.push_back(a);
                found = true;
            }
            if (found) break;
        }
    }
    if (chosen.empty()) {
        return Status(PMIX_ERR_BAD_PARAM,
                      std::string(kComponent) +
                          ": no address of an enabled family matches if_include '" +
                          std::string(if_include) +
                          "' (addresses here: " + describe_interface_addresses(list.get()) + ")");
    }
    return chosen;
}

}  // namespace pmixpp::ptl_tcp
