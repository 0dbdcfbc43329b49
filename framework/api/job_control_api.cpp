// C entry points PMIx_Job_control and PMIx_Job_control_nb. The server
// keeps the cleanup directives itself and hands the rest to the host
// (server/job_control.cpp). PMIx_Log: api/log_api.cpp.
//
// A NULL cbfunc means "fire and forget": the request is sent and PMIX_SUCCESS
// returned at once (OPENMPI-CONTRACT rule 5: Open MPI registers its cleanup
// files with PMIx_Job_control_nb(..., NULL, NULL) and fails MPI_Init unless
// that returns exactly PMIX_SUCCESS).
#include <pmix.h>

#include <cstdlib>
#include <cstring>

#include "client/request_util.hpp"
#include "wire/codec.hpp"

using pmixpp::client::InfoAnswer;
using pmixpp::client::post_request;
using pmixpp::client::request_gate;
using pmixpp::client::timeout_of;
using pmixpp::runtime::Completion;
using pmixpp::wire::BodyReader;
using pmixpp::wire::BodyWriter;
using pmixpp::wire::Command;

namespace {

using AnswerDone = std::function<void(InfoAnswer)>;

pmix_status_t job_control_async(const pmix_proc_t targets[], size_t ntargets,
                                const pmix_info_t directives[], size_t ndirs, AnswerDone done) {
    if (pmix_status_t rc = request_gate(); rc != PMIX_SUCCESS) return rc;
    if (targets == nullptr && ntargets > 0) return PMIX_ERR_BAD_PARAM;
    if (directives == nullptr || ndirs == 0) return PMIX_ERR_BAD_PARAM;
    auto body = BodyWriter()
                    .procs(targets, targets == nullptr ? 0 : ntargets)
                    .infos(directives, ndirs)
                    .take();
    bool posted = post_request(
        Command::job_control, std::move(body), timeout_of(directives, ndirs),
        [done](pmix_status_t s, BodyReader &r) { done(pmixpp::client::read_info_answer(s, r)); });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                                           const pmix_info_t directives[], size_t ndirs,
                                           pmix_info_t **results, size_t *nresults) {
    if (results != nullptr) *results = nullptr;
    if (nresults != nullptr) *nresults = 0;
    auto done = std::make_shared<Completion<InfoAnswer>>();
    pmix_status_t rc = job_control_async(targets, ntargets, directives, ndirs,
                                         [done](InfoAnswer a) { done->complete(std::move(a)); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    pmixpp::client::hand_out(done->value(), results, nresults);
    return done->value().status;
}

PMIX_EXPORT pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return job_control_async(targets, ntargets, directives, ndirs, [cbfunc, cbdata](InfoAnswer a) {
        pmixpp::client::call_info_cbfunc(cbfunc, cbdata, a);
    });
}

}  // extern "C"
