#include "event/chain.hpp"

#include <atomic>
#include <cstring>

#include "wire/codec.hpp"

namespace pmixpp::events {

namespace {

bool is_termination(const pmix_info_t &i) {
    return PMIX_CHECK_KEY(&i, PMIX_EVENT_NO_TERMINATION) ||
           PMIX_CHECK_KEY(&i, PMIX_EVENT_WANT_TERMINATION);
}

pmix_info_t copy_info(const pmix_info_t &in) {
    pmix_info_t out;
    std::memset(&out, 0, sizeof out);
    if (wire::copy(PMIX_INFO, &out, &in, 1) != PMIX_SUCCESS) {
        std::memset(&out, 0, sizeof out);
        PMIX_LOAD_KEY(out.key, in.key);
    }
    return out;
}

void release_info(pmix_info_t &i) {
    wire::destruct(PMIX_INFO, &i, 1);
}

}  // namespace

// What a handler's completion function gets as notification_cbdata: one per
// handler call. The standard lets a handler call its completion function
// once; the first call frees the step (or hands it to the continuation), so
// a second call reads freed memory: only one that comes while the first is
// still running is ignored (`completed`). Not guarded further (docs/events.md,
// "Limits").
struct EventChain::Step {
    std::shared_ptr<EventChain> chain;
    std::shared_ptr<const Handler> handler;
    std::atomic<bool> completed{false};
};

void EventChain::run(std::vector<std::shared_ptr<const Handler>> handlers,
                     std::shared_ptr<const Event> event, Post post, IsRegistered registered,
                     std::function<void()> done, Results results) {
    auto chain = std::make_shared<EventChain>(Key{});  // one allocation
    chain->handlers_ = std::move(handlers);
    chain->event_ = std::move(event);
    chain->post_ = std::move(post);
    chain->registered_ = std::move(registered);
    chain->done_ = std::move(done);
    chain->results_fn_ = std::move(results);
    chain->call_next();
}

// run_one()'s state: the completion function's notification_cbdata. Two
// references, the call's and the completion's: whichever ends last frees it,
// so the event (and the info array given to the handler) outlives both.
struct EventChain::Solo {
    std::shared_ptr<const Handler> handler;
    std::shared_ptr<const Event> event;
    Post post;
    std::vector<pmix_info_t> call_info;  // with PMIX_EVENT_RETURN_OBJECT (not owned)
    std::atomic<int> refs{2};
    std::atomic<bool> completed{false};
    void release() {
        if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
    }
};

void EventChain::run_one(std::shared_ptr<const Handler> handler, std::shared_ptr<const Event> event,
                         Post post, IsRegistered registered) {
    if (registered && !registered(handler->id)) return;  // as call_next() would skip it
    auto *solo = new Solo{std::move(handler), std::move(event), std::move(post), {}};
    const Handler &h = *solo->handler;
    const Event &ev = *solo->event;
    auto info = ev.info_span();
    if (h.spec.return_object != nullptr) {
        // As call_next() gives it: the event's info, then the object.
        solo->call_info.assign(info.begin(), info.end());
        solo->call_info.emplace_back();
        pmix_info_t &obj = solo->call_info.back();
        std::memset(&obj, 0, sizeof obj);
        PMIX_LOAD_KEY(obj.key, PMIX_EVENT_RETURN_OBJECT);
        obj.value.type = PMIX_POINTER;
        obj.value.data.ptr = h.spec.return_object;
        info = solo->call_info;
    }
    h.fn(h.id, ev.status, &ev.source,
         info.empty() ? nullptr : const_cast<pmix_info_t *>(info.data()), info.size(), nullptr, 0,
         &EventChain::solo_completion, solo);
    solo->release();  // the call's reference
}

void EventChain::solo_completion(pmix_status_t, pmix_info_t *, size_t, pmix_op_cbfunc_t cbfunc,
                                 void *thiscbdata, void *notification_cbdata) {
    auto *solo = static_cast<Solo *>(notification_cbdata);
    if (solo == nullptr || solo->completed.exchange(true)) return;
    // No later handler and nobody reading the results: what the chain would
    // do after this step is the cbfunc, from the progress thread, never
    // inside the handler's call.
    if (cbfunc != nullptr) solo->post([cbfunc, thiscbdata] { cbfunc(PMIX_SUCCESS, thiscbdata); });
    solo->release();  // the completion's reference
}

EventChain::~EventChain() {
    for (auto &i : results_) release_info(i);
    if (required_term_) release_info(*required_term_);
}

void EventChain::call_next() {
    while (next_ < handlers_.size()) {
        auto handler = handlers_[next_++];
        if (registered_ && !registered_(handler->id)) continue;  // deregistered meanwhile
        auto *step = new Step{shared_from_this(), handler, {}};
        auto info = event_->info_span();
        if (handler->spec.return_object != nullptr) {
            // The event's info and, last, the object given at registration
            // (PMIX_EVENT_RETURN_OBJECT). Shallow copies: the event owns the
            // values and outlives this array, which lives until the next call.
            call_info_.assign(info.begin(), info.end());
            call_info_.emplace_back();
            pmix_info_t &obj = call_info_.back();
            std::memset(&obj, 0, sizeof obj);
            PMIX_LOAD_KEY(obj.key, PMIX_EVENT_RETURN_OBJECT);
            obj.value.type = PMIX_POINTER;
            obj.value.data.ptr = handler->spec.return_object;
            info = call_info_;
        }
        // The caller (run() or the posted continuation) holds this chain
        // across the call, so it is still there when the handler returns.
        calling_.store(std::this_thread::get_id(), std::memory_order_relaxed);
        handler->fn(handler->id, event_->status, &event_->source,
                    info.empty() ? nullptr : const_cast<pmix_info_t *>(info.data()), info.size(),
                    results_.empty() ? nullptr : results_.data(), results_.size(),
                    &EventChain::completion, step);
        calling_.store(std::thread::id(), std::memory_order_relaxed);
        return;
    }
    end();
}

void EventChain::end() {
    if (results_fn_) {
        auto fn = std::move(results_fn_);
        results_fn_ = nullptr;
        fn(results_);
    }
    if (done_) {
        auto done = std::move(done_);
        done_ = nullptr;
        done();
    }
}

void EventChain::completion(pmix_status_t status, pmix_info_t *results, size_t nresults,
                            pmix_op_cbfunc_t cbfunc, void *thiscbdata, void *notification_cbdata) {
    auto *step = static_cast<Step *>(notification_cbdata);
    if (step == nullptr || step->completed.exchange(true)) return;
    // Completed inside the handler's own call, with nothing left to do: no
    // callback to call, no later handler (or the chain ends here), nobody
    // reading the results. The continuation would only consolidate results
    // no one reads; skip its post (a closure, a lock and a turn of the queue
    // per event in the common single-handler case, docs/events.md
    // "Latency"). Only inline: the chain is then held by call_next's caller,
    // so nothing the handler was given is released before it returns.
    if (EventChain &chain = *step->chain;
        cbfunc == nullptr &&
        chain.calling_.load(std::memory_order_relaxed) == std::this_thread::get_id() &&
        !chain.results_fn_ && !chain.done_ &&
        (status == PMIX_EVENT_ACTION_COMPLETE || !chain.more_to_call())) {
        delete step;
        return;
    }
    // Copied now: the handler may release its array as soon as cbfunc runs.
    std::vector<pmix_info_t> returned;
    for (size_t i = 0; results != nullptr && i < nresults; ++i)
        returned.push_back(copy_info(results[i]));
    auto chain = std::move(step->chain);
    auto handler = std::move(step->handler);
    delete step;
    chain->post_(
        [chain, handler, status, returned = std::move(returned), cbfunc, thiscbdata]() mutable {
            chain->finish_step(handler, status, std::move(returned));
            if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, thiscbdata);
            if (status != PMIX_EVENT_ACTION_COMPLETE) {
                chain->call_next();
            } else {
                chain->end();
            }
        });
}

void EventChain::erase_results_if(const std::function<bool(const pmix_info_t &)> &doomed) {
    for (auto it = results_.begin(); it != results_.end();) {
        if (doomed(*it)) {
            release_info(*it);
            it = results_.erase(it);
        } else {
            ++it;
        }
    }
}

void EventChain::keep_required_termination() {
    if (!required_term_) return;
    for (const auto &i : results_) {
        if (PMIX_CHECK_KEY(&i, required_term_->key) && PMIX_INFO_IS_REQUIRED(&i) &&
            i.value.type == required_term_->value.type &&
            (i.value.type != PMIX_BOOL || i.value.data.flag == required_term_->value.data.flag)) {
            return;  // untouched
        }
    }
    erase_results_if(is_termination);
    results_.push_back(copy_info(*required_term_));
}

void EventChain::append(const pmix_info_t &info) {
    if (is_termination(info)) {
        if (required_term_) return;  // a required decision cannot be overridden
        erase_results_if(is_termination);
        if (PMIX_INFO_IS_REQUIRED(&info)) required_term_ = copy_info(info);
    } else {
        // The results accumulate; a later entry replaces an earlier one.
        erase_results_if([&](const pmix_info_t &i) { return PMIX_CHECK_KEY(&i, info.key); });
    }
    results_.push_back(copy_info(info));
}

void EventChain::finish_step(const std::shared_ptr<const Handler> &handler, pmix_status_t status,
                             std::vector<pmix_info_t> returned) {
    erase_results_if([](const pmix_info_t &i) { return i.key[0] == '\0'; });  // cleared
    keep_required_termination();
    if (status != PMIX_EVENT_ACTION_COMPLETE) {
        pmix_info_t entry;
        std::memset(&entry, 0, sizeof entry);
        PMIX_LOAD_KEY(entry.key, handler->result_key.c_str());
        entry.value.type = PMIX_STATUS;
        entry.value.data.status = status;
        results_.push_back(entry);
        for (const auto &r : returned) append(r);
    }
    for (auto &r : returned) release_info(r);
}

}  // namespace pmixpp::events
