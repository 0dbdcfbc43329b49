// RingCache: the evcache module of component evcache_ring (README.md here).
//
// Events live in a pool of slots threaded on two lists in arrival order: one
// for the events nobody awaits (environment events, and job events every
// awaiting client had), one for awaited job events. Eviction takes the head of
// the first list, or of the second when the first is empty, in O(1); a job
// event whose last awaiting client had it moves to the first list at its place
// in arrival order (found by id through `job_slots_`); replay merges the two
// lists by id, oldest first, in one pass.
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
    std::size_t size() const override { return settled_.count + awaited_.count; }

  private:
    using Index = std::size_t;
    static constexpr Index kNone = static_cast<Index>(-1);

    struct Slot {
        CachedEvent event;
        bool awaited = false;  // on awaited_ (a job event somebody awaits), else settled_
        Index prev = kNone;    // older event of the same list
        Index next = kNone;    // newer event of the same list
    };
    // One list of slots, oldest at head.
    struct Lane {
        Index head = kNone;
        Index tail = kNone;
        std::size_t count = 0;
    };

    Lane &lane_of(Index slot) { return slots_[slot].awaited ? awaited_ : settled_; }
    Index store(CachedEvent event);
    void link_back(Lane &lane, Index slot);
    // Links `slot` into `lane` at its place by id (from the newest end).
    void link_in_order(Lane &lane, Index slot);
    // Job event `slot` is no longer awaited by anybody: to settled_.
    void settle(Index slot);
    void unlink(Lane &lane, Index slot);
    // Unlinks and frees `slot` (its event is destroyed). Reports nothing.
    void release(Index slot);
    // Evicts, oldest event nobody awaits first, until size() <= capacity_.
    void trim_to_capacity();
    // Offers awaited job event `slot` to `peer`; takes `peer` off `awaiting`
    // when it awaited it and `deliver` sent it.
    void offer_awaited(Index slot, const pmix_proc_t &peer,
                       const std::function<bool(const CachedEvent &event)> &deliver);

    const std::size_t capacity_;
    EventId last_id_ = 0;
    std::vector<Slot> slots_;  // grows up to the most events held at once
    std::vector<Index> free_slots_;
    Lane settled_;
    Lane awaited_;
    // Job events only: mark_delivered() finds them by id. Environment events
    // are never looked up by id (nobody awaits them).
    std::unordered_map<EventId, Index> job_slots_;
};

}  // namespace pmixpp::evcache_ring
