#include "job_control.hpp"

#include "job_controller.hpp"
#include "job_services.hpp"
#include "signals.hpp"

#include <pmix.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace pmixrun {
namespace {

// An event pmixrun notifies, kept until the library is done with it.
struct Notified {
    std::vector<pmix_info_t> info;
    ~Notified() {
        for (auto &i : info) PMIx_Value_destruct(&i.value);
    }
    void add(const char *key, const void *v, pmix_data_type_t t) {
        info.emplace_back();
        std::memset(&info.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_load(&info.back(), key, v, t);
    }
};

void release_notified(pmix_status_t, void *cbdata) {
    delete static_cast<Notified *>(cbdata);
}

// `code` to `target` alone (range CUSTOM); `n` already has the rest.
pmix_status_t notify_one(pmix_status_t code, const pmix_proc_t &target, Notified *n) {
    n->info.insert(n->info.begin(), 2, pmix_info_t{});
    PMIx_Info_load(&n->info[0], PMIX_EVENT_CUSTOM_RANGE, &target, PMIX_PROC);
    PMIx_Info_load(&n->info[1], PMIX_EVENT_AFFECTED_PROC, &target, PMIX_PROC);
    pmix_status_t rc = PMIx_Notify_event(code, nullptr, PMIX_RANGE_CUSTOM, n->info.data(),
                                         n->info.size(), release_notified, n);
    if (rc != PMIX_SUCCESS) delete n;
    return rc;
}

// pmixrun's real effects: its process table, kill(2), PMIx events, stderr.
class RealEffects final : public JobControlEffects {
  public:
    std::vector<RunningProc> find(const pmix_proc_t &target) override {
        return job_services_find(target);
    }
    int signal(pid_t pid, int sig) override { return kill(pid, sig); }
    pmix_status_t ask_checkpoint(const pmix_proc_t &target, pmix_status_t code,
                                 const std::string &name, const std::string &id) override {
        auto *n = new Notified;
        if (!name.empty()) n->add(PMIX_JOB_CTRL_CHECKPOINT, name.c_str(), PMIX_STRING);
        if (!id.empty()) n->add(PMIX_JOB_CTRL_ID, id.c_str(), PMIX_STRING);
        return notify_one(code, target, n);
    }
    pmix_status_t alert_preempt(const pmix_proc_t &target, const std::string &id) override {
        auto *n = new Notified;
        n->add(PMIX_EVENT_TEXT_MESSAGE, "pmixrun was asked to preempt the job (SIGUSR1)",
               PMIX_STRING);
        if (!id.empty()) n->add(PMIX_JOB_CTRL_ID, id.c_str(), PMIX_STRING);
        return notify_one(PMIX_JCTRL_PREEMPT_ALERT, target, n);
    }
    Clock::time_point now() override { return Clock::now(); }
    void say(const std::string &line) override { std::fprintf(stderr, "%s\n", line.c_str()); }
};

RealEffects g_effects;
JobController g_controller(g_effects);

// PMIX_JCTRL_CHECKPOINT_COMPLETE from a process (range RM, LOCAL, SESSION,
// GLOBAL or UNDEF reaches pmixrun's own handlers).
void on_checkpoint_complete(size_t, pmix_status_t, const pmix_proc_t *source, pmix_info_t info[],
                            size_t ninfo, pmix_info_t[], size_t,
                            pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    std::string name;
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_CTRL_CHECKPOINT) &&
            info[i].value.type == PMIX_STRING && info[i].value.data.string != nullptr)
            name = info[i].value.data.string;
    }
    if (source != nullptr) {
        g_controller.checkpoint_complete(*source, name);
    } else {
        std::fprintf(stderr, "pmixrun: checkpoint completion from an unknown source\n");
    }
    if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

std::atomic<bool> g_preempt_requested{false};

void on_preempt_signal(int) {
    g_preempt_requested = true;
    wake_main_loop();
}

}  // namespace

pmix_status_t job_control_upcall(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                 size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata) {
    const pmix_status_t rc =
        g_controller.request(requestor, targets, ntargets, directives, ndirs, cbfunc, cbdata);
    wake_main_loop();  // a checkpoint may have brought a nearer deadline
    return rc;
}

void job_control_start() {
    struct sigaction sa {};
    sa.sa_handler = on_preempt_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, nullptr);
    pmix_status_t code = PMIX_JCTRL_CHECKPOINT_COMPLETE;
    pmix_status_t rc =
        PMIx_Register_event_handler(&code, 1, nullptr, 0, on_checkpoint_complete, nullptr, nullptr);
    if (rc < 0) {
        std::fprintf(stderr, "pmixrun: cannot register for checkpoint completions: %s\n",
                     PMIx_Error_string(rc));
    }
}

void job_control_tick() {
    if (g_preempt_requested.exchange(false)) g_controller.preempt();
    g_controller.tick();
}

std::chrono::steady_clock::time_point job_control_next_deadline() {
    return g_controller.next_deadline();
}

void job_control_proc_ended(const pmix_proc_t &proc) {
    g_controller.proc_ended(proc);
}

}  // namespace pmixrun
