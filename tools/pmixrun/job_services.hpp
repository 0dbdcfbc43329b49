// pmixrun's job control and log services: the host side of PMIx_Job_control
// and PMIx_Log for the processes it started.
//
// Job control: job_control.hpp (the upcall), over the process table kept
// here. A killed process ends the job as any failing process does (pmixrun's
// exit status is 128+signal).
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
#include <vector>

namespace pmixrun {

struct RunningProc {
    pmix_proc_t proc;
    pid_t pid;
};

// Sets job_control and log in `module`.
void install_job_services(pmix_server_module_t &module);
// The process table: which pid runs which rank.
void job_services_started(const pmix_proc_t &proc, pid_t pid);
// The running processes `target` names: its rank, or every rank of its
// namespace for PMIX_RANK_WILDCARD. Any thread.
std::vector<RunningProc> job_services_find(const pmix_proc_t &target);
// The process exited: forgets its pid and tells the data server
// (data_server_proc_ended) and job control (job_control_proc_ended).
void job_services_ended(const std::string &nspace, pmix_rank_t rank);

}  // namespace pmixrun
