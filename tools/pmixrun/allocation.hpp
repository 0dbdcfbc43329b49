// pmixrun's allocate upcall (PMIx_Allocation_request): pmixrun's allocation is
// this one node, held until the job ends, and it has no scheduler behind it.
// Every answer's results describe that allocation: PMIX_ALLOC_ID
// ("pmixrun.<pid>"), PMIX_ALLOC_NODE_LIST (this host's name),
// PMIX_ALLOC_NUM_NODES (1), PMIX_ALLOC_NUM_CPUS (the CPUs online), and the
// request's PMIX_ALLOC_REQ_ID when given.
//   PMIX_ALLOC_EXTEND asking for no resource: granted, nothing changes (the
//     way to query the current allocation);
//   PMIX_ALLOC_NEW, PMIX_ALLOC_EXTEND with resources, PMIX_ALLOC_RELEASE,
//     PMIX_ALLOC_REAQUIRE, a directive of the host's range (>= 128):
//     PMIX_ERR_NOT_SUPPORTED with a PMIX_EVENT_TEXT_MESSAGE saying why.
// docs/job_control.md. Threads: the library's progress thread; no state.
#pragma once

#include <pmix_server.h>

namespace pmixrun {

// Sets allocate in `module`.
void install_allocation(pmix_server_module_t &module);

}  // namespace pmixrun
