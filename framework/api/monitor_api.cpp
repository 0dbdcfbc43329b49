// C entry points PMIx_Process_monitor and PMIx_Process_monitor_nb, and so the
// PMIx_Heartbeat() macro (docs/monitoring.md).
//
// The request is checked here first (psensor/monitor_request.hpp): a request
// nobody could serve fails at once with PMIX_ERR_BAD_PARAM and nothing is
// sent. A heartbeat (PMIX_SEND_HEARTBEAT) is a one-way `heartbeat` message:
// no reply, no callback; it is not even sent until a heartbeat monitor of this
// process was granted, so a process nothing monitors pays one atomic load.
// Everything else is a `monitor` request answered by the server (its psensor
// modules or its host).
#include <pmix.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>

#include "client/request_util.hpp"
#include "mca/logging.hpp"
#include "psensor/monitor_request.hpp"
#include "wire/codec.hpp"

using pmixpp::client::post_request;
using pmixpp::client::request_gate;
using pmixpp::client::timeout_of;
using pmixpp::psensor_base::MonitorKind;
using pmixpp::runtime::Completion;
using pmixpp::wire::BodyReader;
using pmixpp::wire::BodyWriter;
using pmixpp::wire::Command;
using pmixpp::wire::InfoArray;

namespace {

auto log() {
    return pmixpp::mca::framework_logger("psensor");
}

struct Answer {
    pmix_status_t status = PMIX_ERR_TIMEOUT;
    std::shared_ptr<InfoArray> results;
};

// A client, or a tool connected to a server (a tool is monitored like a client).
pmix_status_t monitor_gate() {
    using pmixpp::runtime::Face;
    if (pmixpp::runtime::init_count(Face::tool) == 0) return request_gate();
    return pmixpp::client::Client::instance().connected() ? PMIX_SUCCESS : PMIX_ERR_UNREACH;
}

// A heartbeat already posted to the progress thread and not yet sent: a new
// one adds nothing (the server only needs a beat per window), so a process
// beating every microsecond still has at most one closure and one frame in
// flight.
std::atomic<bool> g_beat_queued{false};

void send_heartbeat() {
    if (!pmixpp::client::Client::instance().heartbeats_wanted()) return;
    if (g_beat_queued.exchange(true, std::memory_order_acq_rel)) return;
    const bool posted = pmixpp::runtime::ProgressEngine::instance().post([] {
        g_beat_queued.store(false, std::memory_order_release);
        if (!pmixpp::client::Client::instance().send_oneway(Command::heartbeat, {})) {
            log()->debug("client: heartbeat not sent: no connection to the server");
        }
    });
    if (!posted) g_beat_queued.store(false, std::memory_order_release);
}

pmix_status_t monitor_async(const pmix_info_t *monitor, pmix_status_t error,
                            const pmix_info_t directives[], size_t ndirs,
                            std::function<void(Answer)> done, bool *oneway) {
    *oneway = false;
    if (pmix_status_t rc = monitor_gate(); rc != PMIX_SUCCESS) return rc;
    if (directives == nullptr && ndirs > 0) return PMIX_ERR_BAD_PARAM;
    std::span<const pmix_info_t> dirs(directives, directives == nullptr ? 0 : ndirs);
    auto kind = pmixpp::psensor_base::check_request(monitor, dirs);
    if (!kind) {
        log()->info("{}", kind.status().message());
        return kind.status().code();
    }
    if (kind.value() == MonitorKind::send_heartbeat) {
        *oneway = true;
        send_heartbeat();
        return PMIX_SUCCESS;
    }
    const bool heartbeat = kind.value() == MonitorKind::heartbeat;
    const bool cancel_all =
        kind.value() == MonitorKind::cancel && pmixpp::psensor_base::cancel_id(*monitor).empty();
    auto body = BodyWriter().infos(monitor, 1).i32(error).infos(directives, dirs.size()).take();
    bool posted =
        post_request(Command::monitor, std::move(body), timeout_of(directives, dirs.size()),
                     [done, heartbeat, cancel_all](pmix_status_t s, BodyReader &r) {
                         Answer a{s, std::make_shared<InfoArray>()};
                         if (r.remaining() > 0 && (!r.infos(*a.results) || !r.finished())) {
                             a.results->reset();
                             if (a.status == PMIX_SUCCESS) a.status = PMIX_ERR_UNPACK_FAILURE;
                         }
                         if (a.status == PMIX_SUCCESS && heartbeat)
                             pmixpp::client::Client::instance().set_heartbeats_wanted(true);
                         if (a.status == PMIX_SUCCESS && cancel_all)
                             pmixpp::client::Client::instance().set_heartbeats_wanted(false);
                         done(std::move(a));
                     });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

void release_answer(void *cbdata) {
    delete static_cast<std::shared_ptr<InfoArray> *>(cbdata);
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Process_monitor(const pmix_info_t *monitor, pmix_status_t error,
                                               const pmix_info_t directives[], size_t ndirs,
                                               pmix_info_t **results, size_t *nresults) {
    if (results != nullptr) *results = nullptr;
    if (nresults != nullptr) *nresults = 0;
    auto done = std::make_shared<Completion<Answer>>();
    bool oneway = false;
    pmix_status_t rc = monitor_async(
        monitor, error, directives, ndirs, [done](Answer a) { done->complete(std::move(a)); },
        &oneway);
    if (rc != PMIX_SUCCESS || oneway) return rc;
    done->wait();
    Answer &a = done->value();
    if (a.results && a.results->size() > 0 && results != nullptr && nresults != nullptr) {
        // A malloc'd copy the caller frees with PMIX_INFO_FREE.
        const std::size_t n = a.results->size();
        auto *arr = static_cast<pmix_info_t *>(std::calloc(n, sizeof(pmix_info_t)));
        if (arr != nullptr) {
            for (std::size_t i = 0; i < n; ++i) PMIx_Info_xfer(&arr[i], &a.results->data()[i]);
            *results = arr;
            *nresults = n;
        }
    }
    return a.status;
}

PMIX_EXPORT pmix_status_t PMIx_Process_monitor_nb(const pmix_info_t *monitor, pmix_status_t error,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_info_cbfunc_t cbfunc, void *cbdata) {
    bool oneway = false;
    pmix_status_t rc = monitor_async(
        monitor, error, directives, ndirs,
        [cbfunc, cbdata](Answer a) {
            if (cbfunc == nullptr) return;
            // The results stay ours until the caller calls the release function.
            auto *keep = new std::shared_ptr<InfoArray>(a.results);
            cbfunc(a.status, a.results->data(), a.results->size(), cbdata, release_answer, keep);
        },
        &oneway);
    // A heartbeat has no answer: "done now" when the caller gave a callback,
    // which is then not called (the _nb rule for PMIX_OPERATION_SUCCEEDED).
    if (rc == PMIX_SUCCESS && oneway && cbfunc != nullptr) return PMIX_OPERATION_SUCCEEDED;
    return rc;
}

}  // extern "C"
