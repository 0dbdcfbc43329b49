// gds_hash: readers (const methods) run concurrently with each other, and
// with a writer when the core's reader/writer lock is held as gds.hpp says.
// Run under TSan (PMIXPP_SANITIZE=thread) to catch a reader that mutates.
#include "gds_hash_support.hpp"

#include <atomic>
#include <chrono>
#include <shared_mutex>
#include <thread>

using namespace gds_hash_test;

namespace {

Infos job_of_size(std::uint32_t n) {
    Infos info;
    info.u32(PMIX_JOB_SIZE, n);
    for (pmix_rank_t r = 0; r < n; ++r) {
        Infos pdata;
        pdata.rank(PMIX_RANK, r).u16(PMIX_LOCAL_RANK, static_cast<std::uint16_t>(r));
        info.array(PMIX_PROC_DATA, pdata);
    }
    Infos node;
    node.u32(PMIX_NODEID, 0).str(PMIX_HOSTNAME, "alpha").u32(PMIX_LOCAL_SIZE, n);
    info.array(PMIX_NODE_INFO_ARRAY, node);
    return info;
}

}  // namespace

TEST_F(GdsHash, ReadersRunConcurrentlyWithoutALockOfTheirOwn) {
    ASSERT_TRUE(m->register_job("job1", job_of_size(16).span()).ok());
    for (pmix_rank_t r = 0; r < 16; ++r) {
        ASSERT_TRUE(m->store(proc("job1", r), PMIX_GLOBAL, "user.key", u32_value(r)).ok());
        ASSERT_TRUE(m->commit(proc("job1", r)).ok());
    }
    const gds::Module &reader = *m;
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            Infos by_host;
            by_host.str(PMIX_HOSTNAME, "alpha");
            for (int i = 0; i < 2000; ++i) {
                const pmix_rank_t r = static_cast<pmix_rank_t>((i + t) % 16);
                if (get_u32(reader, job("job1"), PMIX_JOB_SIZE) != 16) ++mismatches;
                if (get_u32(reader, proc("job1", r), "user.key") != r) ++mismatches;
                if (get_u32(reader, job("job1"), PMIX_LOCAL_SIZE, by_host) != 16) ++mismatches;
                if (i % 100 == 0) {
                    if (all_keys(reader, proc("job1", r)).size() != 3)
                        ++mismatches;  // rank, local rank, user.key
                    if (!reader.assemble_modex(proc("job1", r), PMIX_REMOTE).ok()) ++mismatches;
                    if (!reader.assemble_job("job1").ok()) ++mismatches;
                }
            }
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(mismatches.load(), 0);
}

TEST_F(GdsHash, ReadersUnderTheCoreLockSeeWholeWritesOfAWriter) {
    // The core's protocol: writers under the exclusive lock, readers shared.
    std::shared_mutex lock;
    ASSERT_TRUE(m->register_job("job1", job_of_size(4).span()).ok());
    std::atomic<bool> done{false};
    std::atomic<int> bad{0};
    std::atomic<long> reads{0};

    std::thread writer([&] {
        for (std::uint32_t gen = 1; gen <= 300; ++gen) {
            std::unique_lock guard(lock);
            // Two keys always written together: a reader never sees them differ.
            EXPECT_TRUE(m->store(proc("job1", 0), PMIX_GLOBAL, "a", u32_value(gen)).ok());
            EXPECT_TRUE(m->store(proc("job1", 0), PMIX_GLOBAL, "b", u32_value(gen)).ok());
            Infos info;
            info.u32("gen", gen);
            EXPECT_TRUE(m->register_job("job1", info.span()).ok());
            if (gen % 50 == 0) {
                EXPECT_TRUE(
                    m->register_job("job" + std::to_string(gen), job_of_size(2).span()).ok());
                EXPECT_TRUE(m->delete_job("job" + std::to_string(gen)).ok());
            }
        }
        done = true;
    });
    std::vector<std::thread> readers;
    for (int t = 0; t < 3; ++t) {
        readers.emplace_back([&] {
            while (!done || reads.load() < 100) {
                std::shared_lock guard(lock);
                auto a = get(*m, proc("job1", 0), "a");
                auto b = get(*m, proc("job1", 0), "b");
                if (a->ok() != b->ok() || (a->ok() && a->value.data.uint32 != b->value.data.uint32))
                    ++bad;
                if (get_u32(*m, job("job1"), PMIX_JOB_SIZE) != 4) ++bad;
                ++reads;
                guard.unlock();
                // glibc's shared_mutex prefers readers: pace them so the writer
                // gets its turns (the core's own lock prefers writers).
                std::this_thread::sleep_for(std::chrono::microseconds(20));
            }
        });
    }
    writer.join();
    for (auto &th : readers) th.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(get_u32(*m, job("job1"), "gen"), 300u);
}
