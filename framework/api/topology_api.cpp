// The topology and locality C entry points (docs/network.md):
// PMIx_Load_topology, PMIx_Get_cpuset, PMIx_Parse_cpuset_string,
// PMIx_Get_relative_locality, PMIx_server_generate_locality_string and
// _cpuset_string. Callable by a client, a tool or a server, before or after
// init (they need no connection). The topology is this process's own, loaded
// once (runtime/topology.hpp): the one its server shared, else hwloc's
// discovery of this node.
#include <hwloc.h>
#include <pmix.h>
#include <pmix_server.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "client/client.hpp"
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

// What a host puts in PMIX_LOCALITY_STRING and PMIX_CPUSET for each local
// process when it registers a namespace, computed against this process's
// topology.
namespace {

bool usable_cpuset(const pmix_cpuset_t *cpuset) {
    return cpuset != nullptr && cpuset->bitmap != nullptr && cpuset->source != nullptr &&
           ::strncasecmp(cpuset->source, "hwloc", 5) == 0;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset,
                                                               char **locality) {
    if (locality == nullptr) return PMIX_ERR_BAD_PARAM;
    *locality = nullptr;
    if (!usable_cpuset(cpuset)) return PMIX_ERR_BAD_PARAM;
    pmix_status_t status = PMIX_SUCCESS;
    void *topology = pmixpp::runtime::local_topology(&status);
    if (topology == nullptr) return status;
    std::string text;
    status = pmixpp::runtime::locality_string(topology, cpuset->bitmap, text);
    if (status != PMIX_SUCCESS) return status;
    // An empty string would say "nowhere"; a cpuset outside this node is a caller error.
    if (text.empty()) return PMIX_ERR_BAD_PARAM;
    *locality = ::strdup(text.c_str());
    return *locality != nullptr ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t *cpuset,
                                                             char **cpuset_string) {
    if (cpuset_string == nullptr) return PMIX_ERR_BAD_PARAM;
    *cpuset_string = nullptr;
    if (!usable_cpuset(cpuset)) return PMIX_ERR_BAD_PARAM;
    char *list = nullptr;
    if (hwloc_bitmap_list_asprintf(&list, static_cast<hwloc_const_bitmap_t>(cpuset->bitmap)) < 0 ||
        list == nullptr)
        return PMIX_ERR_NOMEM;
    std::string text = std::string("hwloc:") + list;
    std::free(list);
    *cpuset_string = ::strdup(text.c_str());
    return *cpuset_string != nullptr ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

}  // extern "C"
