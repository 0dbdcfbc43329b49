// pmixrun's publish/lookup data store: the host side of PMIx_Publish,
// PMIx_Lookup and PMIx_Unpublish for the jobs of this one node.
//
// Ranges: pmixrun is one node and one session, so PMIX_RANGE_PROC_LOCAL (the
// publisher only) and PMIX_RANGE_NAMESPACE (its job) restrict; every other
// range means "everyone here". A key may be published once per range domain
// (PMIX_ERR_DUPLICATE_KEY otherwise). Persistence: PMIX_PERSIST_FIRST_READ is
// deleted by the first lookup that returns it, PMIX_PERSIST_PROC when its
// publisher finalizes or exits, PMIX_PERSIST_APP when its job ends (the
// default), PMIX_PERSIST_SESSION / _INDEF when pmixrun ends.
// Lookups with PMIX_WAIT are kept until the keys are published, their
// PMIX_TIMEOUT expires (PMIX_ERR_TIMEOUT), the requester ends or pmixrun
// shuts down (PMIX_ERR_NOT_FOUND).
//
// Threads: upcalls come on the library's progress thread, the rest from
// pmixrun's main loop and its timer thread; one mutex guards the store. Completion callbacks are
// called outside it.
#pragma once

#include <pmix_server.h>

#include <string>

namespace pmixrun {

// Sets publish, lookup, unpublish and client_finalized in `module`, and
// starts the thread that expires timed lookups.
void install_data_server(pmix_server_module_t &module);
// The process ended (finalized or exited): its PERSIST_PROC data goes, its
// waiting lookups are answered.
void data_server_proc_ended(const pmix_proc_t &proc);
// The job ended: its PERSIST_APP and PERSIST_PROC data go.
void data_server_job_ended(const std::string &nspace);
// Before PMIx_server_finalize: answers every waiting lookup, stops the thread.
void data_server_shutdown();

}  // namespace pmixrun
