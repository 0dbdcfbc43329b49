// This node's IP interfaces (interfaces.hpp).
#include "interfaces.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <unistd.h>

namespace pmixpp::pnet_tcp {

namespace {

std::string read_line(const std::string &path) {
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line)) return {};
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    return line;
}

std::string link_target(const std::string &path) {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
    if (n <= 0) return {};
    std::string target(buf, static_cast<std::size_t>(n));
    const auto slash = target.rfind('/');
    return slash == std::string::npos ? target : target.substr(slash + 1);
}

bool is_pci_address(const std::string &s) {  // dddd:bb:dd.f
    return s.size() == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.';
}

int prefix_length(const sockaddr *mask) {
    if (mask == nullptr) return 0;
    const unsigned char *bytes = nullptr;
    std::size_t n = 0;
    if (mask->sa_family == AF_INET) {
        bytes = reinterpret_cast<const unsigned char *>(
            &reinterpret_cast<const sockaddr_in *>(mask)->sin_addr);
        n = 4;
    } else if (mask->sa_family == AF_INET6) {
        bytes = reinterpret_cast<const sockaddr_in6 *>(mask)->sin6_addr.s6_addr;
        n = 16;
    }
    int bits = 0;
    for (std::size_t i = 0; i < n; ++i) bits += __builtin_popcount(bytes[i]);
    return bits;
}

void fill_from_sysfs(Interface &itf, const std::string &sysfs) {
    const std::string dir = sysfs + "/" + itf.name;
    itf.mac = read_line(dir + "/address");
    if (const auto mtu = read_line(dir + "/mtu"); !mtu.empty())
        itf.mtu = static_cast<std::size_t>(std::strtoull(mtu.c_str(), nullptr, 10));
    if (const auto speed = read_line(dir + "/speed"); !speed.empty()) {
        const long mbps = std::strtol(speed.c_str(), nullptr, 10);  // -1: unknown
        if (mbps > 0) itf.speed = static_cast<std::size_t>(mbps) * 1000000U;
    }
    const auto state = read_line(dir + "/operstate");
    if (state == "up") itf.state = PMIX_LINK_UP;
    if (state == "down" || state == "lowerlayerdown") itf.state = PMIX_LINK_DOWN;
    itf.driver = link_target(dir + "/device/driver");
    // The PCI function the device hangs from: the device itself, or a parent
    // (virtio-net: /sys/devices/pci0000:00/0000:00:03.0/virtio2).
    char resolved[PATH_MAX];
    if (::realpath((dir + "/device").c_str(), resolved) == nullptr) return;
    std::string path(resolved);
    while (!path.empty() && path != "/sys/devices") {
        const auto slash = path.rfind('/');
        const std::string last = path.substr(slash + 1);
        if (is_pci_address(last)) {
            itf.bus = "PCI";
            itf.pci_id = last;
            itf.vendor_id = read_line(path + "/vendor");
            itf.device_id = read_line(path + "/device");
            return;
        }
        path.erase(slash);
    }
}

// "address/prefix" of the network `address` is in (host bits cleared).
std::string network_of(int family, const void *address, int prefix) {
    unsigned char bytes[16] = {};
    const std::size_t n = family == AF_INET ? 4 : 16;
    std::memcpy(bytes, address, n);
    for (std::size_t i = 0; i < n; ++i) {
        const int keep = prefix - static_cast<int>(i) * 8;
        if (keep <= 0)
            bytes[i] = 0;
        else if (keep < 8)
            bytes[i] &= static_cast<unsigned char>(0xff << (8 - keep));
    }
    char text[INET6_ADDRSTRLEN] = {};
    if (::inet_ntop(family, bytes, text, sizeof(text)) == nullptr) return {};
    return std::string(text) + "/" + std::to_string(prefix);
}

}  // namespace

std::vector<Interface> interfaces(const std::string &sysfs) {
    std::map<std::string, Interface> found;
    ifaddrs *list = nullptr;
    if (::getifaddrs(&list) != 0) return {};
    for (ifaddrs *a = list; a != nullptr; a = a->ifa_next) {
        if (a->ifa_addr == nullptr || a->ifa_name == nullptr) continue;
        if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
        const int family = a->ifa_addr->sa_family;
        if (family != AF_INET && family != AF_INET6) continue;
        char text[INET6_ADDRSTRLEN] = {};
        const void *where =
            family == AF_INET
                ? static_cast<const void *>(
                      &reinterpret_cast<const sockaddr_in *>(a->ifa_addr)->sin_addr)
                : static_cast<const void *>(
                      &reinterpret_cast<const sockaddr_in6 *>(a->ifa_addr)->sin6_addr);
        if (::inet_ntop(family, where, text, sizeof(text)) == nullptr) continue;
        Interface &itf = found[a->ifa_name];
        itf.name = a->ifa_name;
        const int prefix = prefix_length(a->ifa_netmask);
        itf.addresses.push_back(std::string(text) + "/" + std::to_string(prefix));
        itf.networks.push_back(network_of(family, where, prefix));
    }
    ::freeifaddrs(list);
    std::vector<Interface> out;
    for (auto &[name, itf] : found) {
        fill_from_sysfs(itf, sysfs);
        out.push_back(std::move(itf));
    }
    return out;
}

}  // namespace pmixpp::pnet_tcp
