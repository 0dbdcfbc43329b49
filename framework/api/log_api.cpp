// C entry points PMIx_Log and PMIx_Log_nb (docs/logging.md).
//
// A client or a connected tool sends the request to its server (the Logging
// service routes it); a server process that is not itself connected to a
// server logs through its own Logging service, as itself (or as the
// PMIX_LOG_SOURCE it names). Either way PMIX_LOG_GENERATE_TIMESTAMP is
// turned into a PMIX_LOG_TIMESTAMP here, at the caller, unless the caller gave
// one.
#include <pmix.h>

#include <ctime>
#include <functional>
#include <memory>
#include <string>

#include "client/request_util.hpp"
#include "mca/logging.hpp"
#include "pmixpp/mca/info.hpp"
#include "pmixpp/mca/info_array.hpp"
#include "runtime/init_state.hpp"
#include "runtime/progress.hpp"
#include "server/server.hpp"
#include "wire/codec.hpp"

using pmixpp::client::post_request;
using pmixpp::client::timeout_of;
using pmixpp::mca::InfoArray;
using pmixpp::runtime::Completion;
using pmixpp::runtime::Face;
using pmixpp::runtime::ProgressEngine;
using pmixpp::wire::BodyReader;
using pmixpp::wire::BodyWriter;
using pmixpp::wire::Command;

namespace {

// The caller's directives, with PMIX_LOG_TIMESTAMP set to now when it asked
// for PMIX_LOG_GENERATE_TIMESTAMP and gave no timestamp of its own.
InfoArray stamp_at_caller(const pmix_info_t directives[], size_t ndirs) {
    InfoArray out = InfoArray::copy_of(directives, directives == nullptr ? 0 : ndirs);
    const bool generate =
        pmixpp::mca::info_flag(out.span(), PMIX_LOG_GENERATE_TIMESTAMP).value_or(false);
    if (generate && pmixpp::mca::find_info(out.span(), PMIX_LOG_TIMESTAMP) == nullptr) {
        pmix_info_t ts{};
        const std::time_t now = std::time(nullptr);
        PMIx_Info_load(&ts, PMIX_LOG_TIMESTAMP, &now, PMIX_TIME);
        out.adopt(ts);
    }
    return out;
}

bool server_process() {
    return pmixpp::runtime::init_count(Face::server) > 0 &&
           !pmixpp::client::Client::instance().connected();
}

pmix_status_t log_async(const pmix_info_t data[], size_t ndata, const pmix_info_t directives[],
                        size_t ndirs, std::function<void(pmix_status_t)> done) {
    if (server_process()) {
        if (data == nullptr || ndata == 0 || (directives == nullptr && ndirs > 0))
            return PMIX_ERR_BAD_PARAM;
        auto entries = std::make_shared<InfoArray>(InfoArray::copy_of(data, ndata));
        auto dirs = std::make_shared<InfoArray>(stamp_at_caller(directives, ndirs));
        bool posted = ProgressEngine::instance().post([entries, dirs, done = std::move(done)] {
            auto &server = pmixpp::server::Server::instance();
            if (!server.active()) {
                done(PMIX_ERR_INIT);
                return;
            }
            server.logging().log_local(server.self(), entries->span(), dirs->span(), done);
        });
        return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
    }
    // request_gate() of a client or a tool: a connected tool logs too.
    if (!pmixpp::runtime::any_face_initialized()) return PMIX_ERR_INIT;
    if (!pmixpp::client::Client::instance().connected()) return PMIX_ERR_NOT_SUPPORTED;
    if (data == nullptr || ndata == 0 || (directives == nullptr && ndirs > 0))
        return PMIX_ERR_BAD_PARAM;
    InfoArray dirs = stamp_at_caller(directives, ndirs);
    // The reply: the status, then the failed entries named (a warning in the
    // server; here at PMIX_MCA_plog_base_verbose >= 1).
    auto body = BodyWriter().infos(data, ndata).infos(dirs.data(), dirs.size()).take();
    bool posted = post_request(Command::log, std::move(body), timeout_of(directives, ndirs),
                               [done](pmix_status_t s, BodyReader &r) {
                                   std::string failures;
                                   if (r.remaining() > 0 && r.str(failures) && !failures.empty()) {
                                       pmixpp::mca::framework_logger("plog")->info(
                                           "PMIx_Log: {}: {}", PMIx_Error_string(s), failures);
                                   }
                                   done(s);
                               });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Log(const pmix_info_t data[], size_t ndata,
                                   const pmix_info_t directives[], size_t ndirs) {
    auto done = std::make_shared<Completion<pmix_status_t>>();
    pmix_status_t rc =
        log_async(data, ndata, directives, ndirs, [done](pmix_status_t s) { done->complete(s); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    return done->value();
}

PMIX_EXPORT pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata,
                                      const pmix_info_t directives[], size_t ndirs,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return log_async(data, ndata, directives, ndirs, [cbfunc, cbdata](pmix_status_t s) {
        if (cbfunc != nullptr) cbfunc(s, cbdata);
    });
}

}  // extern "C"
