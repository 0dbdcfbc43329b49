#include "events.hpp"

#include <pmix.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
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

void raise(pmix_status_t code, const pmix_proc_t &affected, Raised *r) {
    r->add(PMIX_EVENT_AFFECTED_PROC, &affected, PMIX_PROC);
    // From the SMS, to the affected process's job (range NAMESPACE with an
    // SMS source: the jobs of the affected processes).
    pmix_status_t rc = PMIx_Notify_event(code, nullptr, PMIX_RANGE_NAMESPACE, r->info.data(),
                                         r->info.size(), release_raised, r);
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
                              pmix_data_range_t range, pmix_info_t[], size_t, pmix_op_cbfunc_t,
                              void *) {
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

void raise_proc_terminated(const std::string &nspace, pmix_rank_t rank, int exit_code,
                           bool by_signal) {
    pmix_proc_t proc{};
    std::memcpy(proc.nspace, nspace.data(), std::min<std::size_t>(nspace.size(), PMIX_MAX_NSLEN));
    proc.rank = rank;
    auto *r = new Raised;
    r->add(PMIX_EXIT_CODE, &exit_code, PMIX_INT);
    pmix_status_t st = by_signal ? PMIX_ERR_PROC_ABORTED_BY_SIG : PMIX_SUCCESS;
    r->add(PMIX_PROC_TERM_STATUS, &st, PMIX_STATUS);
    raise(PMIX_EVENT_PROC_TERMINATED, proc, r);
}

}  // namespace pmixrun
