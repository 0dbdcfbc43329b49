// The node's hwloc topology and the locality strings (topology.hpp).
#include "runtime/topology.hpp"

#include <hwloc.h>

#include <atomic>
#include <mutex>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace pmixpp::runtime {

namespace {

// The process's topology: loaded once (discovered, or from the XML its
// server shared), kept until exit.
std::mutex g_mutex;
std::atomic<void *> g_topology{nullptr};
pmix_status_t g_status = PMIX_SUCCESS;
bool g_tried = false;

// Loads a topology: discovery when `xml` is empty, else from that XML (a file
// when `is_file`), then marked as this system's (it describes this node).
hwloc_topology_t load(const std::string &xml, bool is_file, pmix_status_t &status) {
    hwloc_topology_t topology = nullptr;
    if (hwloc_topology_init(&topology) != 0) {
        status = PMIX_ERR_NOT_SUPPORTED;  // no libhwloc at run time
        return nullptr;
    }
    int rc = 0;
    if (!xml.empty()) {
        rc = is_file ? hwloc_topology_set_xml(topology, xml.c_str())
                     : hwloc_topology_set_xmlbuffer(topology, xml.c_str(),
                                                    static_cast<int>(xml.size()) + 1);
        if (rc == 0) rc = hwloc_topology_set_flags(topology, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
    }
    if (rc != 0 || hwloc_topology_load(topology) != 0) {
        hwloc_topology_destroy(topology);
        status = xml.empty() ? PMIX_ERROR : PMIX_ERR_BAD_PARAM;
        return nullptr;
    }
    status = PMIX_SUCCESS;
    return topology;
}

// The object types a locality string names, and their two-letter tags.
struct Level {
    hwloc_obj_type_t type;
    const char *tag;
    pmix_locality_t bit;
};

// In the order Open MPI 4.1's ORTE writes them (NUMA last), so the strings a
// host generates with us are the ones ORTE gives (tests/dropin).
constexpr Level kLevels[] = {
    {HWLOC_OBJ_PACKAGE, "SK", PMIX_LOCALITY_SHARE_PACKAGE},
    {HWLOC_OBJ_L3CACHE, "L3", PMIX_LOCALITY_SHARE_L3CACHE},
    {HWLOC_OBJ_L2CACHE, "L2", PMIX_LOCALITY_SHARE_L2CACHE},
    {HWLOC_OBJ_L1CACHE, "L1", PMIX_LOCALITY_SHARE_L1CACHE},
    {HWLOC_OBJ_CORE, "CR", PMIX_LOCALITY_SHARE_CORE},
    {HWLOC_OBJ_PU, "HT", PMIX_LOCALITY_SHARE_HWTHREAD},
    {HWLOC_OBJ_NUMANODE, "NM", PMIX_LOCALITY_SHARE_NUMA},
};

struct Bitmap {
    hwloc_bitmap_t map = hwloc_bitmap_alloc();
    Bitmap() = default;
    Bitmap(const Bitmap &) = delete;
    Bitmap &operator=(const Bitmap &) = delete;
    ~Bitmap() {
        if (map != nullptr) hwloc_bitmap_free(map);
    }
};

// Split "TAGlist:TAGlist:..." into one bitmap per known tag; false when a
// field has an unknown tag or an unreadable list.
bool parse_locality(const char *text, Bitmap (&maps)[std::size(kLevels)],
                    bool (&present)[std::size(kLevels)]) {
    std::string_view rest(text);
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const std::string_view field = rest.substr(0, colon);
        rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
        if (field.empty()) continue;
        if (field.size() < 3) return false;
        std::size_t level = std::size(kLevels);
        for (std::size_t i = 0; i < std::size(kLevels); ++i)
            if (field.substr(0, 2) == kLevels[i].tag) level = i;
        if (level == std::size(kLevels) || maps[level].map == nullptr) return false;
        const std::string list(field.substr(2));
        if (list.find_first_not_of("0123456789,-") != std::string::npos) return false;
        if (hwloc_bitmap_list_sscanf(maps[level].map, list.c_str()) != 0) return false;
        present[level] = true;
    }
    return true;
}

}  // namespace

void *local_topology(pmix_status_t *status) {
    std::lock_guard lock(g_mutex);
    if (!g_tried) {
        g_tried = true;
        g_topology.store(load({}, false, g_status), std::memory_order_release);
    }
    if (status != nullptr) *status = g_status;
    return g_topology.load(std::memory_order_acquire);
}

bool topology_loaded() noexcept {
    return g_topology.load(std::memory_order_acquire) != nullptr;
}

pmix_status_t adopt_topology_xml(const std::string &xml, bool is_file) {
    std::lock_guard lock(g_mutex);
    if (g_tried) return g_topology.load() != nullptr ? PMIX_SUCCESS : g_status;
    pmix_status_t status = PMIX_SUCCESS;
    hwloc_topology_t topology = load(xml, is_file, status);
    if (topology == nullptr) return status;  // the caller may discover instead
    g_tried = true;
    g_status = PMIX_SUCCESS;
    g_topology.store(topology, std::memory_order_release);
    return PMIX_SUCCESS;
}

pmix_status_t adopt_topology(void *topology) {
    if (topology == nullptr) return PMIX_ERR_BAD_PARAM;
    std::lock_guard lock(g_mutex);
    if (g_tried && g_topology.load() != nullptr) return PMIX_SUCCESS;
    g_tried = true;
    g_status = PMIX_SUCCESS;
    g_topology.store(topology, std::memory_order_release);
    return PMIX_SUCCESS;
}

bool is_local_topology(const void *topology) noexcept {
    return topology != nullptr && topology == g_topology.load(std::memory_order_acquire);
}

pmix_status_t locality_string(void *topology, const void *bitmap, std::string &out) {
    if (topology == nullptr || bitmap == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *topo = static_cast<hwloc_topology_t>(topology);
    auto *set = static_cast<hwloc_const_bitmap_t>(bitmap);
    out.clear();
    for (const Level &level : kLevels) {
        const int depth = hwloc_get_type_depth(topo, level.type);
        if (depth == HWLOC_TYPE_DEPTH_UNKNOWN || depth == HWLOC_TYPE_DEPTH_MULTIPLE) continue;
        Bitmap covered;
        if (covered.map == nullptr) return PMIX_ERR_NOMEM;
        const unsigned count = hwloc_get_nbobjs_by_depth(topo, depth);
        for (unsigned i = 0; i < count; ++i) {
            hwloc_obj_t obj = hwloc_get_obj_by_depth(topo, depth, i);
            if (obj != nullptr && obj->cpuset != nullptr &&
                hwloc_bitmap_intersects(obj->cpuset, set))
                hwloc_bitmap_set(covered.map, obj->logical_index);
        }
        if (hwloc_bitmap_iszero(covered.map)) continue;
        char *list = nullptr;
        if (hwloc_bitmap_list_asprintf(&list, covered.map) < 0 || list == nullptr)
            return PMIX_ERR_NOMEM;
        if (!out.empty()) out += ':';
        out += level.tag;
        out += list;
        std::free(list);
    }
    return PMIX_SUCCESS;
}

pmix_status_t relative_locality(const char *a, const char *b, pmix_locality_t *out) {
    if (a == nullptr || b == nullptr || out == nullptr) return PMIX_ERR_BAD_PARAM;
    Bitmap maps_a[std::size(kLevels)];
    Bitmap maps_b[std::size(kLevels)];
    bool present_a[std::size(kLevels)] = {};
    bool present_b[std::size(kLevels)] = {};
    if (maps_a[0].map == nullptr) return PMIX_ERR_NOT_SUPPORTED;  // no libhwloc
    if (!parse_locality(a, maps_a, present_a) || !parse_locality(b, maps_b, present_b))
        return PMIX_ERR_BAD_PARAM;
    pmix_locality_t result = PMIX_LOCALITY_SHARE_NODE;
    for (std::size_t i = 0; i < std::size(kLevels); ++i)
        if (present_a[i] && present_b[i] && hwloc_bitmap_intersects(maps_a[i].map, maps_b[i].map))
            result |= kLevels[i].bit;
    *out = result;
    return PMIX_SUCCESS;
}

}  // namespace pmixpp::runtime
