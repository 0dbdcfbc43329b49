// C entry points PMIx_Job_control and PMIx_Job_control_nb. The server
// keeps the cleanup directives itself and hands the rest to the host
// (server/job_control.cpp). PMIx_Log: api/log_api.cpp.
//
// A NULL cbfunc means "fire and forget": the request is sent and PMIX_SUCCESS
// returned at once (OPENMPI-CONTRACT rule 5: Open MPI registers its cleanup
// files with PMIx_Job_control_nb(..., NULL, NULL) and fails MPI_Init unless
// that returns exactly PMIX_SUCCESS).
#include <pmix.h>

#include "client/request_util.hpp"

using pmixpp::client::InfoAnswer;
using pmixpp::client::InfoAnswerDone;

namespace {

pmix_status_t job_control_async(const pmix_proc_t targets[], size_t ntargets,
                                const pmix_info_t directives[], size_t ndirs, InfoAnswerDone done) {
    if (pmix_status_t rc = pmixpp::client::request_gate(); rc != PMIX_SUCCESS) return rc;
    if (targets == nullptr && ntargets > 0) return PMIX_ERR_BAD_PARAM;
    if (directives == nullptr || ndirs == 0) return PMIX_ERR_BAD_PARAM;
    auto body = pmixpp::wire::BodyWriter()
                    .procs(targets, targets == nullptr ? 0 : ntargets)
                    .infos(directives, ndirs)
                    .take();
    const bool posted = pmixpp::client::post_info_request(
        pmixpp::wire::Command::job_control, std::move(body),
        pmixpp::client::timeout_of(directives, ndirs), std::move(done));
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                                           const pmix_info_t directives[], size_t ndirs,
                                           pmix_info_t **results, size_t *nresults) {
    return pmixpp::client::wait_info_answer(
        [&](InfoAnswerDone done) {
            return job_control_async(targets, ntargets, directives, ndirs, std::move(done));
        },
        results, nresults);
}

PMIX_EXPORT pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return job_control_async(targets, ntargets, directives, ndirs, [cbfunc, cbdata](InfoAnswer a) {
        pmixpp::client::call_info_cbfunc(cbfunc, cbdata, a);
    });
}

}  // extern "C"
