#include "monitoring.hpp"

#include <pmix.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

namespace pmixrun {
namespace {

bool g_kill = false;
std::function<void()> g_end_job;

void on_event(size_t, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
              size_t ninfo, pmix_info_t[], size_t, pmix_event_notification_cbfunc_fn_t cbfunc,
              void *cbdata) {
    int app_control = -1;  // -1: not a monitor alert
    std::string id, file, reason;
    for (size_t i = 0; i < ninfo; ++i) {
        const pmix_value_t &v = info[i].value;
        if (PMIX_CHECK_KEY(&info[i], PMIX_MONITOR_APP_CONTROL) && v.type == PMIX_BOOL) {
            app_control = v.data.flag ? 1 : 0;
        } else if (v.type == PMIX_STRING && v.data.string != nullptr) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_MONITOR_ID)) id = v.data.string;
            if (PMIX_CHECK_KEY(&info[i], PMIX_MONITOR_FILE)) file = v.data.string;
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_TEXT_MESSAGE)) reason = v.data.string;
        }
    }
    if (app_control == 0) {
        std::fprintf(
            stderr, "pmixrun: monitor alert %d (%s) for %s rank %u, monitor '%s'%s%s: %s%s\n",
            status, file.empty() ? "heartbeat" : "file", source != nullptr ? source->nspace : "?",
            source != nullptr ? source->rank : PMIX_RANK_UNDEF, id.c_str(),
            file.empty() ? "" : ", file ", file.c_str(), reason.c_str(),
            g_kill ? "; terminating the job (--monitor-kill)" : "");
        if (g_kill && g_end_job) g_end_job();
    } else if (app_control == 1 && std::getenv("PMIXRUN_TRACE_EVENTS") != nullptr) {
        std::fprintf(stderr, "pmixrun: monitor alert for monitor '%s' left to the application\n",
                     id.c_str());
    }
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, nullptr, 0, nullptr, nullptr, cbdata);
}

}  // namespace

void install_monitor_alerts(bool kill_on_alert, std::function<void()> end_job) {
    g_kill = kill_on_alert;
    g_end_job = std::move(end_job);
    // Every code: the requestor chose the alert's status.
    const int rc = PMIx_Register_event_handler(nullptr, 0, nullptr, 0, on_event, nullptr, nullptr);
    if (rc < 0) {
        std::fprintf(stderr, "pmixrun: cannot watch monitor alerts: %s\n", PMIx_Error_string(rc));
    }
}

}  // namespace pmixrun
