// C entry points PMIx_Allocation_request and _nb: the request goes to the
// server, which hands it to the host's allocate upcall (server/allocation.cpp;
// no upcall there: PMIX_ERR_NOT_SUPPORTED). The results come back as the host
// gave them, on an error too (its reason).
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

// The standard's directives and those above PMIX_ALLOC_EXTERNAL (the host's own).
bool known_directive(pmix_alloc_directive_t d) {
    return (d >= PMIX_ALLOC_NEW && d <= PMIX_ALLOC_REAQUIRE) || d >= PMIX_ALLOC_EXTERNAL;
}

pmix_status_t allocate_async(pmix_alloc_directive_t directive, const pmix_info_t info[],
                             size_t ninfo, std::function<void(InfoAnswer)> done) {
    if (pmix_status_t rc = request_gate(); rc != PMIX_SUCCESS) return rc;
    if ((info == nullptr && ninfo > 0) || !known_directive(directive)) return PMIX_ERR_BAD_PARAM;
    auto body = BodyWriter().u8(directive).infos(info, info == nullptr ? 0 : ninfo).take();
    bool posted = post_request(
        Command::allocate, std::move(body), timeout_of(info, ninfo),
        [done](pmix_status_t s, BodyReader &r) { done(pmixpp::client::read_info_answer(s, r)); });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive,
                                                  pmix_info_t *info, size_t ninfo,
                                                  pmix_info_t **results, size_t *nresults) {
    if (results != nullptr) *results = nullptr;
    if (nresults != nullptr) *nresults = 0;
    auto done = std::make_shared<Completion<InfoAnswer>>();
    pmix_status_t rc = allocate_async(directive, info, ninfo,
                                      [done](InfoAnswer a) { done->complete(std::move(a)); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    pmixpp::client::hand_out(done->value(), results, nresults);
    return done->value().status;
}

PMIX_EXPORT pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive,
                                                     pmix_info_t *info, size_t ninfo,
                                                     pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return allocate_async(directive, info, ninfo, [cbfunc, cbdata](InfoAnswer a) {
        pmixpp::client::call_info_cbfunc(cbfunc, cbdata, a);
    });
}

}  // extern "C"
