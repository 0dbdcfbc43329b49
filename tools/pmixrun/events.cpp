#include "events.hpp"
#include "tools.hpp"

#include <pmix.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace pmixrun {
namespace {

// The info of one raised event, released when PMIx_Notify_event is done with it.
struct Raised {
    std::vector<pmix_info_t> info;
    ~Raised() {
        for (auto &i : info) PMIx_Value_destruct(&i.value);
    }
    void add(const char *key, const void *v, pmix_data_type_t t) {
        info.emplace_back();
        std::memset(&info.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_load(&info.back(), key, v, t);
    }
};

void release_raised(pmix_status_t, void *cbdata) {
    delete static_cast<Raised *>(cbdata);
}

// From the SMS. No `requester`: to the affected process's job (range
// NAMESPACE with an SMS source: the jobs of the affected processes); else to
// `requester` only (range CUSTOM), whatever its job.
void raise(pmix_status_t code, const pmix_proc_t &affected, Raised *r,
           const pmix_proc_t *requester = nullptr) {
    r->add(PMIX_EVENT_AFFECTED_PROC, &affected, PMIX_PROC);
    if (requester != nullptr) r->add(PMIX_EVENT_CUSTOM_RANGE, requester, PMIX_PROC);
    pmix_status_t rc = PMIx_Notify_event(
        code, nullptr, requester != nullptr ? PMIX_RANGE_CUSTOM : PMIX_RANGE_NAMESPACE,
        r->info.data(), r->info.size(), release_raised, r);
    if (rc != PMIX_SUCCESS) {
        std::fprintf(stderr, "pmixrun: cannot raise event %s: %s\n", PMIx_Error_string(code),
                     PMIx_Error_string(rc));
        delete r;
    }
}

pmix_status_t on_register_events(pmix_status_t *, size_t, const pmix_info_t[], size_t,
                                 pmix_op_cbfunc_t, void *) {
    return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_deregister_events(pmix_status_t *, size_t, pmix_op_cbfunc_t, void *) {
    return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_notify_event(pmix_status_t code, const pmix_proc_t *source,
                              pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                              pmix_op_cbfunc_t, void *) {
    if (code == PMIX_READY_FOR_DEBUG && source != nullptr)  // tools.hpp: stop in the app
        tools_ready_for_debug(*source, info, ninfo);
    if (std::getenv("PMIXRUN_TRACE_EVENTS") != nullptr) {
        std::fprintf(stderr, "pmixrun: notify_event upcall: %s from %s:%u range %s\n",
                     PMIx_Error_string(code), source != nullptr ? source->nspace : "(sms)",
                     source != nullptr ? source->rank : PMIX_RANK_UNDEF,
                     PMIx_Data_range_string(range));
    }
    return PMIX_OPERATION_SUCCEEDED;
}

}  // namespace

void install_event_services(pmix_server_module_t &module) {
    module.register_events = on_register_events;
    module.deregister_events = on_deregister_events;
    module.notify_event = on_notify_event;
}

void raise_proc_aborted(const pmix_proc_t &proc, int status, const char *msg) {
    auto *r = new Raised;
    pmix_status_t st = status;
    r->add(PMIX_PROC_TERM_STATUS, &st, PMIX_STATUS);
    if (msg != nullptr) r->add(PMIX_EVENT_TEXT_MESSAGE, msg, PMIX_STRING);
    raise(PMIX_ERR_PROC_ABORTED, proc, r);
}

namespace {

pmix_proc_t make_proc(const std::string &nspace, pmix_rank_t rank) {
    pmix_proc_t proc{};
    std::memcpy(proc.nspace, nspace.data(), std::min<std::size_t>(nspace.size(), PMIX_MAX_NSLEN));
    proc.rank = rank;
    return proc;
}

void raise_terminated(const pmix_proc_t *requester, const std::string &nspace, pmix_rank_t rank,
                      int exit_code, bool by_signal) {
    auto *r = new Raised;
    r->add(PMIX_EXIT_CODE, &exit_code, PMIX_INT);
    pmix_status_t st = by_signal ? PMIX_ERR_PROC_ABORTED_BY_SIG : PMIX_SUCCESS;
    r->add(PMIX_PROC_TERM_STATUS, &st, PMIX_STATUS);
    raise(PMIX_EVENT_PROC_TERMINATED, make_proc(nspace, rank), r, requester);
}

}  // namespace

void raise_proc_terminated(const std::string &nspace, pmix_rank_t rank, int exit_code,
                           bool by_signal) {
    raise_terminated(nullptr, nspace, rank, exit_code, by_signal);
}

void raise_proc_terminated_for(const pmix_proc_t &requester, const std::string &nspace,
                               pmix_rank_t rank, int exit_code, bool by_signal) {
    raise_terminated(&requester, nspace, rank, exit_code, by_signal);
}

void raise_job_end(const pmix_proc_t &requester, const std::string &nspace,
                   pmix_status_t term_status, const pmix_proc_t *first_failed, int exit_code) {
    auto *r = new Raised;
    r->add(PMIX_NSPACE, nspace.c_str(), PMIX_STRING);
    r->add(PMIX_JOB_TERM_STATUS, &term_status, PMIX_STATUS);
    const time_t now = std::time(nullptr);
    r->add(PMIX_EVENT_TIMESTAMP, &now, PMIX_TIME);
    if (first_failed != nullptr) {
        r->add(PMIX_PROCID, first_failed, PMIX_PROC);
        r->add(PMIX_EXIT_CODE, &exit_code, PMIX_INT);
    }
    raise(PMIX_EVENT_JOB_END, make_proc(nspace, PMIX_RANK_WILDCARD), r, &requester);
}

void raise_ready_for_debug(const pmix_proc_t &requester, const std::string &nspace,
                           const std::vector<pmix_rank_t> &ranks, const std::string &breakpoint) {
    auto *r = new Raised;
    std::vector<pmix_proc_t> procs;
    for (pmix_rank_t rank : ranks) procs.push_back(make_proc(nspace, rank));
    pmix_data_array_t darray{PMIX_PROC, procs.size(), procs.data()};
    r->add(PMIX_EVENT_AFFECTED_PROCS, &darray, PMIX_DATA_ARRAY);  // copies
    r->add(PMIX_NSPACE, nspace.c_str(), PMIX_STRING);
    r->add(PMIX_BREAKPOINT, breakpoint.c_str(), PMIX_STRING);
    r->add(PMIX_EVENT_CUSTOM_RANGE, &requester, PMIX_PROC);
    const pmix_status_t rc = PMIx_Notify_event(PMIX_READY_FOR_DEBUG, nullptr, PMIX_RANGE_CUSTOM,
                                               r->info.data(), r->info.size(), release_raised, r);
    if (rc != PMIX_SUCCESS) {
        std::fprintf(stderr, "pmixrun: cannot raise PMIX_READY_FOR_DEBUG: %s\n",
                     PMIx_Error_string(rc));
        delete r;
    }
}

}  // namespace pmixrun
