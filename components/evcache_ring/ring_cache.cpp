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
    } else {
        event.awaiting.clear();
    }
    const bool job_event = event.is_job_event();
    const Index slot = store(std::move(event));
    if (job_event) job_slots_.emplace(id, slot);
    // Insert first, then trim: an event nobody awaits arriving in a cache full
    // of awaited job events is itself the oldest such event, so it is the one
    // evicted; only a flood of awaited job events pushes out an awaited one.
    trim_to_capacity();
    return id;
}

void RingCache::replay(const pmix_proc_t &peer,
                       const std::function<bool(const CachedEvent &event)> &deliver) {
    // Merge the two lists by id. Each step reads the next index before the
    // current event can move to the other list.
    Index settled = settled_.head;
    Index awaited = awaited_.head;
    while (settled != kNone || awaited != kNone) {
        const bool settled_first =
            awaited == kNone ||
            (settled != kNone && slots_[settled].event.id < slots_[awaited].event.id);
        if (settled_first) {
            const Index next = slots_[settled].next;
            deliver(slots_[settled].event);  // nobody awaits it: it stays whatever happens
            settled = next;
        } else {
            const Index next = slots_[awaited].next;
            offer_awaited(awaited, peer, deliver);
            awaited = next;
        }
    }
}

void RingCache::offer_awaited(Index slot, const pmix_proc_t &peer,
                              const std::function<bool(const CachedEvent &event)> &deliver) {
    auto &event = slots_[slot].event;
    if (!deliver(event)) return;
    const auto it = find_awaiting(event.awaiting, peer);
    if (it == event.awaiting.end()) return;  // a later handler of a client that had it
    event.awaiting.erase(it);
    if (event.awaiting.empty()) settle(slot);
}

Status RingCache::mark_delivered(EventId id, const pmix_proc_t &peer) {
    const auto found = job_slots_.find(id);
    if (found == job_slots_.end()) {
        return Status(PMIX_ERR_NOT_FOUND,
                      "evcache_ring: no job event " + std::to_string(id) +
                          " in the cache (evicted, dropped with its job, or never kept)");
    }
    const Index slot = found->second;
    auto &awaiting = slots_[slot].event.awaiting;
    const auto it = find_awaiting(awaiting, peer);
    if (it == awaiting.end()) {
        return Status(PMIX_ERR_NOT_FOUND, "evcache_ring: " + describe(peer) +
                                              " is not awaiting event " + std::to_string(id));
    }
    awaiting.erase(it);
    if (awaiting.empty()) settle(slot);
    return Status::success();
}

void RingCache::forget_job(std::string_view nspace) {
    for (Lane *lane : {&awaited_, &settled_}) {
        for (Index slot = lane->head; slot != kNone;) {
            const Index next = slots_[slot].next;
            auto &event = slots_[slot].event;
            if (event.job == nspace) {
                release(slot);
            } else if (slots_[slot].awaited) {
                std::erase_if(event.awaiting,
                              [&](const pmix_proc_t &proc) { return nspace_of(proc) == nspace; });
                if (event.awaiting.empty()) settle(slot);
            }
            slot = next;
        }
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
    slots_[slot].awaited = !slots_[slot].event.awaiting.empty();
    link_back(lane_of(slot), slot);
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

void RingCache::link_in_order(Lane &lane, Index slot) {
    const EventId id = slots_[slot].event.id;
    Index after = lane.tail;  // the newest event older than `slot`
    while (after != kNone && slots_[after].event.id > id) after = slots_[after].prev;
    Slot &s = slots_[slot];
    s.prev = after;
    s.next = after == kNone ? lane.head : slots_[after].next;
    if (s.prev != kNone) {
        slots_[s.prev].next = slot;
    } else {
        lane.head = slot;
    }
    if (s.next != kNone) {
        slots_[s.next].prev = slot;
    } else {
        lane.tail = slot;
    }
    ++lane.count;
}

void RingCache::settle(Index slot) {
    unlink(awaited_, slot);
    slots_[slot].awaited = false;
    link_in_order(settled_, slot);
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
    unlink(lane_of(slot), slot);
    event = CachedEvent{};  // free the message and lists now, not when the slot is reused
    slots_[slot].awaited = false;
    free_slots_.push_back(slot);
}

void RingCache::trim_to_capacity() {
    while (size() > capacity_) {
        const bool flood = settled_.count == 0;
        const Index victim = flood ? awaited_.head : settled_.head;
        report_eviction(slots_[victim].event,
                        flood ? EvictionReason::kFlood : EvictionReason::kCapacity);
        release(victim);
    }
}

}  // namespace pmixpp::evcache_ring
