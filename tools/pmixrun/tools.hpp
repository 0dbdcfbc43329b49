// pmixrun's side of tool connections (docs/tools.md): the tool_connected
// upcall. pmixrun accepts tools of its own user only; a tool that names
// itself (PMIX_TOOL_NSPACE / PMIX_TOOL_RANK) keeps that identity, any other
// gets a namespace unique on this host ("<hostname>.pmixrun-<pid>.tool-<n>",
// rank 0). The library refuses an identity already in use.
//
// And the query upcall for what only pmixrun knows (docs/tools.md,
// "Queries"): PMIX_QUERY_PROC_TABLE / _LOCAL_PROC_TABLE with every field
// (executable, pid, exit code, state), PMIX_QUERY_JOB_STATUS,
// PMIX_QUERY_SPAWN_SUPPORT. The launcher reports each process's start and
// end (tools_proc_launching, tools_spawn_recorded, tools_proc_ended).
#pragma once

#include <pmix_server.h>

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace pmixrun {

// Sets tool_connected and query in `module`.
void install_tool_services(pmix_server_module_t &module);
// After PMIx_server_init: PMIx_Register_attributes of what those upcalls and
// spawn act on (a tool's PMIX_HOST_ATTRIBUTES query returns them).
pmix_status_t register_tool_attributes();
// The launcher's reports (main thread); the query upcall reads them.
// Before the launch: the rank is in the table, launching (pid 0).
void tools_proc_launching(const pmix_proc_t &proc, const std::string &program);
// Runs spawn() (which returns the new pid, or <= 0 on failure) and records the
// process as started, both under the table's lock.
pid_t tools_spawn_recorded(const pmix_proc_t &proc, const std::string &program,
                           const std::function<pid_t()> &spawn);
// How many processes of job `nspace` the table holds (0: unknown job).
std::size_t tools_job_procs(const std::string &nspace);
void tools_proc_ended(const std::string &nspace, pmix_rank_t rank, int code, bool by_signal);

// PMIX_DEBUG_STOP_IN_INIT (`in_init`) or PMIX_DEBUG_STOP_IN_APP
// (docs/tools.md, "Debuggers"): before the launch, the ranks of job
// `nspace` told to stop in PMIx_Init or at an application-defined point,
// and the process that spawned the job (main thread).
void tools_debug_stops(const std::string &nspace, const pmix_proc_t &spawner,
                       std::vector<pmix_rank_t> ranks, bool in_init);
// A process's PMIX_READY_FOR_DEBUG (the notify_event upcall; progress
// thread; PMIX_BREAKPOINT "pmix-init": stopped in init, else in the app):
// once every targeted rank of its job announced it, pmixrun raises
// PMIX_READY_FOR_DEBUG to the spawner (events.hpp), once.
void tools_ready_for_debug(const pmix_proc_t &source, const pmix_info_t info[], size_t ninfo);

}  // namespace pmixrun
