// Keys of the network area a process can Get without its server storing them
// (docs/network.md): PMIX_DEVICE_DISTANCES of a process of this node, derived
// from its PMIX_CPUSET when the host registered none. Any thread.
#pragma once

#include <pmix_common.h>

#include <optional>
#include <span>

namespace pmixpp::client {

// Called on a datastore miss (the host's value wins): the answer to
// PMIx_Get(target, key) when `key` is one of these keys (a malloc'd value in
// *value on success); std::nullopt for every other key.
std::optional<pmix_status_t> network_get(const pmix_proc_t &target, const char *key,
                                         std::span<const pmix_info_t> qualifiers,
                                         pmix_value_t **value);

}  // namespace pmixpp::client
