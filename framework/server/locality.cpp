// PMIx_server_generate_locality_string and _cpuset_string: what a host puts
// in PMIX_LOCALITY_STRING and PMIX_CPUSET for each local process when it
// registers a namespace (docs/network.md). The locality is computed against
// this process's topology (runtime/topology.hpp), loaded once.
#include <hwloc.h>
#include <pmix_server.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/topology.hpp"

namespace {

bool usable(const pmix_cpuset_t *cpuset) {
    return cpuset != nullptr && cpuset->bitmap != nullptr && cpuset->source != nullptr &&
           ::strncasecmp(cpuset->source, "hwloc", 5) == 0;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset,
                                                               char **locality) {
    if (locality == nullptr) return PMIX_ERR_BAD_PARAM;
    *locality = nullptr;
    if (!usable(cpuset)) return PMIX_ERR_BAD_PARAM;
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
    if (!usable(cpuset)) return PMIX_ERR_BAD_PARAM;
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
