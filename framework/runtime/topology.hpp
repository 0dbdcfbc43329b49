// The node's hwloc topology, loaded once per process, and the locality and
// cpuset strings built from it (docs/network.md, "Topology and locality").
#pragma once

#include <pmix_common.h>

#include <string>

namespace pmixpp::runtime {

// The process's topology (an hwloc_topology_t), discovered on the first call and
// kept until exit; nullptr with *status set when hwloc cannot load one. The
// loading is thread-safe; the topology is read-only for everyone.
void *local_topology(pmix_status_t *status);

// True once a topology is loaded (local_topology or adopt_topology_xml).
bool topology_loaded() noexcept;

// Makes the topology the process's server shared (hwloc XML: a file path when
// `is_file`, else the XML itself) the process's topology, unless one is
// loaded already. An unreadable XML leaves nothing loaded (BAD_PARAM), so the
// caller can fall back to discovery.
pmix_status_t adopt_topology_xml(const std::string &xml, bool is_file);

// Makes `topology` (an hwloc_topology_t the caller keeps alive until exit,
// e.g. a host's PMIX_TOPOLOGY2) the process's topology, unless one is loaded
// already (then that one stays: SUCCESS either way). It is never destroyed by
// the library.
pmix_status_t adopt_topology(void *topology);

// True when `topology` is the one local_topology() owns: PMIx_Topology_destruct
// must not destroy it (the library cleans it up, as the standard says).
bool is_local_topology(const void *topology) noexcept;

// The locality string of `bitmap` (an hwloc_bitmap_t of PUs) in `topology`:
// "SK<list>:L3<list>:L2<list>:L1<list>:CR<list>:HT<list>:NM<list>", each list
// the logical indexes of the objects of that type the bitmap overlaps (types the
// machine lacks or the bitmap touches nowhere are left out).
pmix_status_t locality_string(void *topology, const void *bitmap, std::string &out);

// The PMIX_LOCALITY_SHARE_* bits two locality strings share (plus
// PMIX_LOCALITY_SHARE_NODE: both are of this node). BAD_PARAM when either is
// malformed.
pmix_status_t relative_locality(const char *a, const char *b, pmix_locality_t *out);

}  // namespace pmixpp::runtime
