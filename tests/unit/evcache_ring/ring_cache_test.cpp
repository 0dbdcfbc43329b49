// RingCache, the module class itself (compiled into this test): what the
// component never builds (capacity 0), and a long random run checked against a
// plain model of the policy (slot reuse, the two lists and job events moving
// from one to the other must never lose arrival order, and evictions must pick
// the same events).
#include "ring_cache.hpp"

#include "evcache_ring_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>

namespace evcache_ring_test {
namespace {

using pmixpp::evcache_ring::RingCache;

TEST(RingCache, ACacheOfCapacityZeroRefusesEveryEvent) {
    RingCache cache(0);
    const auto env = cache.cache(environment_event(1));
    EXPECT_EQ(env.status().code(), PMIX_ERR_OUT_OF_RESOURCE);
    EXPECT_NE(env.status().message().find("evcache_ring_size"), std::string::npos);
    EXPECT_EQ(cache.cache(job_event(2, "job1", {proc("job1", 0)})).status().code(),
              PMIX_ERR_OUT_OF_RESOURCE);
    EXPECT_EQ(cache.size(), 0u);
    EXPECT_EQ(cache.capacity(), 0u);
}

// The policy written as plainly as possible: one list in arrival order.
class ModelCache {
  public:
    using Client = std::pair<std::string, pmix_rank_t>;  // nspace, rank

    explicit ModelCache(std::size_t capacity) : capacity_(capacity) {}

    void cache(pmix_status_t code, const std::string &job, std::set<Client> awaiting) {
        if (job.empty()) awaiting.clear();
        events_.push_back({code, job, std::move(awaiting)});
        while (events_.size() > capacity_) {
            // The oldest event nobody awaits, else (a flood) the oldest event.
            auto victim = std::find_if(events_.begin(), events_.end(),
                                       [](const Event &e) { return e.awaiting.empty(); });
            const bool flood = victim == events_.end();
            if (flood) victim = events_.begin();
            evicted_.emplace_back(victim->code,
                                  flood ? EvictionReason::kFlood : EvictionReason::kCapacity);
            events_.erase(victim);
        }
    }
    // Every event is offered; a job event's delivery takes the peer off.
    Codes replay(const Client &peer, bool accept) {
        Codes codes;
        for (auto &e : events_) {
            codes.push_back(e.code);
            if (accept) e.awaiting.erase(peer);
        }
        return codes;
    }
    bool mark_delivered(pmix_status_t code, const Client &peer) {
        auto it = std::find_if(events_.begin(), events_.end(),
                               [&](const Event &e) { return e.code == code && !e.job.empty(); });
        return it != events_.end() && it->awaiting.erase(peer) != 0;
    }
    void forget_job(const std::string &job) {
        std::erase_if(events_, [&](const Event &e) { return e.job == job; });
        for (auto &e : events_)
            std::erase_if(e.awaiting, [&](const Client &c) { return c.first == job; });
    }
    std::size_t size() const { return events_.size(); }
    const Evictions &evicted() const { return evicted_; }

  private:
    struct Event {
        pmix_status_t code;
        std::string job;
        std::set<Client> awaiting;
    };
    std::size_t capacity_;
    std::deque<Event> events_;
    Evictions evicted_;
};

TEST(RingCache, ARandomMixOfOperationsBehavesLikeThePlainModel) {
    constexpr std::size_t kCapacity = 7;
    RingCache cache(kCapacity);
    ModelCache model(kCapacity);
    EvictionLog log;
    log.attach(cache);
    std::mt19937 random(20240611);  // fixed seed: a failure repeats identically
    auto pick = [&](unsigned n) { return static_cast<unsigned>(random() % n); };
    // Two live jobs with clients of rank 0..3; a forgotten job is replaced by a
    // new name, so its clients never come back.
    std::vector<std::string> jobs = {"job0", "job1"};
    int next_job = 2;
    std::map<pmix_status_t, EventId> ids;  // job events cached so far, by code

    for (pmix_status_t code = 1; code <= 5000; ++code) {
        SCOPED_TRACE("step " + std::to_string(code));
        const std::string job = jobs[pick(2)];
        const ModelCache::Client client{jobs[pick(2)], static_cast<pmix_rank_t>(pick(4))};
        const pmix_proc_t peer = proc(client.first, client.second);
        switch (pick(7)) {
            case 0:
            case 1:
                cache_ok(cache, environment_event(code));
                model.cache(code, "", {});
                break;
            case 2:
            case 3: {
                // Mostly the job's own clients, sometimes a client of the other job.
                std::set<ModelCache::Client> awaiting;
                std::vector<pmix_proc_t> procs;
                for (unsigned n = pick(5); n > 0; --n) {
                    const ModelCache::Client c{pick(4) == 0 ? jobs[pick(2)] : job,
                                               static_cast<pmix_rank_t>(pick(4))};
                    awaiting.insert(c);
                    procs.push_back(proc(c.first, c.second));  // duplicates on purpose
                }
                ids[code] = cache_ok(cache, job_event(code, job, procs));
                model.cache(code, job, awaiting);
                break;
            }
            case 4: {
                const bool accept = pick(4) != 0;
                ASSERT_EQ(replay_codes(cache, peer, accept), model.replay(client, accept));
                break;
            }
            case 5: {
                if (ids.empty()) break;
                auto it = ids.begin();
                std::advance(it, pick(static_cast<unsigned>(ids.size())));
                ASSERT_EQ(cache.mark_delivered(it->second, peer).ok(),
                          model.mark_delivered(it->first, client));
                break;
            }
            default:
                if (pick(6) == 0) {
                    cache.forget_job(job);
                    model.forget_job(job);
                    jobs[job == jobs[0] ? 0 : 1] = "job" + std::to_string(next_job++);
                }
                break;
        }
        ASSERT_EQ(cache.size(), model.size());
        ASSERT_EQ(log.entries, model.evicted());
    }
    EXPECT_GT(log.entries.size(), 0u) << "the run must exercise evictions";
}

}  // namespace
}  // namespace evcache_ring_test
