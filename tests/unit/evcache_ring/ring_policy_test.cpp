// The ring's policy, through the module the component repository creates:
// every event is replayed to every late registration until newer ones push it
// out, oldest first; a job event cannot be pushed out while a local client
// still awaits it, except by a flood of awaited job events.
#include "evcache_ring_support.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace evcache_ring_test {
namespace {

const pmix_proc_t kJob1Rank0 = proc("job1", 0);
const pmix_proc_t kJob1Rank1 = proc("job1", 1);
const pmix_proc_t kJob2Rank0 = proc("job2", 0);

class EvcacheRing : public ::testing::Test {
  protected:
    // A module of `capacity` events, sized through evcache_ring_size.
    evcache::Module &ring(std::size_t capacity) {
        loaded_ = std::make_unique<LoadedRing>(std::to_string(capacity));
        EXPECT_NE(loaded_->module(), nullptr);
        if (loaded_->module() == nullptr) throw std::runtime_error("no evcache_ring module");
        evictions.attach(*loaded_->module());
        return *loaded_->module();
    }

    EvictionLog evictions;

  private:
    std::unique_ptr<LoadedRing> loaded_;
};

TEST_F(EvcacheRing, IdsAreNonZeroAndIncreaseInArrivalOrderForEveryKindOfEvent) {
    auto &cache = ring(4);
    const EventId a = cache_ok(cache, environment_event(1));
    const EventId b = cache_ok(cache, job_event(2, "job1", {kJob1Rank0}));
    const EventId c = cache_ok(cache, job_event(3, "job1", {}));  // nobody awaits it
    const EventId d = cache_ok(cache, environment_event(4));
    EXPECT_NE(a, 0u);
    EXPECT_LT(a, b);
    EXPECT_LT(b, c);
    EXPECT_LT(c, d);
}

TEST_F(EvcacheRing, SizeCountsTheEventsKeptAndAJobEventNobodyAwaitsIsKeptToo) {
    auto &cache = ring(4);
    EXPECT_EQ(cache.capacity(), 4u);
    EXPECT_EQ(cache.size(), 0u);
    cache_ok(cache, job_event(1, "job1", {}));
    EXPECT_EQ(cache.size(), 1u) << "for handlers registered later";
    cache_ok(cache, environment_event(2));
    cache_ok(cache, job_event(3, "job1", {kJob1Rank0}));
    EXPECT_EQ(cache.size(), 3u);
    EXPECT_EQ(cache.capacity(), 4u);
    EXPECT_EQ(replay_codes(cache, kJob1Rank1), (Codes{1, 2, 3}));
}

TEST_F(EvcacheRing, AFullCacheEjectsTheOldestEnvironmentEvent) {
    auto &cache = ring(3);
    for (pmix_status_t code = 1; code <= 5; ++code) cache_ok(cache, environment_event(code));
    EXPECT_EQ(cache.size(), 3u);
    EXPECT_EQ(replay_codes(cache, kJob1Rank0), (Codes{3, 4, 5}));
}

TEST_F(EvcacheRing, EveryEjectionIsReportedToTheListenerWithItsReason) {
    auto &cache = ring(2);
    std::vector<EventId> ids;
    cache.set_eviction_listener([&](const CachedEvent &event, EvictionReason reason) {
        EXPECT_EQ(reason, EvictionReason::kCapacity);
        ids.push_back(event.id);
    });
    const EventId first = cache_ok(cache, environment_event(1));
    const EventId second = cache_ok(cache, environment_event(2));
    EXPECT_TRUE(ids.empty()) << "nothing ejected before the cache is full";
    cache_ok(cache, environment_event(3));
    cache_ok(cache, environment_event(4));
    EXPECT_EQ(ids, (std::vector<EventId>{first, second}));
}

TEST_F(EvcacheRing, AnAwaitedJobEventIsNotEjectedWhileThereAreEnvironmentEvents) {
    auto &cache = ring(2);
    cache_ok(cache, environment_event(10));
    cache_ok(cache, job_event(20, "job1", {kJob1Rank0}));
    cache_ok(cache, environment_event(30));
    cache_ok(cache, environment_event(40));
    EXPECT_EQ(evictions.entries,
              (Evictions{{10, EvictionReason::kCapacity}, {30, EvictionReason::kCapacity}}));
    EXPECT_EQ(replay_codes(cache, kJob1Rank0), (Codes{20, 40}));
}

TEST_F(EvcacheRing, AnEnvironmentEventArrivingWhenAwaitedJobEventsFillTheCacheIsTheOneEjected) {
    auto &cache = ring(2);
    cache_ok(cache, job_event(1, "job1", {kJob1Rank0}));
    cache_ok(cache, job_event(2, "job1", {kJob1Rank0}));
    const auto id = cache.cache(environment_event(3));
    ASSERT_TRUE(id.ok()) << "the event was handled: sent to whoever was there, then dropped";
    EXPECT_EQ(evictions.entries, (Evictions{{3, EvictionReason::kCapacity}}));
    EXPECT_EQ(replay_codes(cache, kJob1Rank0), (Codes{1, 2}));
}

TEST_F(EvcacheRing, AFloodOfAwaitedJobEventsEjectsTheOldestJobEventAndCallsItAFlood) {
    auto &cache = ring(2);
    for (pmix_status_t code = 1; code <= 4; ++code)
        cache_ok(cache, job_event(code, "job1", {kJob1Rank0}));
    EXPECT_EQ(evictions.entries,
              (Evictions{{1, EvictionReason::kFlood}, {2, EvictionReason::kFlood}}));
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_EQ(replay_codes(cache, kJob1Rank0), (Codes{3, 4}));
}

TEST_F(EvcacheRing, AJobEventIsHeldUntilEveryAwaitingClientHadItThenStaysUntilPushedOut) {
    auto &cache = ring(2);
    cache_ok(cache, job_event(7, "job1", {kJob1Rank0, kJob1Rank1}));

    EXPECT_EQ(replay_codes(cache, kJob1Rank0), Codes{7});
    EXPECT_EQ(replay_codes(cache, kJob1Rank1, /*accept=*/false), Codes{7});
    cache_ok(cache, environment_event(8));
    cache_ok(cache, environment_event(9));
    EXPECT_EQ(evictions.entries, (Evictions{{8, EvictionReason::kCapacity}}))
        << "rank 1 still awaits 7: the environment event goes";

    EXPECT_EQ(replay_codes(cache, kJob1Rank1), (Codes{7, 9}));
    EXPECT_EQ(replay_codes(cache, kJob1Rank0), (Codes{7, 9}))
        << "kept for handlers registered later, also by clients that had it";
    EXPECT_EQ(cache.size(), 2u);
    cache_ok(cache, environment_event(10));
    EXPECT_EQ(evictions.entries,
              (Evictions{{8, EvictionReason::kCapacity}, {7, EvictionReason::kCapacity}}))
        << "once everybody had it, the oldest event goes first";
}

TEST_F(EvcacheRing, AJobEventEveryClientHadIsPushedOutBeforeAnAwaitedOne) {
    auto &cache = ring(2);
    cache_ok(cache, job_event(1, "job1", {kJob1Rank0}));
    cache_ok(cache, job_event(2, "job1", {kJob1Rank1}));
    ASSERT_EQ(replay_codes(cache, kJob1Rank0), (Codes{1, 2}));
    cache_ok(cache, environment_event(3));
    EXPECT_EQ(evictions.entries, (Evictions{{1, EvictionReason::kCapacity}}));
    EXPECT_EQ(replay_codes(cache, kJob1Rank1), (Codes{2, 3}));
}

TEST_F(EvcacheRing, AJobEventNobodyAwaitsAnyMoreKeepsItsPlaceInArrivalOrder) {
    auto &cache = ring(3);
    const EventId first = cache_ok(cache, job_event(1, "job1", {kJob1Rank0}));
    cache_ok(cache, environment_event(2));
    cache_ok(cache, environment_event(3));
    ASSERT_TRUE(cache.mark_delivered(first, kJob1Rank0).ok());
    cache_ok(cache, environment_event(4));
    EXPECT_EQ(evictions.entries, (Evictions{{1, EvictionReason::kCapacity}}))
        << "the oldest event, not the newest one nobody awaits";
    EXPECT_EQ(replay_codes(cache, kJob1Rank1), (Codes{2, 3, 4}));
}

TEST_F(EvcacheRing, ReplayOffersEveryCachedEventOldestFirst) {
    auto &cache = ring(16);
    cache_ok(cache, job_event(1, "job1", {kJob1Rank1}));
    cache_ok(cache, environment_event(2));
    cache_ok(cache, job_event(3, "job1", {kJob1Rank0, kJob1Rank1}));
    cache_ok(cache, job_event(4, "job2", {kJob2Rank0}));
    cache_ok(cache, environment_event(5));
    cache_ok(cache, job_event(6, "job1", {kJob1Rank0}));
    cache_ok(cache, environment_event(7));

    const Codes all{1, 2, 3, 4, 5, 6, 7};
    EXPECT_EQ(replay_codes(cache, kJob1Rank0), all);
    EXPECT_EQ(replay_codes(cache, kJob1Rank0), all) << "the core decides what is in range";
    EXPECT_EQ(replay_codes(cache, kJob2Rank0, false), all);
    EXPECT_EQ(replay_codes(cache, proc("job3", 0)), all);
    EXPECT_EQ(cache.size(), 7u);
}

TEST_F(EvcacheRing, ReplayKeepsArrivalOrderAfterSlotsAreReused) {
    auto &cache = ring(3);
    cache_ok(cache, job_event(1, "job1", {kJob1Rank0}));
    cache_ok(cache, environment_event(2));
    cache_ok(cache, job_event(3, "job1", {kJob1Rank0}));
    replay_codes(cache, kJob1Rank0);                      // nobody awaits 1 and 3 any more
    cache_ok(cache, job_event(4, "job1", {kJob1Rank1}));  // pushes out 1
    cache_ok(cache, environment_event(5));                // pushes out 2
    EXPECT_EQ(evictions.entries,
              (Evictions{{1, EvictionReason::kCapacity}, {2, EvictionReason::kCapacity}}));
    EXPECT_EQ(replay_codes(cache, kJob1Rank1), (Codes{3, 4, 5}));
}

TEST_F(EvcacheRing, ReplayHandsOverTheEventAsItWasCached) {
    auto &cache = ring(4);
    CachedEvent event = environment_event(PMIX_ERR_NODE_DOWN);
    event.source = proc("rm", 3);
    event.range = PMIX_RANGE_GLOBAL;
    event.message = {std::byte{1}, std::byte{2}, std::byte{3}};
    const EventId id = cache_ok(cache, event);

    int calls = 0;
    cache.replay(kJob1Rank0, [&](const CachedEvent &e) {
        ++calls;
        EXPECT_EQ(e.id, id);
        EXPECT_EQ(e.code, PMIX_ERR_NODE_DOWN);
        EXPECT_STREQ(e.source.nspace, "rm");
        EXPECT_EQ(e.source.rank, 3u);
        EXPECT_EQ(e.range, PMIX_RANGE_GLOBAL);
        EXPECT_EQ(e.message, event.message);
        return true;
    });
    EXPECT_EQ(calls, 1);
}

TEST_F(EvcacheRing, MarkDeliveredTakesOneClientOffAndTheEventStaysAfterTheLast) {
    auto &cache = ring(4);
    const EventId id = cache_ok(cache, job_event(5, "job1", {kJob1Rank0, kJob1Rank1}));

    EXPECT_TRUE(cache.mark_delivered(id, kJob1Rank0).ok());
    EXPECT_EQ(cache.mark_delivered(id, kJob1Rank0).code(), PMIX_ERR_NOT_FOUND)
        << "rank 0 is no longer awaiting it";
    EXPECT_TRUE(cache.mark_delivered(id, kJob1Rank1).ok());
    EXPECT_EQ(cache.size(), 1u);
    EXPECT_EQ(replay_codes(cache, kJob1Rank0), Codes{5});
    EXPECT_TRUE(evictions.entries.empty());
}

TEST_F(EvcacheRing, MarkDeliveredRefusesUnknownEventsAndClientsNotAwaiting) {
    auto &cache = ring(4);
    const EventId job = cache_ok(cache, job_event(5, "job1", {kJob1Rank0}));
    const EventId env = cache_ok(cache, environment_event(6));

    const auto stranger = cache.mark_delivered(job, kJob1Rank1);
    EXPECT_EQ(stranger.code(), PMIX_ERR_NOT_FOUND);
    EXPECT_NE(stranger.message().find("job1:1"), std::string::npos) << stranger.message();
    EXPECT_EQ(cache.mark_delivered(env, kJob1Rank0).code(), PMIX_ERR_NOT_FOUND)
        << "nobody awaits an environment event";
    EXPECT_EQ(cache.mark_delivered(job + 100, kJob1Rank0).code(), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(cache.size(), 2u) << "refusals change nothing";

    ASSERT_TRUE(cache.mark_delivered(job, kJob1Rank0).ok());
    EXPECT_EQ(cache.mark_delivered(job, kJob1Rank0).code(), PMIX_ERR_NOT_FOUND) << "rank 0 had it";
}

TEST_F(EvcacheRing, AClientListedTwiceNeedsOneDelivery) {
    auto &cache = ring(1);
    const EventId id = cache_ok(cache, job_event(5, "job1", {kJob1Rank0, kJob1Rank0}));
    ASSERT_TRUE(cache.mark_delivered(id, kJob1Rank0).ok());
    cache_ok(cache, environment_event(6));
    EXPECT_EQ(evictions.entries, (Evictions{{5, EvictionReason::kCapacity}}))
        << "nobody awaits it any more: not a flood";
}

TEST_F(EvcacheRing, ForgetJobDropsItsEventsAndItsClientsWithoutReportingEvictions) {
    auto &cache = ring(8);
    cache_ok(cache, job_event(1, "job1", {kJob1Rank0}));
    cache_ok(cache, environment_event(2));
    cache_ok(cache, job_event(3, "job2", {kJob1Rank1, kJob2Rank0}));
    // Only a job1 client awaits it.
    const EventId fourth = cache_ok(cache, job_event(4, "job2", {kJob1Rank0}));
    ASSERT_EQ(cache.size(), 4u);

    cache.forget_job("job1");

    EXPECT_TRUE(evictions.entries.empty());
    EXPECT_EQ(cache.size(), 3u) << "event 1 went with its job";
    EXPECT_EQ(replay_codes(cache, kJob2Rank0, false), (Codes{2, 3, 4}));
    EXPECT_EQ(cache.mark_delivered(fourth, kJob1Rank0).code(), PMIX_ERR_NOT_FOUND)
        << "no longer awaited by job1's clients";
}

TEST_F(EvcacheRing, ForgetJobOfAnUnknownJobChangesNothing) {
    auto &cache = ring(4);
    cache_ok(cache, job_event(1, "job1", {kJob1Rank0}));
    cache_ok(cache, environment_event(2));
    cache.forget_job("job10");
    cache.forget_job("job");
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_EQ(replay_codes(cache, kJob1Rank0, false), (Codes{1, 2}));
}

}  // namespace
}  // namespace evcache_ring_test
