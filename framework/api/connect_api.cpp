// PMIx_Connect / PMIx_Disconnect (and their _nb forms) on the client side.
//
// Both are collectives that the server gathers like a fence
// (framework/server/connect.cpp). A connect's reply carries the job info of
// the other participating nspaces and the participants' committed data; both
// go into this process's store, so Gets of the other job's job-level keys
// and of its processes' keys are answered locally afterwards. PMIX_TIMEOUT
// bounds the wait here as on the server.
#include <pmix.h>

#include <cstring>

#include "client/client.hpp"
#include "client/request_util.hpp"
#include "mca/logging.hpp"
#include "runtime/init_state.hpp"
#include "runtime/progress.hpp"

using pmixpp::client::Client;
using pmixpp::runtime::Completion;
using pmixpp::runtime::Face;
using pmixpp::runtime::ProgressEngine;
using pmixpp::wire::Command;

namespace {

bool any_up() {
    return pmixpp::runtime::init_count(Face::client) > 0 ||
           pmixpp::runtime::init_count(Face::server) > 0;
}

std::uint32_t timeout_of(const pmix_info_t *info, size_t ninfo) {
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (!PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) continue;
        if (info[i].value.type == PMIX_INT && info[i].value.data.integer > 0)
            return static_cast<std::uint32_t>(info[i].value.data.integer);
        if (info[i].value.type == PMIX_UINT32) return info[i].value.data.uint32;
    }
    return 0;
}

// Posts the collective; `done` runs once on the progress thread.
pmix_status_t start(Command command, const pmix_proc_t procs[], size_t nprocs,
                    const pmix_info_t info[], size_t ninfo,
                    std::function<void(pmix_status_t)> done) {
    if (!any_up()) return PMIX_ERR_INIT;
    if (procs == nullptr || nprocs == 0) return PMIX_ERR_BAD_PARAM;
    std::vector<pmix_proc_t> list(procs, procs + nprocs);
    auto copied = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(info, info == nullptr ? 0 : ninfo));
    const std::uint32_t timeout = timeout_of(info, ninfo);
    bool posted = ProgressEngine::instance().post(
        [command, list = std::move(list), timeout, copied, done = std::move(done)]() mutable {
            Client::instance().connect_async(command, std::move(list), timeout, copied,
                                             std::move(done));
        });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t blocking(Command command, const pmix_proc_t procs[], size_t nprocs,
                       const pmix_info_t info[], size_t ninfo) {
    auto done = std::make_shared<Completion<pmix_status_t>>();
    pmix_status_t rc =
        start(command, procs, nprocs, info, ninfo, [done](pmix_status_t s) { done->complete(s); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    return done->value();
}

pmix_status_t nonblocking(Command command, const pmix_proc_t procs[], size_t nprocs,
                          const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                          void *cbdata) {
    return start(command, procs, nprocs, info, ninfo, [cbfunc, cbdata](pmix_status_t s) {
        if (cbfunc != nullptr) cbfunc(s, cbdata);
    });
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs,
                                       const pmix_info_t info[], size_t ninfo) {
    return blocking(Command::connect, procs, nprocs, info, ninfo);
}

PMIX_EXPORT pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return nonblocking(Command::connect, procs, nprocs, info, ninfo, cbfunc, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo) {
    return blocking(Command::disconnect, procs, nprocs, info, ninfo);
}

PMIX_EXPORT pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t procs[], size_t nprocs,
                                             const pmix_info_t info[], size_t ninfo,
                                             pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return nonblocking(Command::disconnect, procs, nprocs, info, ninfo, cbfunc, cbdata);
}

}  // extern "C"
