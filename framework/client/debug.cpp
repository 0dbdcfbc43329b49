// Debugger support in the client (docs/tools.md, "Debuggers"): a process of
// a job registered with PMIX_DEBUG_STOP_IN_INIT (job data, or its own data
// when the attribute was in its app's info) waits at the end of PMIx_Init
// until a debugger releases it.
//
// The wait: the process registers for PMIX_DEBUGGER_RELEASE, announces
// PMIX_READY_FOR_DEBUG (source: itself, range GLOBAL, with PMIX_BREAKPOINT
// "pmix-init"), and sleeps until the release (or the loss of its server) arrives (through the
// server, from a tool or the host: any source). It uses only the public API, from PMIx_Init's
// thread, after the client face is up.
#include <pmix.h>

#include <condition_variable>
#include <cstring>
#include <mutex>

#include "mca/logging.hpp"

namespace pmixpp::client {

namespace {

struct ReleaseWait {
    std::mutex m;
    std::condition_variable cv;
    bool released = false;
    bool registered = false;
    pmix_status_t reg_status = PMIX_SUCCESS;
    std::size_t id = 0;
};

ReleaseWait g_wait;

void on_release(size_t, pmix_status_t, const pmix_proc_t *, pmix_info_t[], size_t, pmix_info_t[],
                size_t, pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    {
        std::lock_guard lock(g_wait.m);
        g_wait.released = true;
    }
    g_wait.cv.notify_all();
    if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

void on_registered(pmix_status_t status, size_t id, void *) {
    {
        std::lock_guard lock(g_wait.m);
        g_wait.registered = true;
        g_wait.reg_status = status;
        g_wait.id = id;
    }
    g_wait.cv.notify_all();
}

}  // namespace

// Called by PMIx_Init once the client face is up. Returns at once unless the
// job carries PMIX_DEBUG_STOP_IN_INIT.
void stop_in_init_if_asked(const pmix_proc_t &me) {
    pmix_info_t optional;
    PMIX_INFO_CONSTRUCT(&optional);
    bool yes = true;
    PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL);  // job data: no server round trip
    // The process's own key (the attribute was in its app's info), else the job's.
    auto asked = [&](const pmix_proc_t &whose) {
        pmix_value_t *v = nullptr;
        const pmix_status_t rc = PMIx_Get(&whose, PMIX_DEBUG_STOP_IN_INIT, &optional, 1, &v);
        const bool yes_asked = rc == PMIX_SUCCESS && v != nullptr &&
                               (v->type == PMIX_UNDEF || (v->type == PMIX_BOOL && v->data.flag));
        if (v != nullptr) PMIX_VALUE_RELEASE(v);
        return yes_asked;
    };
    pmix_proc_t wild = me;
    wild.rank = PMIX_RANK_WILDCARD;
    const bool stop = asked(me) || asked(wild);
    PMIX_INFO_DESTRUCT(&optional);
    if (!stop) return;

    auto log = mca::framework_logger("client");
    {
        std::lock_guard lock(g_wait.m);
        g_wait.released = g_wait.registered = false;
    }
    // A lost server wakes it too: nobody could release it any more.
    pmix_status_t codes[2] = {PMIX_DEBUGGER_RELEASE, PMIX_ERR_LOST_CONNECTION};
    pmix_status_t st =
        PMIx_Register_event_handler(codes, 2, nullptr, 0, on_release, on_registered, nullptr);
    {
        std::unique_lock lock(g_wait.m);
        if (st == PMIX_SUCCESS) g_wait.cv.wait(lock, [] { return g_wait.registered; });
        if (st != PMIX_SUCCESS || g_wait.reg_status != PMIX_SUCCESS) {
            log->error("PMIx_Init: PMIX_DEBUG_STOP_IN_INIT: cannot wait for the debugger: {}",
                       PMIx_Error_string(st != PMIX_SUCCESS ? st : g_wait.reg_status));
            return;
        }
    }
    pmix_info_t bp;
    PMIX_INFO_CONSTRUCT(&bp);
    PMIX_INFO_LOAD(&bp, PMIX_BREAKPOINT, "pmix-init", PMIX_STRING);
    st = PMIx_Notify_event(PMIX_READY_FOR_DEBUG, &me, PMIX_RANGE_GLOBAL, &bp, 1, nullptr, nullptr);
    PMIX_INFO_DESTRUCT(&bp);
    if (st != PMIX_SUCCESS)
        log->warn("PMIx_Init: cannot announce PMIX_READY_FOR_DEBUG: {}", PMIx_Error_string(st));
    log->info("PMIx_Init: {}:{} stopped in init until PMIX_DEBUGGER_RELEASE", me.nspace, me.rank);
    std::size_t id = 0;
    {
        std::unique_lock lock(g_wait.m);
        g_wait.cv.wait(lock, [] { return g_wait.released; });
        id = g_wait.id;
    }
    PMIx_Deregister_event_handler(id, nullptr, nullptr);
}

}  // namespace pmixpp::client
