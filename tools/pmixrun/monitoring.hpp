// pmixrun's side of process monitoring (docs/monitoring.md): it starts its
// server with PMIX_SERVER_ENABLE_MONITORING, so the library's psensor modules
// watch heartbeats and files, and it acts on their alerts.
//
// An alert (an event carrying PMIX_MONITOR_APP_CONTROL, whatever its status
// code: the requestor chose it) whose requestor did not ask for app control
// gets pmixrun's default action: one line on stderr naming the process, the
// monitor and the reason; with --monitor-kill, the job is also terminated
// (pmixrun then exits with status 1). With app control the application
// handles it: pmixrun only notes it at debug level and does nothing.
//
// Threads: the handler runs on the library's progress thread and only prints
// and calls `end_job`, which must not block.
#pragma once

#include <functional>

namespace pmixrun {

// Registers pmixrun's handler for monitor alerts (after PMIx_server_init).
// `end_job` is called once per alert that asks for the job's end.
void install_monitor_alerts(bool kill_on_alert, std::function<void()> end_job);

}  // namespace pmixrun
