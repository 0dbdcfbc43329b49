// The Logging service (logging.hpp; docs/logging.md).
//
// Identity: a client's or tool's entries are tagged in the channels with the
// process that sent them, as the handshake authenticated it; a
// PMIX_LOG_SOURCE it gave is carried through to the host untouched (the host
// decides what to make of it). The server's own calls may name any source.
// Timestamp: the caller's PMIX_LOG_TIMESTAMP (stamped at the caller when it
// asked for PMIX_LOG_GENERATE_TIMESTAMP), else the time the server got the
// request, so that every channel and the host see the same one.
#include "server/logging.hpp"

#include <spdlog/fmt/fmt.h>
#include <unistd.h>

#include <ctime>
#include <string>

#include "mca/logging.hpp"
#include "pmixpp/mca/info.hpp"
#include "server/upcall_results.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using mca::plog::EntryResult;
using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;

namespace {

auto log() {
    return mca::framework_logger(mca::plog::kFrameworkName);
}

std::string proc_name(const pmix_proc_t &p) {
    return fmt::format("{}:{}", std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)), p.rank);
}

// The directives every channel and the host see: the caller's, with a
// timestamp added when it gave none.
mca::InfoArray stamped(mca::InfoArray directives) {
    if (mca::find_info(directives.span(), PMIX_LOG_TIMESTAMP) == nullptr) {
        pmix_info_t ts{};
        const std::time_t now = std::time(nullptr);
        PMIx_Info_load(&ts, PMIX_LOG_TIMESTAMP, &now, PMIX_TIME);
        directives.adopt(ts);
    }
    return directives;
}

}  // namespace

Logging::Logging(const HostUpcalls &host, RequestTable &requests) : host_(host) {
    requests.add(wire::Command::log, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_log(ch, frame, client);
    });
}

void Logging::start(std::shared_ptr<plog_base::Channels> channels, bool gateway) {
    channels_ = std::move(channels);
    gateway_ = gateway;
}

void Logging::clear() {
    channels_.reset();
    gateway_ = false;
}

void Logging::handle_log(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    wire::InfoArray data, directives;
    r.infos(data);
    r.infos(directives);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed log request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    route(client->proc, client->uid, client->gid, std::move(data), std::move(directives),
          [reply](pmix_status_t status, const std::string &failures) {
              // The status, then (not read by older clients) the failures' text.
              send_reply(reply, BodyWriter().i32(status).str(failures).take());
          });
}

void Logging::log_local(const pmix_proc_t &self, std::span<const pmix_info_t> data,
                        std::span<const pmix_info_t> directives,
                        std::function<void(pmix_status_t)> done) {
    pmix_proc_t source = self;
    if (const pmix_info_t *s = mca::find_info(directives, PMIX_LOG_SOURCE);
        s != nullptr && s->value.type == PMIX_PROC && s->value.data.proc != nullptr) {
        source = *s->value.data.proc;
    }
    route(source, getuid(), getgid(), mca::InfoArray::copy_of(data),
          mca::InfoArray::copy_of(directives),
          [done = std::move(done)](pmix_status_t status, const std::string &) { done(status); });
}

void Logging::route(const pmix_proc_t &source, uid_t uid, gid_t gid, mca::InfoArray data,
                    mca::InfoArray directives,
                    std::function<void(pmix_status_t, std::string)> done) {
    if (data.empty()) {
        done(PMIX_ERR_BAD_PARAM, "no entry to log");
        return;
    }
    auto call = std::make_shared<plog_base::LogCall>();
    call->source = source;
    call->data = std::move(data);
    call->directives = stamped(std::move(directives));
    call->gateway = gateway_;

    // What the host gets with each entry no channel took: the directives
    // with the caller's identity as the server knows it, and the source.
    auto host_dirs = std::make_shared<HostInfo>();
    host_dirs->add_copies_as(call->directives.span(), static_cast<std::uint32_t>(uid),
                             static_cast<std::uint32_t>(gid));
    if (mca::find_info(call->directives.span(), PMIX_LOG_SOURCE) == nullptr) {
        pmix_info_t src{};
        PMIx_Info_load(&src, PMIX_LOG_SOURCE, &source, PMIX_PROC);
        host_dirs->adopt(src);
    }
    const HostUpcalls *host = &host_;
    plog_base::HostLog to_host = [host, call, host_dirs](const pmix_info_t &entry,
                                                         std::function<void(EntryResult)> settled) {
        if ((*host)->log == nullptr) {
            settled(EntryResult(PMIX_ERR_NOT_SUPPORTED,
                                "no plog channel serves it and the host has no log upcall"));
            return;
        }
        auto one = std::make_shared<mca::InfoArray>(mca::InfoArray::copy_of(&entry, 1));
        const pmix_proc_t proc = call->source;
        // The 4.x log upcall returns nothing: the host always calls back.
        call_host_op(
            [host, proc, one, host_dirs](pmix_op_cbfunc_t cb, void *cbdata) {
                (*host)->log(&proc, one->data(), one->size(), host_dirs->data(), host_dirs->size(),
                             cb, cbdata);
                return PMIX_SUCCESS;
            },
            [one, host_dirs, settled](pmix_status_t s) {
                settled(
                    EntryResult(s, s == PMIX_SUCCESS ? "" : "the host's log upcall answered so"));
            });
    };
    plog_base::Router(channels_).log(
        call, std::move(to_host), [call, done = std::move(done)](plog_base::LogOutcome out) {
            std::string failures = out.failures();
            // A PMIX_LOG_ONCE call that got through after failed attempts
            // succeeded: its failures are worth an info line, not a warning.
            if (!failures.empty()) {
                log()->log(out.status == PMIX_SUCCESS ? spdlog::level::info : spdlog::level::warn,
                           "log request of {}: {}: {}", proc_name(call->source),
                           PMIx_Error_string(out.status), failures);
            }
            done(out.status, std::move(failures));
        });
}

}  // namespace pmixpp::server
