// C entry points of event notification: PMIx_Register_event_handler,
// PMIx_Deregister_event_handler, PMIx_Notify_event (framework/event/README.md).
//
// Each checks its arguments in the caller's thread and does the work on the
// progress thread. The non-blocking forms return PMIX_SUCCESS and call their
// callback once, on the progress thread; the blocking forms wait for it
// (runtime::Completion pumps the loop when called from a handler).
#include <pmix.h>
#include <pmix_server.h>

#include <memory>
#include <utility>

#include "client/client.hpp"
#include "client/groups.hpp"
#include "event/process_events.hpp"
#include "mca/logging.hpp"
#include "runtime/init_state.hpp"
#include "runtime/progress.hpp"
#include "server/server.hpp"

using pmixpp::client::Client;
using pmixpp::events::Event;
using pmixpp::events::ProcessEvents;
using pmixpp::events::RegistrationSpec;
using pmixpp::runtime::Completion;
using pmixpp::runtime::Face;
using pmixpp::runtime::ProgressEngine;
using pmixpp::server::Server;

namespace {

auto log() {
    return pmixpp::mca::framework_logger("event");
}

bool server_up() {
    return pmixpp::runtime::init_count(Face::server) > 0;
}

using StatusDone = std::function<void(pmix_status_t)>;

// Progress thread: registers, tells the server (client face), then reports
// and only then activates, so that no event reaches the handler before its
// registration callback ran (standard: PMIx_Register_event_handler).
void register_handler(RegistrationSpec spec, pmix_notification_fn_t fn,
                      std::function<void(pmix_status_t, std::size_t)> report) {
    auto &events = ProcessEvents::instance();
    auto added = events.registry().add(spec, fn);
    if (!added) {
        log()->info("PMIx_Register_event_handler: {}", added.status().message());
        report(added.status().code(), 0);
        return;
    }
    const std::size_t id = added.value();
    auto activate = [id, report = std::move(report)](pmix_status_t) {
        report(PMIX_SUCCESS, id);
        ProcessEvents::instance().registry().activate(id);
        if (Server::instance().active()) Server::instance().replay_to_self(id);
        // The server is gone for good: a handler that matches the loss hears
        // of it now, as a cached event is replayed (docs/events.md).
        if (auto lost = Client::instance().lost_event())
            ProcessEvents::instance().deliver(lost, id);
    };
    auto &client = Client::instance();
    if (client.connected() && client.register_events_early(id, spec)) {
        // The server sends every event in range here, whatever it knows of
        // this handler: complete now. The request was written or queued
        // first, so what this process sends after the callback reaches the
        // server after it (docs/events.md, "Registration without a round
        // trip").
        activate(PMIX_SUCCESS);
    } else if (client.connected()) {
        // A lost server still leaves the handler for this process's own events.
        client.register_events(id, spec, std::move(activate));
    } else {
        activate(PMIX_SUCCESS);
    }
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_notification_fn_t evhdlr,
                                                      pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata) {
    if (!pmixpp::runtime::any_face_initialized()) return PMIX_ERR_INIT;
    if (evhdlr == nullptr || (codes == nullptr && ncodes > 0)) return PMIX_ERR_BAD_PARAM;
    // A group among the sources or affected processes stands for its
    // members (client/groups.hpp): the group must be known here by now.
    pmixpp::wire::InfoArray translated;
    if (const pmix_status_t rc =
            pmixpp::client::GroupTable::instance().translate_range(info, ninfo, translated);
        rc != PMIX_SUCCESS)
        return rc;
    if (!translated.empty()) {
        info = translated.data();
        ninfo = translated.size();
    }
    auto spec = RegistrationSpec::parse({codes, codes == nullptr ? 0 : ncodes},
                                        {info, info == nullptr ? 0 : ninfo});
    if (!spec) {
        log()->info("PMIx_Register_event_handler: {}", spec.status().message());
        return spec.status().code();
    }
    if (cbfunc != nullptr) {
        const bool posted = ProgressEngine::instance().post(
            [s = std::move(spec).value(), evhdlr, cbfunc, cbdata]() mutable {
                register_handler(
                    std::move(s), evhdlr,
                    [cbfunc, cbdata](pmix_status_t st, std::size_t id) { cbfunc(st, id, cbdata); });
            });
        return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
    }
    auto done = std::make_shared<Completion<std::pair<pmix_status_t, std::size_t>>>();
    const bool posted =
        ProgressEngine::instance().post([s = std::move(spec).value(), evhdlr, done]() mutable {
            register_handler(std::move(s), evhdlr, [done](pmix_status_t st, std::size_t id) {
                done->complete({st, id});
            });
        });
    if (!posted) return PMIX_ERR_INIT;
    done->wait();
    // Blocking form: the id when >= 0, else the error (standard).
    const auto [st, id] = done->value();
    return st == PMIX_SUCCESS ? static_cast<pmix_status_t>(id) : st;
}

PMIX_EXPORT pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref, pmix_op_cbfunc_t cbfunc,
                                                        void *cbdata) {
    if (!pmixpp::runtime::any_face_initialized()) return PMIX_ERR_INIT;
    auto done = std::make_shared<Completion<pmix_status_t>>();
    StatusDone report = [done, cbfunc, cbdata](pmix_status_t st) {
        if (cbfunc != nullptr) {
            cbfunc(st, cbdata);
        } else {
            done->complete(st);
        }
    };
    const bool posted = ProgressEngine::instance().post([evhdlr_ref, report] {
        // Removed here, so no event reaches the handler once this completes.
        if (!ProcessEvents::instance().registry().remove(evhdlr_ref)) {
            report(PMIX_ERR_BAD_PARAM);
            return;
        }
        auto &client = Client::instance();
        if (client.connected()) {
            client.deregister_events(evhdlr_ref, [report](pmix_status_t) { report(PMIX_SUCCESS); });
        } else {
            report(PMIX_SUCCESS);
        }
    });
    if (!posted) return PMIX_ERR_INIT;
    if (cbfunc != nullptr) return PMIX_SUCCESS;
    done->wait();
    return done->value();
}

PMIX_EXPORT pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                            pmix_data_range_t range, const pmix_info_t info[],
                                            size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!pmixpp::runtime::any_face_initialized()) return PMIX_ERR_INIT;
    auto &client = Client::instance();
    const bool as_client = client.connected();
    // An unconnected tool (PMIX_TOOL_DO_NOT_CONNECT) reaches its own handlers only.
    if (!as_client && !server_up() && range != PMIX_RANGE_PROC_LOCAL) return PMIX_ERR_NOT_SUPPORTED;
    pmix_proc_t self = client.self();
    // A client's own event has itself as source when none is given; the
    // host's, the SMS (standard: pmix_notification_fn_t).
    const pmix_proc_t *src = source != nullptr ? source : (as_client ? &self : nullptr);
    // A group in the custom range or among the affected processes stands
    // for its members (client/groups.hpp).
    pmixpp::wire::InfoArray translated;
    if (info != nullptr) {
        const pmix_status_t rc =
            pmixpp::client::GroupTable::instance().translate_range(info, ninfo, translated);
        if (rc != PMIX_SUCCESS) return rc;
        if (!translated.empty()) {
            info = translated.data();
            ninfo = translated.size();
        }
    }
    auto ev = std::make_shared<const Event>(
        Event::make(status, src, range, info, info == nullptr ? 0 : ninfo));
    if (cbfunc == nullptr && as_client && ev->range != PMIX_RANGE_PROC_LOCAL) {
        // Blocking, to the server: the operation is complete once the request
        // is written or queued (the standard: "any messages required ... will
        // have been queued, but may not yet have been transmitted", and a
        // success does not reflect the delivery to any recipient). The
        // server sends no answer to wait for (docs/events.md, "Blocking
        // PMIx_Notify_event").
        if (client.notify_event_unanswered_direct(*ev)) return PMIX_SUCCESS;
        auto queued = std::make_shared<Completion<pmix_status_t>>();
        if (!ProgressEngine::instance().post([ev, queued] {
                queued->complete(Client::instance().notify_event_unanswered(*ev));
            })) {
            return PMIX_ERR_INIT;
        }
        queued->wait();
        return queued->value();
    }
    auto done = std::make_shared<Completion<pmix_status_t>>();
    StatusDone report = [done, cbfunc, cbdata](pmix_status_t st) {
        if (cbfunc != nullptr) {
            cbfunc(st, cbdata);
        } else {
            done->complete(st);
        }
    };
    // A client's event goes to the server from this thread when its
    // connection is idle: one wake-up (the progress thread's) less before the
    // server has it (docs/events.md, "Latency").
    const bool direct = as_client && ev->range != PMIX_RANGE_PROC_LOCAL &&
                        Client::instance().notify_event_direct(*ev, report);
    const bool posted = direct || ProgressEngine::instance().post([ev, as_client, report] {
        if (ev->range == PMIX_RANGE_PROC_LOCAL) {
            // Other threads of this process only: never leaves it.
            ProcessEvents::instance().deliver(ev);
            report(PMIX_SUCCESS);
        } else if (as_client) {
            Client::instance().notify_event(*ev, report);
        } else {
            Server::instance().notify_from_host(ev);
            report(PMIX_SUCCESS);
        }
    });
    if (!posted) return PMIX_ERR_INIT;
    if (cbfunc != nullptr) return PMIX_SUCCESS;
    done->wait();
    return done->value();
}

}  // extern "C"
