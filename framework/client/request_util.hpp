// Helpers shared by the client's request-style calls (api/publish_api.cpp,
// query.cpp, api/job_control_api.cpp, api/allocation_api.cpp): the gate every
// call passes, a request bounded by the caller's PMIX_TIMEOUT, the reading of
// common directives, and answers carrying an info array.
#pragma once

#include <pmix.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "client/client.hpp"
#include "runtime/init_state.hpp"
#include "runtime/progress.hpp"
#include "wire/message.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::client {

// PMIX_SUCCESS when a request can go to a server; PMIX_ERR_INIT before any
// init; PMIX_ERR_NOT_SUPPORTED in a server process (no server above it).
inline pmix_status_t request_gate() {
    using runtime::Face;
    if (runtime::init_count(Face::client) == 0 && runtime::init_count(Face::server) == 0 &&
        runtime::init_count(Face::tool) == 0)
        return PMIX_ERR_INIT;
    return Client::instance().connected() ? PMIX_SUCCESS : PMIX_ERR_NOT_SUPPORTED;
}

// PMIX_TIMEOUT (INT or UINT32 seconds) among `info`; 0 when absent.
inline std::uint32_t timeout_of(const pmix_info_t *info, std::size_t ninfo) {
    for (std::size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (!PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) continue;
        if (info[i].value.type == PMIX_INT && info[i].value.data.integer > 0)
            return static_cast<std::uint32_t>(info[i].value.data.integer);
        if (info[i].value.type == PMIX_UINT32) return info[i].value.data.uint32;
        if (info[i].value.type == PMIX_INT32 && info[i].value.data.int32 > 0)
            return static_cast<std::uint32_t>(info[i].value.data.int32);
    }
    return 0;
}

// Progress thread: sends the request; `handler` runs exactly once, with the
// reply, or with PMIX_ERR_TIMEOUT (and an empty reader) when `timeout_s` > 0
// seconds pass first: a backstop for a host that never answers. The host is
// given the timeout too and normally answers first.
inline void bounded_request(wire::Command command, std::vector<std::uint8_t> body,
                            std::uint32_t timeout_s, ReplyHandler handler) {
    auto once = std::make_shared<ReplyHandler>(std::move(handler));
    std::uint64_t timer = 0;
    if (timeout_s > 0) {
        // One second of slack so that the host's own timeout answers first.
        timer =
            runtime::ProgressEngine::instance().after(std::chrono::seconds(timeout_s + 1), [once] {
                if (!*once) return;
                auto fn = std::move(*once);
                *once = nullptr;
                wire::BodyReader empty({});
                fn(PMIX_ERR_TIMEOUT, empty);
            });
    }
    Client::instance().request(command, std::move(body),
                               [once, timer](pmix_status_t s, wire::BodyReader &r) {
                                   if (timer != 0)
                                       runtime::ProgressEngine::instance().cancel(timer);
                                   if (!*once) return;
                                   auto fn = std::move(*once);
                                   *once = nullptr;
                                   fn(s, r);
                               });
}

// Any thread: posts bounded_request to the progress thread. False when the
// progress thread is not running.
inline bool post_request(wire::Command command, std::vector<std::uint8_t> body,
                         std::uint32_t timeout_s, ReplyHandler handler) {
    return runtime::ProgressEngine::instance().post(
        [command, b = std::move(body), timeout_s, h = std::move(handler)]() mutable {
            bounded_request(command, std::move(b), timeout_s, std::move(h));
        });
}

// Writes a key list: u32 n, n x str.
inline wire::BodyWriter &write_keys(wire::BodyWriter &w, char **keys) {
    std::uint32_t n = 0;
    for (char **k = keys; k != nullptr && *k != nullptr; ++k) ++n;
    w.u32(n);
    for (char **k = keys; k != nullptr && *k != nullptr; ++k) w.str(*k);
    return w;
}

// A status and the info array that came with it: the answer of a request
// whose reply is `status [infos]` (job control, allocation); on an error the
// infos are the host's reason. `results` is never null once read.
struct InfoAnswer {
    pmix_status_t status = PMIX_ERR_TIMEOUT;
    std::shared_ptr<wire::InfoArray> results;
};

inline InfoAnswer read_info_answer(pmix_status_t s, wire::BodyReader &r) {
    InfoAnswer a{s, std::make_shared<wire::InfoArray>()};
    if (r.remaining() > 0 && (!r.infos(*a.results) || !r.finished())) {
        a.results->reset();
        if (a.status == PMIX_SUCCESS) a.status = PMIX_ERR_UNPACK_FAILURE;
    }
    return a;
}

// For a blocking caller: `out` gets a malloc'd copy of the answer's results
// (freed with PMIX_INFO_FREE; the payloads move), or NULL/0 when there are none.
inline void hand_out(InfoAnswer &a, pmix_info_t **out, std::size_t *nout) {
    if (out != nullptr) *out = nullptr;
    if (nout != nullptr) *nout = 0;
    if (!a.results || a.results->size() == 0 || out == nullptr || nout == nullptr) return;
    const std::size_t n = a.results->size();
    auto *arr = static_cast<pmix_info_t *>(std::calloc(n, sizeof(pmix_info_t)));
    if (arr == nullptr) return;
    std::memcpy(arr, a.results->data(), n * sizeof(pmix_info_t));
    for (std::size_t i = 0; i < n; ++i)
        std::memset(&a.results->data()[i].value, 0, sizeof(pmix_value_t));
    *out = arr;
    *nout = n;
}

// For a non-blocking caller: `cbfunc` (if any) gets the answer; the results
// stay ours until it calls the release function.
inline void call_info_cbfunc(pmix_info_cbfunc_t cbfunc, void *cbdata, const InfoAnswer &a) {
    if (cbfunc == nullptr) return;
    auto *keep = new std::shared_ptr<wire::InfoArray>(a.results);
    cbfunc(
        a.status, a.results->data(), a.results->size(), cbdata,
        [](void *held) { delete static_cast<std::shared_ptr<wire::InfoArray> *>(held); }, keep);
}

using InfoAnswerDone = std::function<void(InfoAnswer)>;

// Any thread: posts a request whose reply is an InfoAnswer. False when the
// progress thread is not running.
inline bool post_info_request(wire::Command command, std::vector<std::uint8_t> body,
                              std::uint32_t timeout_s, InfoAnswerDone done) {
    return post_request(command, std::move(body), timeout_s,
                        [done = std::move(done)](pmix_status_t s, wire::BodyReader &r) {
                            done(read_info_answer(s, r));
                        });
}

// The blocking form of a non-blocking call `start` (its return: whether the
// request went; anything but PMIX_SUCCESS is returned at once): waits for
// the answer, hands its results out and returns its status.
inline pmix_status_t wait_info_answer(const std::function<pmix_status_t(InfoAnswerDone)> &start,
                                      pmix_info_t **results, std::size_t *nresults) {
    if (results != nullptr) *results = nullptr;
    if (nresults != nullptr) *nresults = 0;
    auto done = std::make_shared<runtime::Completion<InfoAnswer>>();
    const pmix_status_t rc = start([done](InfoAnswer a) { done->complete(std::move(a)); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    hand_out(done->value(), results, nresults);
    return done->value().status;
}

}  // namespace pmixpp::client
