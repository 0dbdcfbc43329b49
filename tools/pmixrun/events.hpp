// pmixrun's side of event notification: the host upcalls (register_events,
// deregister_events, notify_event) and the events pmixrun raises about the
// processes it runs (framework/event/README.md, docs/events.md).
//
// pmixrun is the only host on its node and there is no other node: an event
// whose range leaves the node has nowhere further to go, so notify_event
// accepts it (the library already delivered it to the local clients in
// range). Environment events: pmixrun has no source of them besides
// PMIx_Notify_event, so register_events accepts every registration.
//
// Threads: the upcalls come on the library's progress thread; the raise_*
// functions are called from the upcalls or the main loop and only post a
// non-blocking PMIx_Notify_event.
#pragma once

#include <pmix_server.h>

#include <string>
#include <vector>

namespace pmixrun {

// Sets register_events, deregister_events and notify_event in `module`.
void install_event_services(pmix_server_module_t &module);
// PMIX_ERR_PROC_ABORTED to the job of `proc` (PMIx_Abort), affected proc = proc.
void raise_proc_aborted(const pmix_proc_t &proc, int status, const char *msg);
// PMIX_EVENT_PROC_TERMINATED to the job (abnormal end): PMIX_EXIT_CODE and
// PMIX_PROC_TERM_STATUS (PMIX_ERR_PROC_ABORTED_BY_SIG for a signal).
void raise_proc_terminated(const std::string &nspace, pmix_rank_t rank, int exit_code,
                           bool by_signal);
// The same event for the spawner `requester` of the process's job (range
// CUSTOM: requester; PMIX_NOTIFY_PROC_TERMINATION / _ABNORMAL_TERMINATION).
void raise_proc_terminated_for(const pmix_proc_t &requester, const std::string &nspace,
                               pmix_rank_t rank, int exit_code, bool by_signal);
// PMIX_EVENT_JOB_END for `requester` (PMIX_NOTIFY_COMPLETION): PMIX_NSPACE,
// PMIX_JOB_TERM_STATUS, PMIX_EVENT_TIMESTAMP, and when a process failed the
// first one's PMIX_PROCID and PMIX_EXIT_CODE; affected proc nspace:WILDCARD.
void raise_job_end(const pmix_proc_t &requester, const std::string &nspace,
                   pmix_status_t term_status, const pmix_proc_t *first_failed, int exit_code);

// tools (issue 15): PMIX_READY_FOR_DEBUG for `requester` (range CUSTOM)
// once the processes `ranks` of job `nspace` stopped in the application
// (PMIX_DEBUG_STOP_IN_APP): PMIX_EVENT_AFFECTED_PROCS, PMIX_NSPACE,
// PMIX_BREAKPOINT.
void raise_ready_for_debug(const pmix_proc_t &requester, const std::string &nspace,
                           const std::vector<pmix_rank_t> &ranks, const std::string &breakpoint);

}  // namespace pmixrun
