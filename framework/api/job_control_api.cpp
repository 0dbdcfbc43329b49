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

using pmixpp::client::post_request;
using pmixpp::client::request_gate;
using pmixpp::client::timeout_of;
using pmixpp::runtime::Completion;
using pmixpp::wire::BodyReader;
using pmixpp::wire::BodyWriter;
using pmixpp::wire::Command;
using pmixpp::wire::InfoArray;

namespace {

struct Answer {
    pmix_status_t status = PMIX_ERR_TIMEOUT;
    std::shared_ptr<InfoArray> results;
};

using AnswerDone = std::function<void(Answer)>;

pmix_status_t job_control_async(const pmix_proc_t targets[], size_t ntargets,
                                const pmix_info_t directives[], size_t ndirs, AnswerDone done) {
    if (pmix_status_t rc = request_gate(); rc != PMIX_SUCCESS) return rc;
    if (targets == nullptr && ntargets > 0) return PMIX_ERR_BAD_PARAM;
    if (directives == nullptr || ndirs == 0) return PMIX_ERR_BAD_PARAM;
    auto body = BodyWriter()
                    .procs(targets, targets == nullptr ? 0 : ntargets)
                    .infos(directives, ndirs)
                    .take();
    bool posted =
        post_request(Command::job_control, std::move(body), timeout_of(directives, ndirs),
                     [done](pmix_status_t s, BodyReader &r) {
                         Answer a{s, std::make_shared<InfoArray>()};
                         if (r.remaining() > 0 && (!r.infos(*a.results) || !r.finished())) {
                             a.results->reset();
                             if (a.status == PMIX_SUCCESS) a.status = PMIX_ERR_UNPACK_FAILURE;
                         }
                         done(std::move(a));
                     });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

// A malloc'd copy of `from` for a blocking caller (freed with PMIX_INFO_FREE).
void hand_out(InfoArray &from, pmix_info_t **out, size_t *nout) {
    if (out != nullptr) *out = nullptr;
    if (nout != nullptr) *nout = 0;
    if (out == nullptr || nout == nullptr || from.size() == 0) return;
    auto *arr = static_cast<pmix_info_t *>(std::calloc(from.size(), sizeof(pmix_info_t)));
    if (arr == nullptr) return;
    std::memcpy(arr, from.data(), from.size() * sizeof(pmix_info_t));  // move the payloads
    for (size_t i = 0; i < from.size(); ++i)
        std::memset(&from.data()[i].value, 0, sizeof(pmix_value_t));
    *out = arr;
    *nout = from.size();
}

void release_answer(void *cbdata) {
    delete static_cast<std::shared_ptr<InfoArray> *>(cbdata);
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                                           const pmix_info_t directives[], size_t ndirs,
                                           pmix_info_t **results, size_t *nresults) {
    if (results != nullptr) *results = nullptr;
    if (nresults != nullptr) *nresults = 0;
    auto done = std::make_shared<Completion<Answer>>();
    pmix_status_t rc = job_control_async(targets, ntargets, directives, ndirs,
                                         [done](Answer a) { done->complete(std::move(a)); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    Answer &a = done->value();
    if (a.results) hand_out(*a.results, results, nresults);
    return a.status;
}

PMIX_EXPORT pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return job_control_async(targets, ntargets, directives, ndirs, [cbfunc, cbdata](Answer a) {
        if (cbfunc == nullptr) return;
        // The results stay ours until the caller calls the release function.
        auto *keep = new std::shared_ptr<InfoArray>(a.results);
        cbfunc(a.status, a.results->data(), a.results->size(), cbdata, release_answer, keep);
    });
}

}  // extern "C"
