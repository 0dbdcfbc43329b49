#include "ring_cache.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

namespace pmixpp::evcache_ring {

namespace {

using mca::Status;
using mca::evcache::EvictionReason;

int compare_nspace(const pmix_proc_t &a, const pmix_proc_t &b) {
    return std::strncmp(a.nspace, b.nspace, sizeof(a.nspace));
}

// Order of an `awaiting` list once cached: by rank, then nspace. Kept sorted
// so that replay finds a peer by binary search.
bool proc_less(const pmix_proc_t &a, const pmix_proc_t &b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    return compare_nspace(a, b) < 0;
}

bool same_proc(const pmix_proc_t &a, const pmix_proc_t &b) {
    return a.rank == b.rank && compare_nspace(a, b) == 0;
}

std::string_view nspace_of(const pmix_proc_t &proc) {
    return {proc.nspace, ::strnlen(proc.nspace, sizeof(proc.nspace))};
}

std::string describe(const pmix_proc_t &proc) {
    return std::string(nspace_of(proc)) + ":" + std::to_string(proc.rank);
}

// Where `peer` is in a sorted `awaiting` list, or end().
std::vector<pmix_proc_t>::iterator find_awaiting(std::vector<pmix_proc_t> &awaiting,
                                                 const pmix_proc_t &peer) {
    const auto it = std::lower_bound(awaiting.begin(), awaiting.end(), peer, proc_less);
    return it != awaiting.end() && same_proc(*it, peer) ? it : awaiting.end();
}

}  // namespace

RingCache::RingCache(std::size_t capacity) : capacity_(capacity) {}

mca::Result<RingCache::EventId> RingCache::cache(CachedEvent event) {
    if (capacity_ == 0) {
        return Status(PMIX_ERR_OUT_OF_RESOURCE,
                      "evcache_ring: the event cache has capacity 0 (evcache_ring_size); "
                      "event not cached");
    }
    event.id = ++last_id_;
    const EventId id = event.id;
    if (event.is_job_event()) {
        // A client listed twice must not keep the event after its one delivery.
        auto &awaiting = event.awaiting;
        std::sort(awaiting.begin(), awaiting.end(), proc_less);
        awaiting.erase(std::unique(awaiting.begin(), awaiting.end(), same_proc), awaiting.end());
        if (awaiting.empty()) return id;  // everybody had it already: nothing to keep
    }
    const bool job_event = event.is_job_event();
    const Index slot = store(std::move(event));
    if (job_event) job_slots_.emplace(id, slot);
    // Insert first, then trim: an environment event arriving in a cache full of
    // awaited job events is itself the oldest environment event, so it is the
    // one evicted; environment events never push out awaited job events.
    trim_to_capacity();
    return id;
}

void RingCache::replay(const pmix_proc_t &peer,
                       const std::function<bool(const CachedEvent &event)> &deliver) {
    // Merge the two lists by id. Each step reads the next index before the
    // current event can be released.
    Index env = environment_.head;
    Index job = jobs_.head;
    while (env != kNone || job != kNone) {
        const bool env_first =
            job == kNone || (env != kNone && slots_[env].event.id < slots_[job].event.id);
        if (env_first) {
            const Index next = slots_[env].next;
            deliver(slots_[env].event);  // environment events stay whatever happens
            env = next;
        } else {
            const Index next = slots_[job].next;
            offer_job_event(job, peer, deliver);
            job = next;
        }
    }
}

void RingCache::offer_job_event(Index slot, const pmix_proc_t &peer,
                                const std::function<bool(const CachedEvent &event)> &deliver) {
    auto &event = slots_[slot].event;
    if (find_awaiting(event.awaiting, peer) == event.awaiting.end()) return;
    if (!deliver(event)) return;
    event.awaiting.erase(find_awaiting(event.awaiting, peer));
    if (event.awaiting.empty()) release(slot);
}

Status RingCache::mark_delivered(EventId id, const pmix_proc_t &peer) {
    const auto found = job_slots_.find(id);
    if (found == job_slots_.end()) {
        return Status(PMIX_ERR_NOT_FOUND,
                      "evcache_ring: no job event " + std::to_string(id) +
                          " in the cache (already released, evicted, or never kept)");
    }
    const Index slot = found->second;
    auto &awaiting = slots_[slot].event.awaiting;
    const auto it = find_awaiting(awaiting, peer);
    if (it == awaiting.end()) {
        return Status(PMIX_ERR_NOT_FOUND, "evcache_ring: " + describe(peer) +
                                              " is not awaiting event " + std::to_string(id));
    }
    awaiting.erase(it);
    if (awaiting.empty()) release(slot);
    return Status::success();
}

void RingCache::forget_job(std::string_view nspace) {
    for (Index slot = jobs_.head; slot != kNone;) {
        const Index next = slots_[slot].next;
        auto &event = slots_[slot].event;
        if (event.job == nspace) {
            release(slot);
        } else {
            std::erase_if(event.awaiting,
                          [&](const pmix_proc_t &proc) { return nspace_of(proc) == nspace; });
            if (event.awaiting.empty()) release(slot);
        }
        slot = next;
    }
}

RingCache::Index RingCache::store(CachedEvent event) {
    Index slot;
    if (!free_slots_.empty()) {
        slot = free_slots_.back();
        free_slots_.pop_back();
        slots_[slot].event = std::move(event);
    } else {
        slot = slots_.size();
        slots_.push_back(Slot{std::move(event)});
    }
    link_back(lane_of(slots_[slot].event), slot);
    return slot;
}

void RingCache::link_back(Lane &lane, Index slot) {
    slots_[slot].prev = lane.tail;
    slots_[slot].next = kNone;
    if (lane.tail != kNone) {
        slots_[lane.tail].next = slot;
    } else {
        lane.head = slot;
    }
    lane.tail = slot;
    ++lane.count;
}

void RingCache::unlink(Lane &lane, Index slot) {
    Slot &s = slots_[slot];
    if (s.prev != kNone) {
        slots_[s.prev].next = s.next;
    } else {
        lane.head = s.next;
    }
    if (s.next != kNone) {
        slots_[s.next].prev = s.prev;
    } else {
        lane.tail = s.prev;
    }
    s.prev = s.next = kNone;
    --lane.count;
}

void RingCache::release(Index slot) {
    auto &event = slots_[slot].event;
    if (event.is_job_event()) job_slots_.erase(event.id);
    unlink(lane_of(event), slot);
    event = CachedEvent{};  // free the message and lists now, not when the slot is reused
    free_slots_.push_back(slot);
}

void RingCache::trim_to_capacity() {
    while (size() > capacity_) {
        const bool flood = environment_.count == 0;
        const Index victim = flood ? jobs_.head : environment_.head;
        report_eviction(slots_[victim].event,
                        flood ? EvictionReason::kFlood : EvictionReason::kCapacity);
        release(victim);
    }
}

}  // namespace pmixpp::evcache_ring
