// C entry points PMIx_Allocation_request and _nb: the request goes to the
// server, which hands it to the host's allocate upcall (server/allocation.cpp;
// no upcall there: PMIX_ERR_NOT_SUPPORTED). The results come back as the host
// gave them, on an error too (its reason).
#include <pmix.h>

#include "client/request_util.hpp"

using pmixpp::client::InfoAnswer;
using pmixpp::client::InfoAnswerDone;

namespace {

// The standard's directives and those above PMIX_ALLOC_EXTERNAL (the host's own).
bool known_directive(pmix_alloc_directive_t d) {
    return (d >= PMIX_ALLOC_NEW && d <= PMIX_ALLOC_REAQUIRE) || d >= PMIX_ALLOC_EXTERNAL;
}

pmix_status_t allocate_async(pmix_alloc_directive_t directive, const pmix_info_t info[],
                             size_t ninfo, InfoAnswerDone done) {
    if (pmix_status_t rc = pmixpp::client::request_gate(); rc != PMIX_SUCCESS) return rc;
    if ((info == nullptr && ninfo > 0) || !known_directive(directive)) return PMIX_ERR_BAD_PARAM;
    auto body =
        pmixpp::wire::BodyWriter().u8(directive).infos(info, info == nullptr ? 0 : ninfo).take();
    const bool posted =
        pmixpp::client::post_info_request(pmixpp::wire::Command::allocate, std::move(body),
                                          pmixpp::client::timeout_of(info, ninfo), std::move(done));
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive,
                                                  pmix_info_t *info, size_t ninfo,
                                                  pmix_info_t **results, size_t *nresults) {
    return pmixpp::client::wait_info_answer(
        [&](InfoAnswerDone done) {
            return allocate_async(directive, info, ninfo, std::move(done));
        },
        results, nresults);
}

PMIX_EXPORT pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive,
                                                     pmix_info_t *info, size_t ninfo,
                                                     pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return allocate_async(directive, info, ninfo, [cbfunc, cbdata](InfoAnswer a) {
        pmixpp::client::call_info_cbfunc(cbfunc, cbdata, a);
    });
}

}  // extern "C"
