// PMIx_Get of the network keys a process can answer without its server
// storing them (client/network.hpp, docs/network.md).
#include <pmix.h>

#include <cstdlib>
#include <optional>
#include <string_view>

#include "client/client.hpp"
#include "client/network.hpp"

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
