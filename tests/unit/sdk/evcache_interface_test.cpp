// evcache: a bounded cache of events. Environment events are replayed to every
// late registration until capacity pushes them out; job events stay until every
// awaiting local client had them. Evictions are reported to the listener.
#include "pmixpp/mca/evcache.hpp"

#include "pmix_values.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace evcache = pmixpp::mca::evcache;
using evcache::CachedEvent;
using evcache::EventId;
using evcache::EvictionReason;
using pmixpp::mca::Result;
using pmixpp::mca::Status;
using pmixpp::test::make_proc;
using pmixpp::test::same_proc;

class Ring final : public evcache::Module {
  public:
    explicit Ring(std::size_t capacity) : capacity_(capacity) {}

    Result<EventId> cache(CachedEvent event) override {
        if (capacity_ == 0) return Status(PMIX_ERR_OUT_OF_RESOURCE, "evcache capacity is 0");
        event.id = ++last_id_;
        if (event.is_job_event() && event.awaiting.empty()) return event.id;
        if (events_.size() == capacity_) evict_one();
        events_.push_back(std::move(event));
        return events_.back().id;
    }

    void replay(const pmix_proc_t &peer,
                const std::function<bool(const CachedEvent &)> &deliver) override {
        for (auto it = events_.begin(); it != events_.end();) {
            const auto waiting = awaiting(*it, peer);
            const bool offered = !it->is_job_event() || waiting != it->awaiting.end();
            if (offered && deliver(*it) && it->is_job_event()) {
                it->awaiting.erase(waiting);
                if (it->awaiting.empty()) {
                    it = events_.erase(it);
                    continue;
                }
            }
            ++it;
        }
    }

    Status mark_delivered(EventId id, const pmix_proc_t &peer) override {
        const auto it =
            std::find_if(events_.begin(), events_.end(), [&](const auto &e) { return e.id == id; });
        if (it == events_.end()) return Status(PMIX_ERR_NOT_FOUND, "no such event");
        const auto waiting = awaiting(*it, peer);
        if (waiting == it->awaiting.end())
            return Status(PMIX_ERR_NOT_FOUND, "peer not awaiting it");
        it->awaiting.erase(waiting);
        if (it->awaiting.empty()) events_.erase(it);
        return Status::success();
    }

    void forget_job(std::string_view nspace) override {
        std::erase_if(events_, [&](const CachedEvent &e) { return e.job == nspace; });
        for (auto &event : events_) {
            std::erase_if(event.awaiting, [&](const pmix_proc_t &p) { return nspace == p.nspace; });
        }
    }

    std::size_t capacity() const override { return capacity_; }
    std::size_t size() const override { return events_.size(); }

  private:
    static std::vector<pmix_proc_t>::iterator awaiting(CachedEvent &event,
                                                       const pmix_proc_t &peer) {
        return std::find_if(event.awaiting.begin(), event.awaiting.end(),
                            [&](const pmix_proc_t &p) { return same_proc(p, peer); });
    }
    void evict_one() {
        auto victim = std::find_if(events_.begin(), events_.end(),
                                   [](const auto &e) { return !e.is_job_event(); });
        const auto reason =
            victim != events_.end() ? EvictionReason::kCapacity : EvictionReason::kFlood;
        if (victim == events_.end()) victim = events_.begin();
        report_eviction(*victim, reason);
        events_.erase(victim);
    }

    std::size_t capacity_;
    EventId last_id_ = 0;
    std::deque<CachedEvent> events_;
};

const pmix_proc_t kRank0 = make_proc("job1", 0);
const pmix_proc_t kRank1 = make_proc("job1", 1);

CachedEvent environment_event(pmix_status_t code) {
    CachedEvent event;
    event.code = code;
    event.range = PMIX_RANGE_SESSION;
    return event;
}

CachedEvent job_event(pmix_status_t code, std::vector<pmix_proc_t> awaiting) {
    CachedEvent event;
    event.code = code;
    event.range = PMIX_RANGE_NAMESPACE;
    event.job = "job1";
    event.awaiting = std::move(awaiting);
    return event;
}

std::vector<pmix_status_t> replay_codes(evcache::Module &cache, const pmix_proc_t &peer,
                                        bool accept = true) {
    std::vector<pmix_status_t> codes;
    cache.replay(peer, [&](const CachedEvent &event) {
        codes.push_back(event.code);
        return accept;
    });
    return codes;
}

std::unique_ptr<evcache::Module> create_module(std::size_t capacity) {
    return std::make_unique<Ring>(capacity);
}

TEST(EvcacheModule, AnEventIsAJobEventExactlyWhenItNamesAJob) {
    EXPECT_FALSE(environment_event(PMIX_ERR_NODE_DOWN).is_job_event());
    EXPECT_TRUE(job_event(PMIX_ERR_PROC_ABORTED, {}).is_job_event());
}

TEST(EvcacheModule, IdsAreNeverZeroAndIncreaseInArrivalOrder) {
    const auto cache = create_module(4);
    const auto first = cache->cache(environment_event(1));
    const auto second = cache->cache(environment_event(2));
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_NE(first.value(), 0u);
    EXPECT_LT(first.value(), second.value());
}

TEST(EvcacheModule, EvictionsAreSilentUntilAListenerIsSet) {
    const auto cache = create_module(2);
    for (pmix_status_t code = 1; code <= 3; ++code)
        ASSERT_TRUE(cache->cache(environment_event(code)).ok());
    EXPECT_EQ(cache->size(), 2u);
    EXPECT_EQ(cache->capacity(), 2u);
    EXPECT_EQ(replay_codes(*cache, kRank0), (std::vector<pmix_status_t>{2, 3}));

    std::vector<std::pair<pmix_status_t, EvictionReason>> evicted;
    cache->set_eviction_listener(
        [&](const CachedEvent &e, EvictionReason r) { evicted.emplace_back(e.code, r); });
    ASSERT_TRUE(cache->cache(environment_event(4)).ok());
    ASSERT_EQ(evicted.size(), 1u);
    EXPECT_EQ(evicted[0].first, 2);

    cache->set_eviction_listener({});  // cleared: silent again
    ASSERT_TRUE(cache->cache(environment_event(5)).ok());
    EXPECT_EQ(evicted.size(), 1u);
}

TEST(EvcacheModule, AFullCacheEvictsTheOldestEnvironmentEventBeforeAnyJobEvent) {
    const auto cache = create_module(2);
    std::vector<std::pair<pmix_status_t, EvictionReason>> evicted;
    cache->set_eviction_listener(
        [&](const CachedEvent &e, EvictionReason r) { evicted.emplace_back(e.code, r); });
    ASSERT_TRUE(cache->cache(job_event(10, {kRank0})).ok());
    ASSERT_TRUE(cache->cache(environment_event(20)).ok());
    ASSERT_TRUE(cache->cache(environment_event(30)).ok());
    ASSERT_EQ(evicted.size(), 1u);
    EXPECT_EQ(evicted[0], std::make_pair(pmix_status_t{20}, EvictionReason::kCapacity));
    EXPECT_EQ(replay_codes(*cache, kRank0), (std::vector<pmix_status_t>{10, 30}));
}

TEST(EvcacheModule, AFloodOfJobEventsPushesOutTheOldestJobEventAndSaysSo) {
    const auto cache = create_module(2);
    std::vector<std::pair<pmix_status_t, EvictionReason>> evicted;
    cache->set_eviction_listener(
        [&](const CachedEvent &e, EvictionReason r) { evicted.emplace_back(e.code, r); });
    for (pmix_status_t code = 1; code <= 3; ++code)
        ASSERT_TRUE(cache->cache(job_event(code, {kRank0})).ok());
    ASSERT_EQ(evicted.size(), 1u);
    EXPECT_EQ(evicted[0], std::make_pair(pmix_status_t{1}, EvictionReason::kFlood));
}

TEST(EvcacheModule, AJobEventStaysUntilEveryAwaitingClientHadIt) {
    const auto cache = create_module(8);
    ASSERT_TRUE(cache->cache(job_event(7, {kRank0, kRank1})).ok());

    EXPECT_EQ(replay_codes(*cache, kRank0), std::vector<pmix_status_t>{7});
    EXPECT_EQ(cache->size(), 1u);
    EXPECT_TRUE(replay_codes(*cache, kRank0).empty()) << "rank 0 already had it";

    EXPECT_TRUE(replay_codes(*cache, kRank1, /*accept=*/false) == std::vector<pmix_status_t>{7});
    EXPECT_EQ(cache->size(), 1u) << "not delivered: rank 1 still awaits it";
    EXPECT_EQ(replay_codes(*cache, kRank1), std::vector<pmix_status_t>{7});
    EXPECT_EQ(cache->size(), 0u);
}

TEST(EvcacheModule, EnvironmentEventsAreReplayedToEveryLateRegistrationOldestFirst) {
    const auto cache = create_module(8);
    ASSERT_TRUE(cache->cache(environment_event(1)).ok());
    ASSERT_TRUE(cache->cache(job_event(2, {kRank1})).ok());
    ASSERT_TRUE(cache->cache(environment_event(3)).ok());
    EXPECT_EQ(replay_codes(*cache, kRank0), (std::vector<pmix_status_t>{1, 3}));
    EXPECT_EQ(replay_codes(*cache, kRank0), (std::vector<pmix_status_t>{1, 3}));
    EXPECT_EQ(replay_codes(*cache, kRank1), (std::vector<pmix_status_t>{1, 2, 3}));
}

TEST(EvcacheModule, AJobEventNobodyAwaitsIsNotRetainedButGetsAnId) {
    const auto cache = create_module(8);
    const auto id = cache->cache(job_event(5, {}));
    ASSERT_TRUE(id.ok());
    EXPECT_NE(id.value(), 0u);
    EXPECT_EQ(cache->size(), 0u);
}

TEST(EvcacheModule, MarkDeliveredReleasesAJobEventAndRejectsUnknownOnes) {
    const auto cache = create_module(8);
    const auto id = cache->cache(job_event(5, {kRank0}));
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(cache->mark_delivered(id.value(), kRank1).code(), PMIX_ERR_NOT_FOUND);
    EXPECT_TRUE(cache->mark_delivered(id.value(), kRank0).ok());
    EXPECT_EQ(cache->size(), 0u);
    EXPECT_EQ(cache->mark_delivered(id.value(), kRank0).code(), PMIX_ERR_NOT_FOUND);
}

TEST(EvcacheModule, ForgetJobDropsItsEventsWithoutReportingEvictions) {
    const auto cache = create_module(8);
    int evictions = 0;
    cache->set_eviction_listener([&](const CachedEvent &, EvictionReason) { ++evictions; });
    ASSERT_TRUE(cache->cache(job_event(5, {kRank0})).ok());
    ASSERT_TRUE(cache->cache(environment_event(6)).ok());
    cache->forget_job("job1");
    EXPECT_EQ(cache->size(), 1u);
    EXPECT_EQ(evictions, 0);
}

TEST(EvcacheModule, ACacheOfCapacityZeroRefusesEvents) {
    const auto cache = create_module(0);
    EXPECT_EQ(cache->cache(environment_event(1)).status().code(), PMIX_ERR_OUT_OF_RESOURCE);
}

}  // namespace
