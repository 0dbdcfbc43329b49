// RingCache: the evcache module of component evcache_ring (README.md here).
//
// Events live in a pool of slots threaded on two lists in arrival order: one
// for environment events, one for job events. Eviction takes the head of the
// environment list, or of the job list when there is no environment event, in
// O(1); releasing a delivered job event unlinks it in O(1) (found by id through
// `job_slots_`); replay merges the two lists by id, oldest first, in one pass.
//
// Threads: every method runs on the server's progress thread (the evcache
// contract); the class has no lock.
#pragma once

#include "pmixpp/mca/evcache.hpp"

#include <cstddef>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pmixpp::evcache_ring {

class RingCache final : public mca::evcache::Module {
  public:
    using CachedEvent = mca::evcache::CachedEvent;
    using EventId = mca::evcache::EventId;

    explicit RingCache(std::size_t capacity);

    mca::Result<EventId> cache(CachedEvent event) override;
    void replay(const pmix_proc_t &peer,
                const std::function<bool(const CachedEvent &event)> &deliver) override;
    mca::Status mark_delivered(EventId id, const pmix_proc_t &peer) override;
    void forget_job(std::string_view nspace) override;
    std::size_t capacity() const override { return capacity_; }
    std::size_t size() const override { return environment_.count + jobs_.count; }

  private:
    using Index = std::size_t;
    static constexpr Index kNone = static_cast<Index>(-1);

    struct Slot {
        CachedEvent event;
        Index prev = kNone;  // older event of the same list
        Index next = kNone;  // newer event of the same list
    };
    // One list of slots, oldest at head.
    struct Lane {
        Index head = kNone;
        Index tail = kNone;
        std::size_t count = 0;
    };

    Lane &lane_of(const CachedEvent &event) { return event.is_job_event() ? jobs_ : environment_; }
    Index store(CachedEvent event);
    void link_back(Lane &lane, Index slot);
    void unlink(Lane &lane, Index slot);
    // Unlinks and frees `slot` (its event is destroyed). Reports nothing.
    void release(Index slot);
    // Evicts, oldest environment event first, until size() <= capacity_.
    void trim_to_capacity();
    // Offers job event `slot` to `peer` if it awaits it; releases the event
    // when `peer` was the last one awaiting it.
    void offer_job_event(Index slot, const pmix_proc_t &peer,
                         const std::function<bool(const CachedEvent &event)> &deliver);

    const std::size_t capacity_;
    EventId last_id_ = 0;
    std::vector<Slot> slots_;  // grows up to the most events held at once
    std::vector<Index> free_slots_;
    Lane environment_;
    Lane jobs_;
    // Job events only: mark_delivered() finds them by id. Environment events
    // are never looked up by id (nobody awaits them).
    std::unordered_map<EventId, Index> job_slots_;
};

}  // namespace pmixpp::evcache_ring
