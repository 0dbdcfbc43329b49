// The node's I/O devices, their distances and the topology's signature
// (devices.hpp).
#include "runtime/devices.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>

#include "runtime/topology.hpp"

namespace pmixpp::runtime {

namespace {

std::mutex g_mutex;
hwloc_topology_t g_io_topology = nullptr;  // discovered with I/O objects, kept until exit
bool g_io_tried = false;
pmix_status_t g_io_status = PMIX_SUCCESS;

pmix_device_type_t type_of(hwloc_obj_osdev_type_t t) {
    switch (t) {
        case HWLOC_OBJ_OSDEV_BLOCK:
            return PMIX_DEVTYPE_BLOCK;
        case HWLOC_OBJ_OSDEV_GPU:
            return PMIX_DEVTYPE_GPU;
        case HWLOC_OBJ_OSDEV_NETWORK:
            return PMIX_DEVTYPE_NETWORK;
        case HWLOC_OBJ_OSDEV_OPENFABRICS:
            return PMIX_DEVTYPE_OPENFABRICS;
        case HWLOC_OBJ_OSDEV_DMA:
            return PMIX_DEVTYPE_DMA;
        case HWLOC_OBJ_OSDEV_COPROC:
            return PMIX_DEVTYPE_COPROC;
    }
    return PMIX_DEVTYPE_UNKNOWN;
}

bool wanted(hwloc_obj_t obj, pmix_device_type_t types) {
    const pmix_device_type_t t = type_of(obj->attr->osdev.type);
    return t != PMIX_DEVTYPE_UNKNOWN && (types == 0 || (t & types) != 0);
}

hwloc_obj_t next_osdev(hwloc_topology_t topology, hwloc_obj_t prev) {
    return hwloc_get_next_osdev(topology, prev);
}

bool has_osdevs(hwloc_topology_t topology) {
    for (hwloc_obj_t o = next_osdev(topology, nullptr); o != nullptr; o = next_osdev(topology, o))
        if (type_of(o->attr->osdev.type) != PMIX_DEVTYPE_UNKNOWN) return true;
    return false;
}

const char *info(hwloc_obj_t obj, const char *name) {
    for (unsigned i = 0; i < obj->infos_count; ++i)
        if (std::string_view(obj->infos[i].name) == name) return obj->infos[i].value;
    return nullptr;
}

std::string hostname() {
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
    return name;
}

}  // namespace

void *device_topology(pmix_status_t *status) {
    pmix_status_t st = PMIX_SUCCESS;
    auto *own = static_cast<hwloc_topology_t>(local_topology(&st));
    if (own != nullptr && has_osdevs(own)) {
        if (status != nullptr) *status = PMIX_SUCCESS;
        return own;
    }
    std::lock_guard lock(g_mutex);
    if (!g_io_tried) {
        g_io_tried = true;
        hwloc_topology_t topology = nullptr;
        if (hwloc_topology_init(&topology) != 0) {
            g_io_status = PMIX_ERR_NOT_SUPPORTED;  // no libhwloc at run time
        } else if (hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) !=
                       0 ||
                   hwloc_topology_load(topology) != 0) {
            hwloc_topology_destroy(topology);
            g_io_status = PMIX_ERROR;
        } else {
            g_io_topology = topology;
        }
    }
    if (status != nullptr) *status = g_io_status;
    return g_io_topology;
}

std::vector<OsDevice> os_devices(void *topology, pmix_device_type_t types) {
    std::vector<OsDevice> out;
    auto *topo = static_cast<hwloc_topology_t>(topology);
    if (topo == nullptr) return out;
    for (hwloc_obj_t o = next_osdev(topo, nullptr); o != nullptr; o = next_osdev(topo, o)) {
        if (!wanted(o, types) || o->name == nullptr) continue;
        OsDevice dev;
        dev.osname = o->name;
        dev.type = type_of(o->attr->osdev.type);
        for (hwloc_obj_t p = o->parent; p != nullptr; p = p->parent) {
            if (p->type != HWLOC_OBJ_PCI_DEVICE) continue;
            char id[32];
            std::snprintf(id, sizeof(id), "%04x:%02x:%02x.%01x", p->attr->pcidev.domain,
                          p->attr->pcidev.bus, p->attr->pcidev.dev, p->attr->pcidev.func);
            dev.pci_id = id;
            dev.pci_vendor = p->attr->pcidev.vendor_id;
            dev.pci_device = p->attr->pcidev.device_id;
            break;
        }
        if (const char *a = info(o, "Address")) dev.address = a;
        out.push_back(std::move(dev));
    }
    return out;
}

std::string device_uuid(const std::string &osname) {
    static const std::string host = hostname();
    return host + ":" + osname;
}

pmix_status_t device_distances(void *topology, const void *cpuset, pmix_device_type_t types,
                               const std::string &device, std::vector<DeviceDistance> &out) {
    out.clear();
    auto *topo = static_cast<hwloc_topology_t>(topology);
    auto *set = static_cast<hwloc_const_bitmap_t>(cpuset);
    if (topo == nullptr || set == nullptr) return PMIX_ERR_BAD_PARAM;
    // The PUs of the cpuset that this topology has.
    std::vector<hwloc_obj_t> pus;
    for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i))
        if (hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, static_cast<unsigned>(i)))
            pus.push_back(pu);
    if (pus.empty()) return PMIX_ERR_BAD_PARAM;
    for (hwloc_obj_t o = next_osdev(topo, nullptr); o != nullptr; o = next_osdev(topo, o)) {
        if (!wanted(o, types) || o->name == nullptr) continue;
        if (!device.empty() && device != o->name && device != device_uuid(o->name)) continue;
        hwloc_obj_t where = hwloc_get_non_io_ancestor_obj(topo, o);
        if (where == nullptr) continue;
        DeviceDistance d;
        d.osname = o->name;
        d.type = type_of(o->attr->osdev.type);
        d.mindist = std::numeric_limits<std::uint16_t>::max();
        d.maxdist = 0;
        for (hwloc_obj_t pu : pus) {
            hwloc_obj_t common = hwloc_get_common_ancestor_obj(topo, pu, where);
            if (common == nullptr) continue;
            const int levels = pu->depth - common->depth;
            const auto dist = static_cast<std::uint16_t>(levels < 0 ? 0 : levels);
            if (dist < d.mindist) d.mindist = dist;
            if (dist > d.maxdist) d.maxdist = dist;
        }
        if (d.maxdist < d.mindist) d.maxdist = d.mindist;  // no PU reached it: both unknown
        out.push_back(std::move(d));
    }
    return PMIX_SUCCESS;
}

std::string topology_signature(void *topology) {
    auto *topo = static_cast<hwloc_topology_t>(topology);
    if (topo == nullptr) return {};
    struct Kind {
        hwloc_obj_type_t type;
        const char *tag;
    };
    static constexpr Kind kKinds[] = {
        {HWLOC_OBJ_PACKAGE, "SK"}, {HWLOC_OBJ_NUMANODE, "NM"}, {HWLOC_OBJ_L3CACHE, "L3"},
        {HWLOC_OBJ_L2CACHE, "L2"}, {HWLOC_OBJ_L1CACHE, "L1"},  {HWLOC_OBJ_CORE, "CR"},
        {HWLOC_OBJ_PU, "HT"},
    };
    std::string out;
    for (const Kind &k : kKinds) {
        const int n = hwloc_get_nbobjs_by_type(topo, k.type);
        if (n <= 0) continue;
        if (!out.empty()) out += ':';
        out += k.tag;
        out += std::to_string(n);
    }
    return out;
}

std::string topology_xml(void *topology) {
    auto *topo = static_cast<hwloc_topology_t>(topology);
    if (topo == nullptr) return {};
    char *buffer = nullptr;
    int length = 0;
    if (hwloc_topology_export_xmlbuffer(topo, &buffer, &length, 0) != 0 || buffer == nullptr)
        return {};
    std::string xml(buffer, length > 0 ? static_cast<std::size_t>(length - 1) : 0);
    hwloc_free_xmlbuffer(topo, buffer);
    return xml;
}

}  // namespace pmixpp::runtime
