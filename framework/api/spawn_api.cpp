// PMIx_Spawn / PMIx_Spawn_nb on the client side: the request goes to the
// server, whose host starts the job (framework/server/spawn.cpp). The reply
// carries the new nspace and its job info, which goes into this process's
// store so the parent reads the child job's job-level keys locally.
#include <pmix.h>

#include <algorithm>
#include <cstring>

#include "client/client.hpp"
#include "runtime/init_state.hpp"
#include "runtime/progress.hpp"
#include "wire/codec.hpp"

using pmixpp::client::Client;
using pmixpp::runtime::Completion;
using pmixpp::runtime::Face;
using pmixpp::runtime::ProgressEngine;

namespace {

using SpawnDone = std::function<void(pmix_status_t, std::string)>;

pmix_status_t start_spawn(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                          size_t napps, SpawnDone done) {
    if (pmixpp::runtime::init_count(Face::client) == 0 &&
        pmixpp::runtime::init_count(Face::server) == 0 &&
        pmixpp::runtime::init_count(Face::tool) == 0) {
        return PMIX_ERR_INIT;
    }
    if (apps == nullptr || napps == 0) return PMIX_ERR_BAD_PARAM;
    for (size_t i = 0; i < napps; ++i) {
        if (apps[i].cmd == nullptr || apps[i].cmd[0] == '\0') return PMIX_ERR_JOB_NO_EXE_SPECIFIED;
        if (apps[i].maxprocs < 1) return PMIX_ERR_BAD_PARAM;
    }
    pmixpp::wire::Encoder enc;
    enc.put_u64(napps);
    if (pmix_status_t rc = pmixpp::wire::encode(enc, PMIX_APP, apps, napps); rc != PMIX_SUCCESS) {
        return rc;
    }
    auto info = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(job_info, job_info == nullptr ? 0 : ninfo));
    bool posted = ProgressEngine::instance().post(
        [info, bytes = std::move(enc.bytes()), done = std::move(done)]() mutable {
            Client::instance().spawn_async(info, std::move(bytes), std::move(done));
        });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo,
                                     const pmix_app_t apps[], size_t napps, pmix_nspace_t nspace) {
    if (nspace != nullptr) std::memset(nspace, 0, PMIX_MAX_NSLEN + 1);
    struct Result {
        pmix_status_t status = PMIX_ERR_TIMEOUT;
        std::string nspace;
    };
    auto done = std::make_shared<Completion<Result>>();
    pmix_status_t rc =
        start_spawn(job_info, ninfo, apps, napps, [done](pmix_status_t s, std::string ns) {
            done->complete(Result{s, std::move(ns)});
        });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    const Result &r = done->value();
    if (r.status == PMIX_SUCCESS && nspace != nullptr) {
        std::memcpy(nspace, r.nspace.data(),
                    std::min<std::size_t>(r.nspace.size(), PMIX_MAX_NSLEN));
    }
    return r.status;
}

PMIX_EXPORT pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo,
                                        const pmix_app_t apps[], size_t napps,
                                        pmix_spawn_cbfunc_t cbfunc, void *cbdata) {
    return start_spawn(
        job_info, ninfo, apps, napps, [cbfunc, cbdata](pmix_status_t s, std::string ns) {
            if (cbfunc == nullptr) return;
            pmix_nspace_t out{};
            std::memcpy(out, ns.data(), std::min<std::size_t>(ns.size(), PMIX_MAX_NSLEN));
            cbfunc(s, out, cbdata);
        });
}

}  // extern "C"
