// C entry points PMIx_Allocation_request and _nb: the request goes to the
// server, which hands it to the host's allocate upcall (server/allocation.cpp;
// no upcall there: PMIX_ERR_NOT_SUPPORTED). The results come back as the host
// gave them, on an error too (its reason).
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

// The standard's directives and those above PMIX_ALLOC_EXTERNAL (the host's own).
bool known_directive(pmix_alloc_directive_t d) {
    return (d >= PMIX_ALLOC_NEW && d <= PMIX_ALLOC_REAQUIRE) || d >= PMIX_ALLOC_EXTERNAL;
}

pmix_status_t allocate_async(pmix_alloc_directive_t directive, const pmix_info_t info[],
                             size_t ninfo, std::function<void(Answer)> done) {
    if (pmix_status_t rc = request_gate(); rc != PMIX_SUCCESS) return rc;
    if ((info == nullptr && ninfo > 0) || !known_directive(directive)) return PMIX_ERR_BAD_PARAM;
    auto body = BodyWriter().u8(directive).infos(info, info == nullptr ? 0 : ninfo).take();
    bool posted =
        post_request(Command::allocate, std::move(body), timeout_of(info, ninfo),
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

void release_answer(void *cbdata) {
    delete static_cast<std::shared_ptr<InfoArray> *>(cbdata);
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Allocation_request(pmix_alloc_directive_t directive,
                                                  pmix_info_t *info, size_t ninfo,
                                                  pmix_info_t **results, size_t *nresults) {
    if (results != nullptr) *results = nullptr;
    if (nresults != nullptr) *nresults = 0;
    auto done = std::make_shared<Completion<Answer>>();
    pmix_status_t rc =
        allocate_async(directive, info, ninfo, [done](Answer a) { done->complete(std::move(a)); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    Answer &a = done->value();
    if (a.results && a.results->size() > 0 && results != nullptr && nresults != nullptr) {
        // A malloc'd copy for the caller (freed with PMIX_INFO_FREE); the
        // payloads move.
        const std::size_t n = a.results->size();
        auto *arr = static_cast<pmix_info_t *>(std::calloc(n, sizeof(pmix_info_t)));
        if (arr != nullptr) {
            std::memcpy(arr, a.results->data(), n * sizeof(pmix_info_t));
            for (std::size_t i = 0; i < n; ++i)
                std::memset(&a.results->data()[i].value, 0, sizeof(pmix_value_t));
            *results = arr;
            *nresults = n;
        }
    }
    return a.status;
}

PMIX_EXPORT pmix_status_t PMIx_Allocation_request_nb(pmix_alloc_directive_t directive,
                                                     pmix_info_t *info, size_t ninfo,
                                                     pmix_info_cbfunc_t cbfunc, void *cbdata) {
    return allocate_async(directive, info, ninfo, [cbfunc, cbdata](Answer a) {
        if (cbfunc == nullptr) return;
        // The results stay ours until the caller calls the release function.
        auto *keep = new std::shared_ptr<InfoArray>(a.results);
        cbfunc(a.status, a.results->data(), a.results->size(), cbdata, release_answer, keep);
    });
}

}  // extern "C"
