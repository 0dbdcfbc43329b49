// Unit tests of the server's Collectives service (framework/server/collectives.hpp)
// without sockets or a progress loop: the requests it registers, the
// tracker other services build their collectives on (CollectiveTracker:
// gathering of the local participants, separate trackers per tag, refusals),
// and its departure work.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/client_table.hpp"
#include "server/collectives.hpp"
#include "server/modex.hpp"
#include "server/requests.hpp"

using namespace pmixpp::server;

namespace {

struct Answer {
    int count = 0;
    pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;
};

PendingReply into(Answer &a) {
    return PendingReply::to([&a](std::span<const std::uint8_t> body) {
        ++a.count;
        pmixpp::wire::BodyReader r(body);
        std::int32_t st = 0;
        r.i32(st);
        a.status = st;
    });
}

// What the hooks of one custom collective saw.
struct Seen {
    int ready = 0;
    int finished = 0;
    pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;
    std::size_t contributors = 0;
};

struct CollectivesTest : ::testing::Test {
    ClientTable table;
    HostUpcalls host;  // no upcalls
    RequestTable requests;
    Modex modex{table, host, requests,
                [](const std::string &) { return std::vector<std::uint8_t>{}; }};
    Collectives coll{table, host, requests, modex,
                     [](const std::string &) { return std::vector<std::uint8_t>{}; }};
    CollectivesTest() {
        table.subscribe(&modex);
        table.subscribe(&coll);
    }

    ClientRecord &client(const char *ns, pmix_rank_t rank, std::uint32_t size = 2) {
        ClientRecord &c = table.register_client(proc_of({ns, rank}), 0, 0, nullptr);
        c.state = ClientRecord::State::connected;
        table.job(ns).registered = true;
        table.job(ns).job_size = size;
        return c;
    }

    // Hooks that record into `seen`; `complete_when_ready`: the service
    // completes with success as soon as every local participant is in.
    std::shared_ptr<CollectiveHooks> hooks(Seen &seen, bool complete_when_ready) {
        auto h = std::make_shared<CollectiveHooks>();
        h->ready = [this, &seen, complete_when_ready](const FenceTracker &t) {
            ++seen.ready;
            if (complete_when_ready) coll.complete(t.id, PMIX_SUCCESS);
        };
        h->finished = [&seen](const FenceTracker &t, pmix_status_t st) {
            ++seen.finished;
            seen.status = st;
            seen.contributors = t.contributed.size();
            for (const auto &[k, reply] : t.contributed) send_reply(reply, status_body(st));
        };
        return h;
    }
};

std::vector<pmix_proc_t> procs(const char *ns, std::initializer_list<pmix_rank_t> ranks) {
    std::vector<pmix_proc_t> out;
    for (auto r : ranks) out.push_back(proc_of({ns, r}));
    return out;
}

}  // namespace

TEST_F(CollectivesTest, RegistersFenceConnectAndDisconnect) {
    using pmixpp::wire::Command;
    for (auto c :
         {Command::fence, Command::fence_shm_done, Command::connect, Command::disconnect}) {
        EXPECT_NE(requests.find(static_cast<std::uint16_t>(c)), nullptr);
    }
}

TEST_F(CollectivesTest, CustomCollectiveIsReadyOnceEveryLocalParticipantJoined) {
    client("a", 0);
    client("a", 1);
    Seen seen;
    Answer a0, a1;
    const auto id =
        coll.join("grp", procs("a", {0, 1}), {"a", 0}, into(a0), 0, nullptr, hooks(seen, true));
    ASSERT_NE(id, 0u);
    EXPECT_EQ(seen.ready, 0);
    EXPECT_EQ(a0.count, 0);
    EXPECT_EQ(
        coll.join("grp", procs("a", {1, 0}), {"a", 1}, into(a1), 0, nullptr, hooks(seen, true)),
        id);  // same procs in another order: the same collective
    EXPECT_EQ(seen.ready, 1);
    EXPECT_EQ(seen.finished, 1);
    EXPECT_EQ(seen.status, PMIX_SUCCESS);
    EXPECT_EQ(seen.contributors, 2u);
    EXPECT_EQ(a0.status, PMIX_SUCCESS);
    EXPECT_EQ(a1.status, PMIX_SUCCESS);
    EXPECT_TRUE(coll.trackers().empty());
}

TEST_F(CollectivesTest, DifferentTagsOverTheSameProcsNeverMix) {
    client("a", 0);
    client("a", 1);
    Seen x, y;
    Answer a0, a1, b1;
    const auto idx =
        coll.join("grp|x", procs("a", {0, 1}), {"a", 0}, into(a0), 0, nullptr, hooks(x, true));
    const auto idy =
        coll.join("grp|y", procs("a", {0, 1}), {"a", 1}, into(b1), 0, nullptr, hooks(y, true));
    EXPECT_NE(idx, idy);
    EXPECT_EQ(x.ready + y.ready, 0);
    EXPECT_EQ(coll.trackers().size(), 2u);
    coll.join("grp|x", procs("a", {0, 1}), {"a", 1}, into(a1), 0, nullptr, hooks(x, true));
    EXPECT_EQ(x.finished, 1);
    EXPECT_EQ(y.finished, 0);
    EXPECT_EQ(b1.count, 0);  // still waiting for a:0 in "y"
}

TEST_F(CollectivesTest, ServiceCompletesLaterWithItsOwnStatus) {
    client("a", 0);
    Seen seen;
    Answer a0;
    const auto id =
        coll.join("grp", procs("a", {0}), {"a", 0}, into(a0), 0, nullptr, hooks(seen, false));
    EXPECT_EQ(seen.ready, 1);
    EXPECT_EQ(seen.finished, 0);
    // Handed to the service: a departure no longer fails it.
    coll.complete(id, PMIX_ERR_NOT_SUPPORTED);
    EXPECT_EQ(seen.finished, 1);
    EXPECT_EQ(a0.status, PMIX_ERR_NOT_SUPPORTED);
    coll.complete(id, PMIX_SUCCESS);  // already completed: nothing
    EXPECT_EQ(seen.finished, 1);
    EXPECT_EQ(a0.count, 1);
}

TEST_F(CollectivesTest, CallerNotAmongTheProcsIsRefused) {
    client("a", 0);
    client("a", 1);
    Seen seen;
    Answer a0;
    EXPECT_EQ(coll.join("grp", procs("a", {1}), {"a", 0}, into(a0), 0, nullptr, hooks(seen, true)),
              0u);
    EXPECT_EQ(a0.status, PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(seen.ready + seen.finished, 0);
    EXPECT_TRUE(coll.trackers().empty());
}

TEST_F(CollectivesTest, EachDepartureKindFailsAWaitingCollective) {
    for (auto why : {Departure::lost, Departure::deregistered}) {
        client("a", 0);
        client("a", 1);
        Seen seen;
        Answer a0;
        coll.join("grp", procs("a", {0, 1}), {"a", 0}, into(a0), 0, nullptr, hooks(seen, true));
        table.depart({"a", 1}, why);
        EXPECT_EQ(seen.finished, 1) << to_string(why);
        EXPECT_EQ(seen.status, PMIX_ERR_LOST_CONNECTION) << to_string(why);
        EXPECT_EQ(a0.status, PMIX_ERR_LOST_CONNECTION) << to_string(why);
        table.clear();
    }
}

TEST_F(CollectivesTest, FinalizedContributorStillCounts) {
    client("a", 0);
    client("a", 1);
    Seen seen;
    Answer a0, a1;
    coll.join("grp", procs("a", {0, 1}), {"a", 0}, into(a0), 0, nullptr, hooks(seen, true));
    table.depart({"a", 0}, Departure::finalized);
    EXPECT_EQ(seen.finished, 0);
    coll.join("grp", procs("a", {0, 1}), {"a", 1}, into(a1), 0, nullptr, hooks(seen, true));
    EXPECT_EQ(seen.status, PMIX_SUCCESS);
}

TEST_F(CollectivesTest, GoneParticipantRefusesANewCollective) {
    client("a", 0);
    client("a", 1);
    table.depart({"a", 1}, Departure::lost);
    Seen seen;
    Answer a0;
    EXPECT_EQ(
        coll.join("grp", procs("a", {0, 1}), {"a", 0}, into(a0), 0, nullptr, hooks(seen, true)),
        0u);
    EXPECT_EQ(a0.status, PMIX_ERR_LOST_CONNECTION);
}

TEST_F(CollectivesTest, DeregisteredJobFailsCollectivesNamingIt) {
    client("a", 0);
    Seen seen;
    Answer a0;
    // b is served elsewhere: a:0 is the only local participant, and the
    // service has not completed yet.
    coll.join("grp", {proc_of({"a", 0}), proc_of({"b", 0})}, {"a", 0}, into(a0), 0, nullptr,
              hooks(seen, false));
    EXPECT_EQ(seen.ready, 1);
    // Handed to the service: only the service completes it now.
    table.deregister_nspace("b");
    EXPECT_EQ(seen.finished, 0);
    client("c", 0);
    client("c", 1);
    Seen other;
    Answer c0;
    coll.join("grp", {proc_of({"c", 0}), proc_of({"c", 1}), proc_of({"d", 3})}, {"c", 0}, into(c0),
              0, nullptr, hooks(other, true));
    table.deregister_nspace("d");
    EXPECT_EQ(other.status, PMIX_ERR_LOST_CONNECTION);
    EXPECT_EQ(c0.status, PMIX_ERR_LOST_CONNECTION);
}

TEST_F(CollectivesTest, AllLocalNeedsEveryRankHere) {
    client("a", 0);
    EXPECT_TRUE(coll.all_local(procs("a", {0})));
    EXPECT_FALSE(coll.all_local(procs("a", {1})));
    EXPECT_FALSE(coll.all_local({proc_of({"a", PMIX_RANK_WILDCARD})}));  // size 2, one here
    client("a", 1);
    EXPECT_TRUE(coll.all_local({proc_of({"a", PMIX_RANK_WILDCARD})}));
    EXPECT_FALSE(coll.all_local(procs("zz", {0})));
}

TEST_F(CollectivesTest, ServiceMayGoOnWithoutADepartedParticipant) {
    client("a", 0);
    client("a", 1);
    client("a", 2);
    Seen seen;
    Answer a0, a1;
    auto h = hooks(seen, true);
    std::vector<ProcKey> told;
    h->departed = [&told](const FenceTracker &, const ProcKey &gone) {
        told.push_back(gone);
        return gone.second == 2;  // only a:2 is optional
    };
    coll.join("grp", procs("a", {0, 1, 2}), {"a", 0}, into(a0), 0, nullptr, h);
    table.depart({"a", 2}, Departure::lost);  // absorbed: the collective goes on
    EXPECT_EQ(seen.finished, 0);
    coll.join("grp", procs("a", {0, 1, 2}), {"a", 1}, into(a1), 0, nullptr, h);
    EXPECT_EQ(seen.status, PMIX_SUCCESS);
    EXPECT_EQ(seen.contributors, 2u);
    ASSERT_EQ(told.size(), 1u);
    EXPECT_EQ(told[0], (ProcKey{"a", 2}));
    // A participant gone before the collective opens: asked as well.
    Seen later;
    Answer b0;
    auto h2 = hooks(later, true);
    h2->departed = [](const FenceTracker &, const ProcKey &) { return true; };
    coll.join("grp2", procs("a", {0, 2}), {"a", 0}, into(b0), 0, nullptr, h2);
    EXPECT_EQ(later.status, PMIX_SUCCESS);
    EXPECT_EQ(b0.status, PMIX_SUCCESS);
}
