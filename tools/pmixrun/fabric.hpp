// pmixrun's fabric upcall (a client's or tool's PMIx_Fabric_register /
// _update, forwarded by the library): pmixrun is the scheduler of its one
// node, so it answers with the fabric the library describes in pmixrun's own
// process (PMIx_Fabric_register with the caller's directives: this node's
// TCP devices and their cost matrix, docs/network.md "Fabric"). The matrix,
// a pointer into pmixrun's memory, is sent as a PMIX_DATA_ARRAY of
// PMIX_UINT16 (n x n, row-major), which the caller's library turns back into
// a pointer. The library's errors (NOT_FOUND: no device matches) are the
// answer. Threads: the library's progress thread; no state kept.
#pragma once

#include <pmix_server.h>

namespace pmixrun {

// Sets fabric in `module`.
void install_fabric(pmix_server_module_t &module);

}  // namespace pmixrun
