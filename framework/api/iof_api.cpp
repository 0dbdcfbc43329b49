// IO forwarding from a client's or a tool's side (docs/iof.md):
// PMIx_IOF_pull / _deregister / _push and the `iof` messages the server
// sends for a pull. The server's side is server/iof.cpp.
//
// Threads: the C entry points check and copy their arguments and post the
// work to the progress thread; registrations (iof_pulls_) live there and the
// output handlers run there.
#include <pmix.h>
#include <pmix_tool.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "client/request_util.hpp"
#include "event/event.hpp"
#include "mca/logging.hpp"

using pmixpp::client::Client;
using pmixpp::runtime::Completion;
using pmixpp::runtime::ProgressEngine;
using pmixpp::wire::InfoArray;

namespace {

// A client, or a tool connected to a server (tools share this library).
pmix_status_t iof_gate() {
    using pmixpp::runtime::Face;
    if (pmixpp::runtime::init_count(Face::tool) == 0) return pmixpp::client::request_gate();
    return Client::instance().connected() ? PMIX_SUCCESS : PMIX_ERR_UNREACH;
}

// Formatting, buffering and file output of forwarded IO are not built
// (docs/iof.md): refused when required, otherwise ignored.
pmix_status_t check_directives(const pmix_info_t *dirs, size_t ndirs) {
    static constexpr const char *kNotBuilt[] = {
        PMIX_IOF_BUFFERING_SIZE,      PMIX_IOF_BUFFERING_TIME,      PMIX_IOF_TAG_OUTPUT,
        PMIX_IOF_TAG_DETAILED_OUTPUT, PMIX_IOF_TAG_FULLNAME_OUTPUT, PMIX_IOF_TIMESTAMP_OUTPUT,
        PMIX_IOF_XML_OUTPUT,          PMIX_IOF_RANK_OUTPUT,         PMIX_IOF_OUTPUT_TO_FILE,
        PMIX_IOF_OUTPUT_TO_DIRECTORY, PMIX_IOF_FILE_PATTERN,        PMIX_IOF_FILE_ONLY,
        PMIX_IOF_MERGE_STDERR_STDOUT};
    if (dirs == nullptr && ndirs > 0) return PMIX_ERR_BAD_PARAM;
    for (size_t i = 0; i < ndirs; ++i) {
        if (!PMIX_INFO_IS_REQUIRED(&dirs[i])) continue;
        for (const char *key : kNotBuilt) {
            if (PMIX_CHECK_KEY(&dirs[i], key)) return PMIX_ERR_NOT_SUPPORTED;
        }
    }
    return PMIX_SUCCESS;
}

// Where an operation's status goes: the caller's cbfunc, or, when it gave
// none, a waiter the entry point blocks on (finish()).
struct OpDone {
    std::shared_ptr<Completion<pmix_status_t>> waiter;
    pmix_op_cbfunc_t cbfunc = nullptr;
    void *cbdata = nullptr;

    OpDone(pmix_op_cbfunc_t fn, void *data) : cbfunc(fn), cbdata(data) {
        if (fn == nullptr) waiter = std::make_shared<Completion<pmix_status_t>>();
    }
    void operator()(pmix_status_t s) const {
        if (waiter) {
            waiter->complete(s);
        } else {
            cbfunc(s, cbdata);
        }
    }
    // The entry point's answer once the work was (or was not) posted.
    pmix_status_t finish(bool posted) const {
        if (!posted) return PMIX_ERR_INIT;
        if (!waiter) return PMIX_SUCCESS;
        waiter->wait();
        return waiter->value();
    }
};

std::shared_ptr<InfoArray> copy_directives(const pmix_info_t *dirs, size_t ndirs) {
    return std::make_shared<InfoArray>(InfoArray::copy_of(dirs, dirs == nullptr ? 0 : ndirs));
}

}  // namespace

extern "C" {

// regcbfunc NULL: the standard defines no blocking form; like OpenPMIx, the
// call waits and returns the reference (>= 0) or a negative error.
PMIX_EXPORT pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t directives[], size_t ndirs,
                                        pmix_iof_channel_t channel, pmix_iof_cbfunc_t cbfunc,
                                        pmix_hdlr_reg_cbfunc_t regcbfunc, void *regcbdata) {
    if (pmix_status_t rc = iof_gate(); rc != PMIX_SUCCESS) return rc;
    if (procs == nullptr || nprocs == 0 || channel == PMIX_FWD_NO_CHANNELS)
        return PMIX_ERR_BAD_PARAM;
    // Standard: stdin is pushed, never pulled.
    if ((channel & PMIX_FWD_STDIN_CHANNEL) != 0) return PMIX_ERR_NOT_SUPPORTED;
    if (pmix_status_t rc = check_directives(directives, ndirs); rc != PMIX_SUCCESS) return rc;
    auto dirs = copy_directives(directives, ndirs);
    std::vector<pmix_proc_t> sources(procs, procs + nprocs);
    using Result = std::pair<pmix_status_t, std::size_t>;
    auto waiter = regcbfunc == nullptr ? std::make_shared<Completion<Result>>() : nullptr;
    std::function<void(pmix_status_t, std::size_t)> done = [waiter, regcbfunc, regcbdata](
                                                               pmix_status_t s, std::size_t ref) {
        if (waiter) {
            waiter->complete({s, ref});
        } else {
            regcbfunc(s, ref, regcbdata);
        }
    };
    if (!ProgressEngine::instance().post([sources = std::move(sources), channel, dirs, cbfunc,
                                          done]() mutable {
            Client::instance().iof_pull(std::move(sources), channel, dirs, cbfunc, std::move(done));
        })) {
        return PMIX_ERR_INIT;
    }
    if (!waiter) return PMIX_SUCCESS;
    waiter->wait();
    const auto [status, ref] = waiter->value();
    return status == PMIX_SUCCESS ? static_cast<pmix_status_t>(ref) : status;
}

PMIX_EXPORT pmix_status_t PMIx_IOF_deregister(size_t iofhdlr, const pmix_info_t directives[],
                                              size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (pmix_status_t rc = iof_gate(); rc != PMIX_SUCCESS) return rc;
    if (directives == nullptr && ndirs > 0) return PMIX_ERR_BAD_PARAM;
    auto dirs = copy_directives(directives, ndirs);
    const OpDone done(cbfunc, cbdata);
    return done.finish(ProgressEngine::instance().post(
        [iofhdlr, dirs, done] { Client::instance().iof_deregister(iofhdlr, dirs, done); }));
}

// The payload is copied here; cbfunc (NULL: the call blocks) reports the
// host's push_stdin answer. bo NULL with PMIX_IOF_COMPLETE: end of stream,
// passed to the host as an empty payload.
PMIX_EXPORT pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets,
                                        pmix_byte_object_t *bo, const pmix_info_t directives[],
                                        size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (pmix_status_t rc = iof_gate(); rc != PMIX_SUCCESS) return rc;
    if (directives == nullptr && ndirs > 0) return PMIX_ERR_BAD_PARAM;
    bool complete = false;
    for (size_t i = 0; i < ndirs; ++i) {
        // Reading our own stdin for the caller is not built (docs/iof.md).
        if (PMIX_CHECK_KEY(&directives[i], PMIX_IOF_PUSH_STDIN) &&
            pmixpp::events::info_true(directives[i]))
            return PMIX_ERR_NOT_SUPPORTED;
        if (PMIX_CHECK_KEY(&directives[i], PMIX_IOF_COMPLETE))
            complete = pmixpp::events::info_true(directives[i]);
    }
    if (pmix_status_t rc = check_directives(directives, ndirs); rc != PMIX_SUCCESS) return rc;
    if ((targets == nullptr && ntargets > 0) || (bo == nullptr && !complete) ||
        (bo != nullptr && (ntargets == 0 || (bo->bytes == nullptr && bo->size > 0)))) {
        return PMIX_ERR_BAD_PARAM;
    }
    std::span<const std::uint8_t> payload;
    if (bo != nullptr && bo->size > 0)
        payload = {reinterpret_cast<const std::uint8_t *>(bo->bytes), bo->size};
    auto body = pmixpp::wire::BodyWriter()
                    .procs(targets, targets == nullptr ? 0 : ntargets)
                    .bytes(payload)
                    .infos(directives, directives == nullptr ? 0 : ndirs)
                    .take();
    const OpDone done(cbfunc, cbdata);
    return done.finish(pmixpp::client::post_request(
        pmixpp::wire::Command::iof_push, std::move(body),
        pmixpp::client::timeout_of(directives, ndirs),
        [done](pmix_status_t s, pmixpp::wire::BodyReader &) { done(s); }));
}

}  // extern "C"
