// pmixrun as the job-control host: the job_control upcall for the processes it
// started (docs/job_control.md is the user's description; this is the contract).
//
// Actions (exactly one per request) on the targets (the server turns "no
// targets" into the requestor's namespace; PMIX_RANK_WILDCARD: every running
// rank of that namespace; every target must name a running process, else
// PMIX_ERR_NOT_FOUND and nothing is done):
//   PMIX_JOB_CTRL_PAUSE      SIGSTOP          PMIX_JOB_CTRL_RESUME    SIGCONT
//   PMIX_JOB_CTRL_SIGNAL     the given signal PMIX_JOB_CTRL_KILL      SIGKILL
//   PMIX_JOB_CTRL_TERMINATE  SIGTERM
//   PMIX_JOB_CTRL_CANCEL     withdraws the requestor's tracked request with that
//                            PMIX_JOB_CTRL_ID, or all of them (no id)
//   PMIX_JOB_CTRL_CHECKPOINT asks each target by the first method it declared
//                            (its signal, or the PMIX_JCTRL_CHECKPOINT event
//                            to it alone); answered when every target notified
//                            PMIX_JCTRL_CHECKPOINT_COMPLETE, when one ends
//                            (PMIX_ERR_PROC_CHECKPOINT), at the timeout
//                            ("pmix.jctrl.ckptsig" beside it: PMIX_ERR_TIMEOUT)
//                            or when cancelled (PMIX_ERR_JOB_CANCELED); a target
//                            without a method: PMIX_ERR_PROC_CHECKPOINT at once
// Declarations about the requestor itself (its targets are ignored, as in the
// seed's sample program): PMIX_JOB_CTRL_CHECKPOINT_METHOD (the methods are
// kept here, per process, until it ends; a new declaration replaces the
// earlier one) and PMIX_JOB_CTRL_PREEMPTIBLE (true: recorded; false:
// withdrawn). SIGUSR1 to pmixrun sends PMIX_JCTRL_PREEMPT_ALERT to every
// process that declared itself preemptible (and does nothing else).
// Refused: PMIX_JOB_CTRL_PROVISION(_IMAGE), PMIX_JOB_CTRL_RESTART and any
// unknown directive (PMIX_ERR_NOT_SUPPORTED); two actions in one request
// (PMIX_ERR_BAD_PARAM). Every refusal is answered through the callback with a
// PMIX_EVENT_TEXT_MESSAGE result saying why.
//
// The logic is JobController (job_controller.hpp); this file gives it
// pmixrun's real effects. Threads: the upcall and the checkpoint-complete handler run on the
// library's progress thread, job_control_tick and job_control_proc_ended on
// pmixrun's main loop; one mutex guards the tracked requests, and callbacks
// and notifications are made outside it.
#pragma once

#include <pmix_server.h>

#include <chrono>

namespace pmixrun {

// pmix_server_module_t::job_control.
pmix_status_t job_control_upcall(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                 size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata);
// After PMIx_server_init: registers pmixrun's handler for
// PMIX_JCTRL_CHECKPOINT_COMPLETE and catches SIGUSR1 (preemption alert).
void job_control_start();
// Main loop, often: sends the preemption alerts SIGUSR1 asked for; fails
// checkpoints whose timeout expired.
void job_control_tick();
// When job_control_tick has work next (a checkpoint's timeout), or
// time_point::max(): the main loop sleeps until then at the latest.
std::chrono::steady_clock::time_point job_control_next_deadline();
// A process ended: its pauses, declarations and pending checkpoints go.
void job_control_proc_ended(const pmix_proc_t &proc);

}  // namespace pmixrun
