// PMIx_Load_topology, PMIx_Get_cpuset, PMIx_Parse_cpuset_string and
// PMIx_Get_relative_locality: callable by a client, a tool or a server, before
// or after init (they need no connection). The topology is this process's own
// topology, loaded once (runtime/topology.hpp): the one its server shared,
// else hwloc's discovery of this node (docs/network.md).
#include <hwloc.h>
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "client/client.hpp"
#include "client/network.hpp"
#include "runtime/init_state.hpp"
#include "runtime/topology.hpp"

namespace {

// A client whose server shared its topology (PMIX_TOPOLOGY_FILE: an hwloc XML
// file, or PMIX_HWLOC_XML_V2: the XML itself, in the job's info) loads that
// instead of discovering the machine again (docs/network.md).
void adopt_shared_topology() {
    using namespace pmixpp::runtime;
    if (init_count(Face::client) == 0 || topology_loaded()) return;
    pmix_proc_t job = pmixpp::client::Client::instance().self();
    job.rank = PMIX_RANK_WILDCARD;
    pmix_info_t directives[2];
    bool yes = true;
    PMIX_INFO_LOAD(&directives[0], PMIX_IMMEDIATE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&directives[1], PMIX_OPTIONAL, &yes, PMIX_BOOL);
    for (const char *key : {PMIX_TOPOLOGY_FILE, PMIX_HWLOC_XML_V2}) {
        pmix_value_t *value = nullptr;
        if (PMIx_Get(&job, key, directives, 2, &value) != PMIX_SUCCESS || value == nullptr)
            continue;
        pmix_status_t rc = PMIX_ERR_BAD_PARAM;
        if (value->type == PMIX_STRING && value->data.string != nullptr)
            rc =
                adopt_topology_xml(value->data.string, key == std::string_view(PMIX_TOPOLOGY_FILE));
        PMIX_VALUE_RELEASE(value);
        if (rc == PMIX_SUCCESS) break;  // else: the next key, or discovery
    }
    PMIX_INFO_DESTRUCT(&directives[0]);
    PMIX_INFO_DESTRUCT(&directives[1]);
}

bool names_hwloc(const char *source) {
    return source != nullptr && ::strncasecmp(source, "hwloc", 5) == 0;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Load_topology(pmix_topology_t *topo) {
    if (topo == nullptr) return PMIX_ERR_BAD_PARAM;
    if (topo->source != nullptr && !names_hwloc(topo->source)) return PMIX_ERR_NOT_SUPPORTED;
    adopt_shared_topology();
    pmix_status_t status = PMIX_SUCCESS;
    void *topology = pmixpp::runtime::local_topology(&status);
    if (topology == nullptr) return status;
    if (topo->source == nullptr) {
        topo->source = ::strdup("hwloc");
        if (topo->source == nullptr) return PMIX_ERR_NOMEM;
    }
    topo->topology = topology;  // read-only, owned by the library
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t *cpuset, pmix_bind_envelope_t ref) {
    if (cpuset == nullptr) return PMIX_ERR_BAD_PARAM;
    int flags = 0;
    if (ref == PMIX_CPUBIND_PROCESS) {
        flags = HWLOC_CPUBIND_PROCESS;
    } else if (ref == PMIX_CPUBIND_THREAD) {
        flags = HWLOC_CPUBIND_THREAD;
    } else {
        return PMIX_ERR_BAD_PARAM;
    }
    pmix_status_t status = PMIX_SUCCESS;
    auto *topology = static_cast<hwloc_topology_t>(pmixpp::runtime::local_topology(&status));
    if (topology == nullptr) return status;
    hwloc_bitmap_t bitmap = hwloc_bitmap_alloc();
    if (bitmap == nullptr) return PMIX_ERR_NOMEM;
    if (hwloc_get_cpubind(topology, bitmap, flags) != 0) {
        hwloc_bitmap_free(bitmap);
        return PMIX_ERR_NOT_SUPPORTED;  // the OS does not say where we are bound
    }
    char *source = ::strdup("hwloc");
    if (source == nullptr) {
        hwloc_bitmap_free(bitmap);
        return PMIX_ERR_NOMEM;
    }
    cpuset->source = source;
    cpuset->bitmap = bitmap;
    return PMIX_SUCCESS;
}

// Accepts "hwloc:<list>" (what PMIx_server_generate_cpuset_string makes, as
// OpenPMIx 4.2 does) and a bare hwloc list ("0-3,8").
PMIX_EXPORT pmix_status_t PMIx_Parse_cpuset_string(const char *cpuset_string,
                                                   pmix_cpuset_t *cpuset) {
    if (cpuset_string == nullptr || cpuset == nullptr) return PMIX_ERR_BAD_PARAM;
    std::string_view text(cpuset_string);
    if (const auto colon = text.find(':'); colon != std::string_view::npos) {
        if (!names_hwloc(cpuset_string) || colon != 5) return PMIX_ERR_NOT_SUPPORTED;
        text.remove_prefix(colon + 1);
    }
    if (text.empty() || text.find_first_not_of("0123456789,-") != std::string_view::npos)
        return PMIX_ERR_BAD_PARAM;
    hwloc_bitmap_t bitmap = hwloc_bitmap_alloc();
    if (bitmap == nullptr) return PMIX_ERR_NOT_SUPPORTED;  // no libhwloc at run time
    if (hwloc_bitmap_list_sscanf(bitmap, std::string(text).c_str()) != 0) {
        hwloc_bitmap_free(bitmap);
        return PMIX_ERR_BAD_PARAM;
    }
    char *source = ::strdup("hwloc");
    if (source == nullptr) {
        hwloc_bitmap_free(bitmap);
        return PMIX_ERR_NOMEM;
    }
    cpuset->source = source;
    cpuset->bitmap = bitmap;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Get_relative_locality(const char *locality1, const char *locality2,
                                                     pmix_locality_t *locality) {
    return pmixpp::runtime::relative_locality(locality1, locality2, locality);
}

}  // extern "C"

namespace pmixpp::client {

namespace {

// A PMIX_CPUSET value: "hwloc:<list>" or a bare list (PMIx_Parse_cpuset_string).
pmix_status_t cpuset_of(const pmix_proc_t &target, pmix_cpuset_t &cpuset) {
    pmix_value_t *value = nullptr;
    pmix_status_t rc = Client::instance().lookup(target, PMIX_CPUSET, {}, &value);
    if (rc != PMIX_SUCCESS) return rc;
    rc = PMIX_ERR_NOT_FOUND;
    if (value->type == PMIX_STRING && value->data.string != nullptr)
        rc = PMIx_Parse_cpuset_string(value->data.string, &cpuset);
    PMIX_VALUE_RELEASE(value);
    return rc;
}

}  // namespace

std::optional<pmix_status_t> network_get(const pmix_proc_t &target, const char *key,
                                         std::span<const pmix_info_t> qualifiers,
                                         pmix_value_t **value) {
    if (key == nullptr || std::string_view(key) != PMIX_DEVICE_DISTANCES) return std::nullopt;
    if (target.rank == PMIX_RANK_WILDCARD || target.rank == PMIX_RANK_UNDEF)
        return PMIX_ERR_BAD_PARAM;  // distances are a process's
    // Only a process of this node has a PMIX_CPUSET in this datastore.
    pmix_cpuset_t cpuset{};
    if (cpuset_of(target, cpuset) != PMIX_SUCCESS) return PMIX_ERR_NOT_FOUND;
    pmix_device_distance_t *dist = nullptr;
    size_t ndist = 0;
    pmix_status_t rc =
        PMIx_Compute_distances(nullptr, &cpuset, const_cast<pmix_info_t *>(qualifiers.data()),
                               qualifiers.size(), &dist, &ndist);
    PMIx_Cpuset_destruct(&cpuset);
    if (rc != PMIX_SUCCESS) return rc;
    auto *out = static_cast<pmix_value_t *>(std::calloc(1, sizeof(pmix_value_t)));
    auto *array = static_cast<pmix_data_array_t *>(std::calloc(1, sizeof(pmix_data_array_t)));
    if (out == nullptr || array == nullptr) {
        std::free(out);
        std::free(array);
        PMIX_DEVICE_DIST_FREE(dist, ndist);
        return PMIX_ERR_NOMEM;
    }
    array->type = PMIX_DEVICE_DIST;
    array->size = ndist;
    array->array = dist;  // the value owns it now
    out->type = PMIX_DATA_ARRAY;
    out->data.darray = array;
    *value = out;
    return PMIX_SUCCESS;
}

}  // namespace pmixpp::client
