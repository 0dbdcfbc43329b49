// Unit tests of the shared-memory fence segment (framework/wire/shm_fence.hpp):
// threads and a forked process mapping one segment, as a job's clients do.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "wire/shm_fence.hpp"

using pmixpp::wire::ShmFence;

namespace {

std::unique_ptr<ShmFence> make(std::uint32_t n) {
    std::string error;
    auto seg = ShmFence::create(n, error);
    EXPECT_NE(seg, nullptr) << error;
    return seg;
}

std::unique_ptr<ShmFence> attach(const std::string &name) {
    std::string error;
    auto seg = ShmFence::open(name, error);
    EXPECT_NE(seg, nullptr) << error;
    return seg;
}

const std::atomic<bool> kNotLost{false};

}  // namespace

TEST(ShmFence, NoParticipantLeavesBeforeTheLastArrives) {
    constexpr int kProcs = 4, kRounds = 300;
    auto owner = make(kProcs);
    ASSERT_NE(owner, nullptr);
    std::atomic<int> arrivals{0};
    std::atomic<bool> early{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kProcs; ++t) {
        threads.emplace_back([&] {
            auto seg = attach(owner->name());
            if (!seg) return;
            for (int r = 0; r < kRounds; ++r) {
                arrivals.fetch_add(1);
                ShmFence::Arrival a;
                if (seg->arrive(false, a) != PMIX_SUCCESS) early = true;
                if (!a.completed && seg->wait(a.gen, 0, kNotLost) != PMIX_SUCCESS) early = true;
                // Everybody has arrived at round r before anybody leaves it.
                if (arrivals.load() < kProcs * (r + 1)) early = true;
            }
        });
    }
    for (auto &t : threads) t.join();
    EXPECT_FALSE(early);
    EXPECT_EQ(arrivals.load(), kProcs * kRounds);
}

TEST(ShmFence, TheLastArrivalCompletesAndCountsProxiedArrivals) {
    auto seg = make(3);
    ASSERT_NE(seg, nullptr);
    ShmFence::Arrival a, b, c;
    ASSERT_EQ(seg->arrive(true, a), PMIX_SUCCESS);
    ASSERT_EQ(seg->arrive(false, b), PMIX_SUCCESS);
    EXPECT_FALSE(a.completed);
    EXPECT_FALSE(b.completed);
    EXPECT_FALSE(seg->completed(a.gen));
    ASSERT_EQ(seg->arrive(false, c), PMIX_SUCCESS);
    EXPECT_TRUE(c.completed);
    EXPECT_EQ(c.proxied, 1u);
    EXPECT_EQ(c.gen, a.gen);
    EXPECT_TRUE(seg->completed(a.gen));
    EXPECT_EQ(seg->wait(a.gen, 0, kNotLost), PMIX_SUCCESS);
    // The next generation starts empty.
    ShmFence::Arrival d;
    ASSERT_EQ(seg->arrive(false, d), PMIX_SUCCESS);
    EXPECT_EQ(d.gen, a.gen + 1);
    EXPECT_FALSE(d.completed);
}

TEST(ShmFence, ATimedOutWaiterWithdrawsItsArrival) {
    auto seg = make(2);
    ASSERT_NE(seg, nullptr);
    ShmFence::Arrival a;
    ASSERT_EQ(seg->arrive(false, a), PMIX_SUCCESS);
    EXPECT_EQ(seg->wait(a.gen, 1, kNotLost), PMIX_ERR_TIMEOUT);
    // Withdrawn: one more arrival does not complete the generation.
    ShmFence::Arrival b;
    ASSERT_EQ(seg->arrive(false, b), PMIX_SUCCESS);
    EXPECT_FALSE(b.completed);
    ShmFence::Arrival c;
    ASSERT_EQ(seg->arrive(false, c), PMIX_SUCCESS);
    EXPECT_TRUE(c.completed);
    // A completed generation cannot be withdrawn from.
    EXPECT_FALSE(seg->withdraw(b.gen, false));
}

TEST(ShmFence, BreakingWakesWaitersAndIsSticky) {
    auto seg = make(2);
    ASSERT_NE(seg, nullptr);
    ShmFence::Arrival a;
    ASSERT_EQ(seg->arrive(false, a), PMIX_SUCCESS);
    pmix_status_t got = PMIX_SUCCESS;
    std::thread waiter([&] { got = seg->wait(a.gen, 30, kNotLost); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    seg->break_with(PMIX_ERR_LOST_CONNECTION);
    waiter.join();
    EXPECT_EQ(got, PMIX_ERR_LOST_CONNECTION);
    EXPECT_EQ(seg->broken(), PMIX_ERR_LOST_CONNECTION);
    ShmFence::Arrival b;
    EXPECT_EQ(seg->arrive(false, b), PMIX_ERR_LOST_CONNECTION);
    seg->break_with(PMIX_ERR_TIMEOUT);  // the first status stays
    EXPECT_EQ(seg->broken(), PMIX_ERR_LOST_CONNECTION);
}

TEST(ShmFence, MendingVoidsEarlierArrivalsAndLetsTheBarrierCompleteAgain) {
    auto seg = make(2);
    ASSERT_NE(seg, nullptr);
    ShmFence::Arrival a;
    ASSERT_EQ(seg->arrive(false, a), PMIX_SUCCESS);  // made before the break
    seg->break_with(PMIX_ERR_LOST_CONNECTION);
    seg->mend();  // the departed participant is back (server side)
    EXPECT_EQ(seg->broken(), PMIX_SUCCESS);
    ShmFence::Arrival b, c;
    ASSERT_EQ(seg->arrive(false, b), PMIX_SUCCESS);
    EXPECT_NE(b.gen, a.gen);
    EXPECT_FALSE(b.completed);  // the arrival made before the break does not count
    pmix_status_t got = PMIX_ERROR;
    std::thread waiter([&] { got = seg->wait(b.gen, 30, kNotLost); });
    ASSERT_EQ(seg->arrive(false, c), PMIX_SUCCESS);
    EXPECT_TRUE(c.completed);
    waiter.join();
    EXPECT_EQ(got, PMIX_SUCCESS);
}

TEST(ShmFence, ALostConnectionWakesItsOwnWaiter) {
    auto seg = make(2);
    ASSERT_NE(seg, nullptr);
    ShmFence::Arrival a;
    ASSERT_EQ(seg->arrive(false, a), PMIX_SUCCESS);
    std::atomic<bool> lost{false};
    pmix_status_t got = PMIX_SUCCESS;
    std::thread waiter([&] { got = seg->wait(a.gen, 30, lost); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    lost = true;
    seg->wake_all();
    waiter.join();
    EXPECT_EQ(got, PMIX_ERR_LOST_CONNECTION);
    EXPECT_EQ(seg->broken(), PMIX_SUCCESS);  // the others are not affected
}

TEST(ShmFence, AForkedProcessMeetsInTheSameBarrierAndCountsCommits) {
    auto seg = make(2);
    ASSERT_NE(seg, nullptr);
    const std::string name = seg->name();
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        std::string error;
        auto mine = ShmFence::open(name, error);
        if (!mine) _exit(10);
        mine->count_commit(1);
        mine->count_commit(1);
        mine->count_commit(7);  // no such rank: ignored
        ShmFence::Arrival a;
        if (mine->arrive(false, a) != PMIX_SUCCESS) _exit(11);
        if (!a.completed && mine->wait(a.gen, 30, kNotLost) != PMIX_SUCCESS) _exit(12);
        _exit(0);
    }
    ShmFence::Arrival a;
    ASSERT_EQ(seg->arrive(false, a), PMIX_SUCCESS);
    if (!a.completed) {
        EXPECT_EQ(seg->wait(a.gen, 30, kNotLost), PMIX_SUCCESS);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(seg->commits(1), 2u);
    EXPECT_EQ(seg->commits(0), 0u);
}

TEST(ShmFence, OpenRefusesMissingAndForeignSegments) {
    std::string error;
    EXPECT_EQ(ShmFence::open("/pmixpp.fence.no-such-segment", error), nullptr);
    EXPECT_NE(error.find("shm_open"), std::string::npos) << error;

    const std::string foreign = "/pmixpp.fence.test-foreign." + std::to_string(getpid());
    const int fd = shm_open(foreign.c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, 4096), 0);
    void *p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ASSERT_NE(p, MAP_FAILED);
    std::memset(p, 0x5a, 4096);
    munmap(p, 4096);
    close(fd);
    error.clear();
    EXPECT_EQ(ShmFence::open(foreign, error), nullptr);
    EXPECT_NE(error.find("not a pmixpp fence segment"), std::string::npos) << error;
    shm_unlink(foreign.c_str());
}

TEST(ShmFence, TheOwnerRemovesTheSegment) {
    std::string name;
    {
        auto seg = make(2);
        ASSERT_NE(seg, nullptr);
        name = seg->name();
        EXPECT_NE(attach(name), nullptr);
    }
    std::string error;
    EXPECT_EQ(ShmFence::open(name, error), nullptr);
    EXPECT_EQ(ShmFence::create(0, error), nullptr);
}

// A server killed with SIGKILL leaves its segment in /dev/shm; the next server
// to create one removes the segments of servers that are gone, and only those.
TEST(ShmFence, CreatingRemovesSegmentsOfServersThatAreGone) {
    const pid_t gone = ::fork();  // a pid that certainly existed and is gone
    ASSERT_GE(gone, 0);
    if (gone == 0) ::_exit(0);
    ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);
    const pid_t alive = ::fork();  // a server that is still running
    ASSERT_GE(alive, 0);
    if (alive == 0) {
        ::pause();
        ::_exit(0);
    }
    auto make_segment = [](const std::string &name) {
        const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0) ::close(fd);
        return fd >= 0;
    };
    auto exists = [](const std::string &name) {
        const int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
        if (fd >= 0) ::close(fd);
        return fd >= 0;
    };
    const std::string stale = "/pmixpp.fence." + std::to_string(gone) + ".7";
    const std::string live = "/pmixpp.fence." + std::to_string(alive) + ".7";
    const std::string lookalike = "/pmixpp.fence." + std::to_string(gone) + ".7x";
    const std::string stale_area = "/pmixpp.fence." + std::to_string(gone) + ".7.3";
    const std::string area_lookalike = "/pmixpp.fence." + std::to_string(gone) + ".7.3x";
    for (const auto &n : {stale, live, lookalike, stale_area, area_lookalike})
        ASSERT_TRUE(make_segment(n)) << n;

    auto seg = make(2);
    ASSERT_NE(seg, nullptr);
    EXPECT_FALSE(exists(stale));
    EXPECT_TRUE(exists(live));
    EXPECT_TRUE(exists(lookalike));
    EXPECT_FALSE(exists(stale_area));  // a fence area (ShmArea) of that server
    EXPECT_TRUE(exists(area_lookalike));
    EXPECT_TRUE(exists(seg->name()));

    ::kill(alive, SIGKILL);
    ::waitpid(alive, nullptr, 0);
    for (const auto &n : {stale, live, lookalike, stale_area, area_lookalike})
        ::shm_unlink(n.c_str());
}

// ---------------------------------------------------------------------------------------------
// ShmArea: a rank's fence area for collecting fences through the barrier.

using pmixpp::wire::ShmArea;

namespace {

std::vector<std::uint8_t> pattern(std::size_t n, std::uint8_t seed) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7);
    return v;
}

std::vector<std::uint8_t> bytes_of(const ShmArea::View &v) {
    return {v.data.begin(), v.data.end()};
}

}  // namespace

TEST(ShmArea, AReaderSeesEachGenerationsSlotWhileTheWriterFillsTheNext) {
    std::string error;
    auto fence = make(2);
    ASSERT_NE(fence, nullptr);
    const std::string name = ShmArea::name_for(fence->name(), 1);
    auto owner = ShmArea::create(name, error);
    ASSERT_NE(owner, nullptr) << error;
    auto writer = ShmArea::open(name, error);
    auto reader = ShmArea::open(name, error);
    ASSERT_NE(writer, nullptr) << error;
    ASSERT_NE(reader, nullptr) << error;

    ShmArea::View v;
    ASSERT_TRUE(reader->read(0, v, error)) << error;
    EXPECT_FALSE(v.published);  // nothing written yet

    // Sizes that make the object grow past the reader's mapping, and a
    // generation whose data is written while the previous one is read.
    const auto g0 = pattern(100000, 1), g1 = pattern(300000, 2), g2 = pattern(50, 3);
    ASSERT_TRUE(writer->publish(0, 0, 1, ShmArea::kWhole, g0, error)) << error;
    ASSERT_TRUE(reader->read(0, v, error)) << error;
    ASSERT_TRUE(v.published);
    EXPECT_EQ(v.from, 0u);
    EXPECT_EQ(v.to, 1u);
    EXPECT_EQ(v.flags, std::uint32_t{ShmArea::kWhole});
    const auto read0 = bytes_of(v);
    ASSERT_TRUE(writer->publish(1, 1, 2, 0, g1, error)) << error;
    EXPECT_EQ(read0, g0);
    ASSERT_TRUE(reader->read(0, v, error)) << error;
    EXPECT_EQ(bytes_of(v), g0);  // generation 0's bytes are intact
    ASSERT_TRUE(reader->read(1, v, error)) << error;
    ASSERT_TRUE(v.published);
    EXPECT_EQ(v.from, 1u);
    EXPECT_EQ(v.to, 2u);
    EXPECT_EQ(bytes_of(v), g1);
    ASSERT_TRUE(writer->publish(2, 2, 3, 0, g2, error)) << error;
    ASSERT_TRUE(reader->read(1, v, error)) << error;
    EXPECT_EQ(bytes_of(v), g1);  // generation 1's, while 2 was written
    ASSERT_TRUE(reader->read(2, v, error)) << error;
    EXPECT_EQ(bytes_of(v), g2);
    // A slot left from generation 0 is not generation 4's.
    ASSERT_TRUE(reader->read(4, v, error)) << error;
    EXPECT_FALSE(v.published);
}

TEST(ShmArea, OpenRefusesAnObjectThatIsNotAnArea) {
    std::string error;
    auto fence = make(1);
    ASSERT_NE(fence, nullptr);
    EXPECT_EQ(ShmArea::open(fence->name() + ".9", error), nullptr);  // missing
    EXPECT_EQ(ShmArea::open(fence->name(), error), nullptr);         // too small
    auto data = pmixpp::wire::ShmData::create(1, error);             // a page, not an area
    ASSERT_NE(data, nullptr) << error;
    EXPECT_EQ(ShmArea::open(data->name(), error), nullptr);
    EXPECT_NE(error.find("not a pmixpp fence area"), std::string::npos) << error;
}

TEST(ShmFence, AnArrivalThatExpectsAnotherGenerationIsNotCounted) {
    auto seg = make(2);
    ASSERT_NE(seg, nullptr);
    const std::uint32_t gen = seg->current_gen();
    seg->break_with(PMIX_ERR_LOST_CONNECTION);
    seg->mend();  // a new generation: an area written for `gen` is stale
    ShmFence::Arrival a;
    ASSERT_EQ(seg->arrive(false, a, &gen), PMIX_SUCCESS);
    EXPECT_TRUE(a.stale);
    EXPECT_FALSE(a.completed);
    const std::uint32_t now = seg->current_gen();
    EXPECT_NE(now, gen);
    ASSERT_EQ(seg->arrive(false, a, &now), PMIX_SUCCESS);
    EXPECT_FALSE(a.stale);
    EXPECT_FALSE(a.completed);  // the stale one was not counted: 1 of 2
    ASSERT_EQ(seg->arrive(false, a, &now), PMIX_SUCCESS);
    EXPECT_TRUE(a.completed);
}
