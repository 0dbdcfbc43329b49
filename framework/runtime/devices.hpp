// The node's I/O devices as hwloc sees them (network, OpenFabrics, GPU,
// block, DMA, co-processor OS devices), their distances from a cpuset
// (PMIx_Compute_distances) and the topology's signature (inventory).
// docs/network.md, "Device distances" and "Inventory".
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pmixpp::runtime {

// The topology to find devices in: the process's own (local_topology()) when
// it has OS devices (e.g. the XML a server shared was exported with them),
// else a discovery of this node that keeps I/O objects, made on the first
// call and kept until exit (I/O discovery costs tens of ms: PMIx_Load_topology
// does not pay it). nullptr with *status set when hwloc cannot load one.
void *device_topology(pmix_status_t *status);

// One OS device of a topology.
struct OsDevice {
    std::string osname;            // "eth0", "mlx5_0", "card0", "vda"
    pmix_device_type_t type = 0;   // PMIX_DEVTYPE_*
    std::string pci_id;            // "dddd:bb:dd.f" of its PCI parent, empty if none
    std::uint16_t pci_vendor = 0;  // PCI vendor/device ids, 0 if no PCI parent
    std::uint16_t pci_device = 0;
    std::string address;  // hwloc's "Address" info (a MAC for a NIC), may be empty
};

// The OS devices of `topology` whose type is in `types` (a PMIX_DEVTYPE_*
// mask; 0 = every known type), in hwloc's order.
std::vector<OsDevice> os_devices(void *topology, pmix_device_type_t types);

// The distance from the PUs of `cpuset` to one device.
struct DeviceDistance {
    std::string osname;
    pmix_device_type_t type = 0;
    std::uint16_t mindist = 0;
    std::uint16_t maxdist = 0;
};

// For each OS device of `topology` of a type in `types` (0 = all) and, when
// `device` is not empty, whose osname or uuid (device_uuid) is `device`: the
// least and greatest distance over the PUs of `cpuset` (an hwloc bitmap). The
// distance of a PU to a device is the number of tree levels between the PU
// and the closest object that holds both the PU and the device's locality
// (its first non-I/O ancestor): a device attached to the PU's core is closer
// than one attached to its package, which is closer than one attached to the
// machine (0: attached to the PU itself). BAD_PARAM when `cpuset` holds no PU of the
// topology.
pmix_status_t device_distances(void *topology, const void *cpuset, pmix_device_type_t types,
                               const std::string &device, std::vector<DeviceDistance> &out);

// A device's uuid: "<hostname>:<osname>" (unique in a cluster whose node names
// are unique).
std::string device_uuid(const std::string &osname);

// "SK<n>:NM<n>:L3<n>:L2<n>:L1<n>:CR<n>:HT<n>": the number of objects of each
// type (packages, NUMA nodes, caches, cores, PUs; absent types left out). Two
// nodes with the same signature have the same shape.
std::string topology_signature(void *topology);

// `topology` as hwloc XML (v2); empty when it cannot be exported.
std::string topology_xml(void *topology);

}  // namespace pmixpp::runtime
