// C entry points PMIx_Get_credential(_nb) and PMIx_Validate_credential(_nb):
// both go to the server, which hands them to the host's get_credential /
// validate_credential upcalls with the caller's uid and gid
// (server/credentials.cpp; no upcall there: PMIX_ERR_NOT_SUPPORTED). The
// library issues and checks no credential itself (docs/security.md,
// "Credentials"). In a server process (no server above it):
// PMIX_ERR_NOT_SUPPORTED.
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "client/request_util.hpp"

using pmixpp::client::InfoAnswer;
using pmixpp::client::InfoAnswerDone;

namespace {

using pmixpp::wire::kCredentialKey;  // the credential in a get_credential reply

pmix_status_t get_async(const pmix_info_t info[], size_t ninfo, InfoAnswerDone done) {
    if (pmix_status_t rc = pmixpp::client::request_gate(); rc != PMIX_SUCCESS) return rc;
    if (info == nullptr && ninfo > 0) return PMIX_ERR_BAD_PARAM;
    auto body = pmixpp::wire::BodyWriter().infos(info, info == nullptr ? 0 : ninfo).take();
    return pmixpp::client::post_info_request(pmixpp::wire::Command::get_credential, std::move(body),
                                             pmixpp::client::timeout_of(info, ninfo),
                                             std::move(done))
               ? PMIX_SUCCESS
               : PMIX_ERR_INIT;
}

pmix_status_t validate_async(const pmix_byte_object_t *cred, const pmix_info_t info[], size_t ninfo,
                             InfoAnswerDone done) {
    if (pmix_status_t rc = pmixpp::client::request_gate(); rc != PMIX_SUCCESS) return rc;
    if (cred == nullptr || (cred->bytes == nullptr && cred->size > 0) ||
        (info == nullptr && ninfo > 0))
        return PMIX_ERR_BAD_PARAM;
    auto body = pmixpp::wire::BodyWriter()
                    .bytes(std::span<const std::uint8_t>(
                        reinterpret_cast<const std::uint8_t *>(cred->bytes), cred->size))
                    .infos(info, info == nullptr ? 0 : ninfo)
                    .take();
    return pmixpp::client::post_info_request(
               pmixpp::wire::Command::validate_credential, std::move(body),
               pmixpp::client::timeout_of(info, ninfo), std::move(done))
               ? PMIX_SUCCESS
               : PMIX_ERR_INIT;
}

// The credential of a successful answer: its byte object (still owned by
// the answer), and how many of the results follow it (the host's info).
const pmix_byte_object_t *credential_of(const InfoAnswer &a, std::size_t &first_info) {
    first_info = 0;
    if (a.status != PMIX_SUCCESS || a.results->size() == 0) return nullptr;
    const pmix_info_t &c = a.results->data()[0];
    if (!PMIX_CHECK_KEY(&c, kCredentialKey) || c.value.type != PMIX_BYTE_OBJECT) return nullptr;
    first_info = 1;
    return &c.value.data.bo;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Get_credential(const pmix_info_t info[], size_t ninfo,
                                              pmix_byte_object_t *credential) {
    if (credential == nullptr) return PMIX_ERR_BAD_PARAM;
    PMIX_BYTE_OBJECT_CONSTRUCT(credential);
    auto done = std::make_shared<pmixpp::runtime::Completion<InfoAnswer>>();
    pmix_status_t rc =
        get_async(info, ninfo, [done](InfoAnswer a) { done->complete(std::move(a)); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    InfoAnswer &a = done->value();
    if (a.status != PMIX_SUCCESS) return a.status;
    std::size_t first = 0;
    const pmix_byte_object_t *bo = credential_of(a, first);
    if (bo == nullptr) return PMIX_ERR_UNPACK_FAILURE;
    credential->bytes = static_cast<char *>(std::malloc(bo->size == 0 ? 1 : bo->size));
    if (credential->bytes == nullptr) return PMIX_ERR_NOMEM;
    if (bo->size > 0) std::memcpy(credential->bytes, bo->bytes, bo->size);
    credential->size = bo->size;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Get_credential_nb(const pmix_info_t info[], size_t ninfo,
                                                 pmix_credential_cbfunc_t cbfunc, void *cbdata) {
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    return get_async(info, ninfo, [cbfunc, cbdata](InfoAnswer a) {
        // The credential and the info stay the library's: valid during the call.
        std::size_t first = 0;
        const pmix_byte_object_t *bo = credential_of(a, first);
        pmix_status_t s = a.status;
        if (s == PMIX_SUCCESS && bo == nullptr) s = PMIX_ERR_UNPACK_FAILURE;
        pmix_byte_object_t cred{bo != nullptr ? bo->bytes : nullptr, bo != nullptr ? bo->size : 0};
        const std::size_t n = a.results->size() - first;
        cbfunc(s, bo != nullptr ? &cred : nullptr, n > 0 ? a.results->data() + first : nullptr, n,
               cbdata);
    });
}

PMIX_EXPORT pmix_status_t PMIx_Validate_credential(const pmix_byte_object_t *cred,
                                                   const pmix_info_t info[], size_t ninfo,
                                                   pmix_info_t **results, size_t *nresults) {
    return pmixpp::client::wait_info_answer(
        [&](InfoAnswerDone done) { return validate_async(cred, info, ninfo, std::move(done)); },
        results, nresults);
}

PMIX_EXPORT pmix_status_t PMIx_Validate_credential_nb(const pmix_byte_object_t *cred,
                                                      const pmix_info_t info[], size_t ninfo,
                                                      pmix_validation_cbfunc_t cbfunc,
                                                      void *cbdata) {
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    return validate_async(cred, info, ninfo, [cbfunc, cbdata](InfoAnswer a) {
        // The results stay the library's: valid during the call.
        cbfunc(a.status, a.results->size() > 0 ? a.results->data() : nullptr, a.results->size(),
               cbdata);
    });
}

}  // extern "C"
