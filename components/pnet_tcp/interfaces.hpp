// This node's IP interfaces for pnet_tcp's inventory (README.md,
// "Inventory"): getifaddrs for names, addresses and flags; Linux sysfs
// (/sys/class/net/<name>/...) for the link address, MTU, speed, state, driver
// and the PCI device behind the interface, when there is one.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pmixpp::pnet_tcp {

struct Interface {
    std::string name;                    // "eth0"
    std::vector<std::string> addresses;  // "192.0.2.2/24", "fd00::2/64"
    std::vector<std::string> networks;   // the same, host bits cleared: "192.0.2.0/24"
    std::string mac;                     // "02:fc:00:00:00:01", may be empty
    std::size_t mtu = 0;                 // bytes, 0 if unknown
    std::size_t speed = 0;               // bits per second, 0 if unknown
    pmix_link_state_t state = PMIX_LINK_STATE_UNKNOWN;
    std::string driver;           // "virtio_net", may be empty
    std::string bus = "virtual";  // "PCI" when a PCI device is behind it
    std::string pci_id;           // "0000:00:03.0" (PCI only)
    std::string vendor_id;        // "0x1af4" (PCI only)
    std::string device_id;        // "0x1000" (PCI only)
};

// The interfaces that are up, are not loopback and have an IPv4 or IPv6
// address, sorted by name. `sysfs` is the root of /sys/class/net (a test may
// point elsewhere).
std::vector<Interface> interfaces(const std::string &sysfs = "/sys/class/net");

}  // namespace pmixpp::pnet_tcp
