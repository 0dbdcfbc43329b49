// EventChain: runs the handlers an event reached, one after the other
// (framework/event/README.md, "The chain").
//
// Each handler gets its registration id, the event's status, source and info,
// the results so far and a completion function. The chain goes on when the
// handler calls that function (from any thread, at any time, or inline): the
// continuation is handed to `post` (the progress thread's post() in the
// library), never run inside the handler's call. PMIX_EVENT_ACTION_COMPLETE
// stops the chain.
//
// A handler registered with PMIX_EVENT_RETURN_OBJECT finds that object in
// its info array: the event's info, then PMIX_EVENT_RETURN_OBJECT
// (PMIX_POINTER).
//
// Results (RFC 0001, consolidated): after each handler, entries whose key the
// handler cleared are dropped, then {its result key: its status
// (PMIX_STATUS)} and what it returned are appended; a returned entry replaces
// any earlier entry with the same key (the earlier one is dropped, the new
// one appended). A returned PMIX_EVENT_NO_TERMINATION /
// PMIX_EVENT_WANT_TERMINATION replaces the one already there (either key),
// unless that one carries PMIX_INFO_REQD, which then stays whatever later
// handlers return or do to the array.
#pragma once

#include <pmix_common.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "event/event.hpp"
#include "event/registry.hpp"

namespace pmixpp::events {

class EventChain : public std::enable_shared_from_this<EventChain> {
  public:
    using Post = std::function<void(std::function<void()>)>;
    using IsRegistered = std::function<bool(std::size_t id)>;
    // The chain's consolidated results when it ended (groups: the handlers'
    // decisions, framework/client/groups.cpp).
    using Results = std::function<void(std::span<const pmix_info_t> results)>;

    // Starts the chain now, in the calling thread (the progress thread in the
    // library): the first handler is called before run() returns. A handler
    // for which `registered` answers false when its turn comes is skipped
    // (deregistered meanwhile). `done` runs once the chain ended, after
    // `results` (given the consolidated results).
    static void run(std::vector<std::shared_ptr<const Handler>> handlers,
                    std::shared_ptr<const Event> event, Post post, IsRegistered registered,
                    std::function<void()> done = {}, Results results = {});

    // What run() does for a chain of one handler whose results nobody
    // reads (no `done`, no `results`), without the chain: the handler is
    // called now with no results; its completion, once, posts its cbfunc if
    // it gave one and nothing else. The event lives until both the call
    // returned and the completion came (docs/events.md, "Latency").
    static void run_one(std::shared_ptr<const Handler> handler, std::shared_ptr<const Event> event,
                        Post post, IsRegistered registered);

  private:
    struct Key {};  // the constructor is for run() only

  public:
    explicit EventChain(Key) {}
    ~EventChain();
    EventChain(const EventChain &) = delete;
    EventChain &operator=(const EventChain &) = delete;

  private:
    struct Step;
    struct Solo;
    static void solo_completion(pmix_status_t status, pmix_info_t *results, size_t nresults,
                                pmix_op_cbfunc_t cbfunc, void *thiscbdata,
                                void *notification_cbdata);
    void call_next();
    bool more_to_call() const noexcept { return next_ < handlers_.size(); }
    void end();
    void finish_step(const std::shared_ptr<const Handler> &handler, pmix_status_t status,
                     std::vector<pmix_info_t> returned);
    void keep_required_termination();
    void append(const pmix_info_t &info);
    // Releases and removes the results `doomed` picks.
    void erase_results_if(const std::function<bool(const pmix_info_t &)> &doomed);
    static void completion(pmix_status_t status, pmix_info_t *results, size_t nresults,
                           pmix_op_cbfunc_t cbfunc, void *thiscbdata, void *notification_cbdata);

    std::vector<std::shared_ptr<const Handler>> handlers_;
    std::shared_ptr<const Event> event_;
    Post post_;
    IsRegistered registered_;
    std::function<void()> done_;
    Results results_fn_;
    std::size_t next_ = 0;
    std::vector<pmix_info_t> results_;          // owned (deep copies)
    std::optional<pmix_info_t> required_term_;  // owned copy of a REQD termination entry
    std::vector<pmix_info_t> call_info_;  // the info given to a RETURN_OBJECT handler (not owned)
    // The thread inside a handler's call (call_next), else none: a completion
    // made inline that leaves nothing to do skips the posted continuation.
    std::atomic<std::thread::id> calling_{};
};

}  // namespace pmixpp::events
