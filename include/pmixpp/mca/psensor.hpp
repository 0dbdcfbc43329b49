// Framework interface "psensor": the server's own process monitoring for
// PMIx_Process_monitor_nb (see framework/psensor/README.md for the contract).
//
// Only a server with monitoring enabled (PMIX_SERVER_ENABLE_MONITORING) uses
// it; otherwise requests go to the host. Each request is offered to every
// module in priority order; the first that takes it owns it until stop().
#pragma once

#include "pmixpp/mca/sdk_types.hpp"

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pmixpp::mca::psensor {

inline constexpr const char *kFrameworkName = "psensor";
// Interface version a component of this framework is built against. The major
// must match the core's exactly; a component minor newer than the core's is refused.
inline constexpr unsigned kInterfaceMajor = 1;
inline constexpr unsigned kInterfaceMinor = 0;

// The standard's (v5) form of a file monitor, which PMIx 4.2's headers do not
// define: the monitor key PMIX_MONITOR_FILE_CHANGES (its value a
// PMIX_DATA_ARRAY of PMIX_INFO naming the criteria: PMIX_MONITOR_FILE_SIZE,
// _ACCESS, _MODIFY; NULL or empty: all of them) with the files in the
// directive PMIX_MONITOR_TARGET_FILES (a PMIX_DATA_ARRAY of PMIX_STRING, or
// one PMIX_STRING). TARGET_FILES shares its string with 4.2's
// PMIX_MONITOR_FILE ("pmix.monitor.fmon").
inline constexpr const char *kMonitorFileChanges = "pmix.monitor.fchg";
inline constexpr const char *kMonitorTargetFiles = "pmix.monitor.fmon";

// One PMIx_Process_monitor_nb request, as the server received it. Everything
// is borrowed for the duration of start(): a module that takes the request
// copies what it keeps.
struct MonitorRequest {
    // The process to watch: the client that asked, or one of the processes
    // its PMIX_MONITOR_TARGET_* named (one start() per watched process).
    const pmix_proc_t &requestor;
    // The watch's id, made by the core from the asker and its
    // PMIX_MONITOR_ID (or "pmixpp.monitor.<n>"): never empty, unique per
    // (asker, id) so that two askers' monitors of one process never share
    // it. stop() names it; a Violation carries it back.
    std::string_view id;
    // What to monitor: its key says the kind (PMIX_MONITOR_HEARTBEAT,
    // PMIX_MONITOR_FILE, ...), its value the object (e.g. the file name).
    const pmix_info_t &monitor;
    // The status code of the event to raise on a violation (the call's
    // `error` argument).
    pmix_status_t event_code;
    // The request's directives: PMIX_MONITOR_HEARTBEAT_TIME,
    // PMIX_MONITOR_FILE_CHECK_TIME, PMIX_MONITOR_*_DROPS, ...
    std::span<const pmix_info_t> directives;
};

// What a module reports when a monitored process stops showing signs of life.
struct Violation {
    pmix_proc_t requestor;
    std::string id;
    pmix_status_t event_code;
    // For the event's PMIX_EVENT_TEXT_MESSAGE and the log, e.g.
    // "no heartbeat from job1.3 for 10 s (2 missed)".
    std::string reason;
    // The file that failed its check (a file monitor; the event carries it as
    // PMIX_MONITOR_FILE), empty otherwise.
    std::string file;
};

// Called by the module, on the progress thread, once per violation. The core
// turns it into an event (the request's range, PMIX_RANGE_NAMESPACE by
// default). Monitoring goes on after a violation until stop(): the handler may
// be called again for a later violation of the same request.
using ViolationHandler = std::function<void(const Violation &violation)>;

// The module interface: what a component's create_module() returns.
// Every method runs on the progress thread.
class PMIXPP_SDK_EXPORT Module {
  public:
    // Stops every monitor still running and cancels its timers.
    virtual ~Module() = default;

    // The monitor keys this module understands (PMIX_MONITOR_HEARTBEAT;
    // PMIX_MONITOR_FILE, kMonitorFileChanges). Constant for the module's lifetime.
    virtual std::vector<std::string> monitor_keys() const = 0;

    // Whether start() should be offered `request` at all. Default: the
    // request's monitor key is one of monitor_keys().
    virtual bool accepts(const MonitorRequest &request) const {
        const std::string_view key = request.monitor.key;
        for (const std::string &own : monitor_keys()) {
            if (own == key) return true;
        }
        return false;
    }

    // Take and start `request`. `timers` runs the module's periodic checks;
    // `raise` reports violations. Both outlive the module: keep them.
    // Returns:
    //   success           the module owns the request; the core replies
    //                     "granted" to the requestor;
    //   kStatusDeclined   not this module's: the core offers the next one;
    //   any other error   this module's kind, but it cannot be honoured
    //                     (PMIX_ERR_BAD_PARAM for a bad directive): the core
    //                     stops offering and returns the error and its
    //                     message to the requestor.
    virtual Status start(const MonitorRequest &request, ProgressTimers &timers,
                         ViolationHandler raise) = 0;

    // Stop monitoring `requestor` under `id`, or all its requests if `id` is
    // empty (PMIX_MONITOR_CANCEL, or the client disconnected). The core calls
    // every module; none raises a violation for a stopped request afterwards.
    // Errors: PMIX_ERR_NOT_FOUND (this module watched nothing matching).
    virtual Status stop(const pmix_proc_t &requestor, std::string_view id) = 0;

    // A heartbeat arrived from `from` (a client's PMIX_SEND_HEARTBEAT). The
    // core passes every heartbeat to every module. Default: ignored.
    virtual void heartbeat(const pmix_proc_t &from) { (void)from; }
};

}  // namespace pmixpp::mca::psensor
