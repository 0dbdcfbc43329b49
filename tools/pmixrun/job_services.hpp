// pmixrun's job control and log services: the host side of PMIx_Job_control
// and PMIx_Log for the processes it started.
//
// Job control: PMIX_JOB_CTRL_KILL (SIGKILL), PMIX_JOB_CTRL_TERMINATE
// (SIGTERM) and PMIX_JOB_CTRL_SIGNAL (the given signal) on the targets (none:
// the requester's whole job; PMIX_RANK_WILDCARD: every rank of that job).
// Any other directive: PMIX_ERR_NOT_SUPPORTED. A killed process ends the job
// as any failing process does (pmixrun's exit status is 128+signal).
//
// Log: PMIX_LOG_STDERR and PMIX_LOG_MSG go to pmixrun's stderr,
// PMIX_LOG_STDOUT to its stdout; PMIX_LOG_ONCE stops after the first entry
// written. A request with no such entry: PMIX_ERR_NOT_SUPPORTED.
//
// Threads: upcalls come on the library's progress thread; the process table
// is filled by the main loop; one mutex guards it.
#pragma once

#include <pmix_server.h>

#include <sys/types.h>

#include <string>

namespace pmixrun {

// Sets job_control and log in `module`.
void install_job_services(pmix_server_module_t &module);
// The process table: which pid runs which rank.
void job_services_started(const pmix_proc_t &proc, pid_t pid);
// The process exited: forgets its pid and tells the data server
// (data_server_proc_ended).
void job_services_ended(const std::string &nspace, pmix_rank_t rank);

}  // namespace pmixrun
