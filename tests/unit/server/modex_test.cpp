// Unit tests of the server's Modex service (framework/server/modex.hpp)
// without sockets or a progress loop: get and dmodex waiters on a client's
// commit are answered at its commit and at each kind of departure; deferred
// dmodex requests; the remote blobs the collectives keep; commits kept as
// blobs, not decoded, and a `whole` commit replacing them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gds/gds_base.hpp"
#include "server/client_table.hpp"
#include "server/modex.hpp"
#include "server/requests.hpp"
#include "wire/message.hpp"

using namespace pmixpp::server;

namespace {

// A reply as the client would read it: status, job blob, record stream.
struct Answer {
    int count = 0;
    pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;
    std::vector<pmixpp::wire::ModexRecord> records;
};

PendingReply into(Answer &a) {
    return PendingReply::to([&a](std::span<const std::uint8_t> body) {
        ++a.count;
        pmixpp::wire::BodyReader r(body);
        std::int32_t st = 0;
        r.i32(st);
        a.status = st;
        std::vector<std::uint8_t> job, stream;
        if (st == PMIX_SUCCESS && r.bytes(job) && r.bytes(stream)) {
            EXPECT_TRUE(pmixpp::wire::parse_records(stream, a.records));
        }
    });
}

// What PMIx_server_dmodex_request's callback received.
struct DmodexAnswer {
    int count = 0;
    pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;
    std::vector<pmixpp::wire::ModexRecord> records;
};

void dmodex_cb(pmix_status_t status, char *data, size_t size, void *cbdata) {
    auto *a = static_cast<DmodexAnswer *>(cbdata);
    ++a->count;
    a->status = status;
    if (data != nullptr) {
        std::span<const std::uint8_t> s(reinterpret_cast<const std::uint8_t *>(data), size);
        EXPECT_TRUE(pmixpp::wire::parse_records(s, a->records));
    }
}

struct ModexTest : ::testing::Test {
    ClientTable table;
    HostUpcalls host;  // no upcalls
    RequestTable requests;
    Modex modex{table, host, requests,
                [](const std::string &) { return std::vector<std::uint8_t>{}; }};
    ModexTest() { table.subscribe(&modex); }

    ClientRecord &client(const char *ns, pmix_rank_t rank) {
        ClientRecord &c = table.register_client(proc_of({ns, rank}), 0, 0, nullptr);
        c.state = ClientRecord::State::connected;
        table.job(ns).registered = true;
        return c;
    }
};

const std::vector<std::uint8_t> kLocal{1, 2, 3};
const std::vector<std::uint8_t> kRemote{9, 8};

}  // namespace

TEST_F(ModexTest, RegistersCommitAndGet) {
    EXPECT_NE(requests.find(static_cast<std::uint16_t>(pmixpp::wire::Command::commit)), nullptr);
    EXPECT_NE(requests.find(static_cast<std::uint16_t>(pmixpp::wire::Command::get)), nullptr);
}

TEST_F(ModexTest, GetWaiterIsAnsweredAtTheCommit) {
    ClientRecord &c = client("a", 1);
    Answer a;
    modex.reply_get_local(into(a), {"a", 1}, true, 0);
    EXPECT_EQ(a.count, 0);
    EXPECT_EQ(modex.waiting_on({"a", 1}), 1u);
    modex.record_commit(c, kLocal, kRemote);
    EXPECT_EQ(a.count, 1);
    EXPECT_EQ(a.status, PMIX_SUCCESS);
    ASSERT_EQ(a.records.size(), 1u);
    EXPECT_EQ(a.records[0].blob, kLocal);
    EXPECT_EQ(a.records[0].proc.rank, 1u);
    EXPECT_EQ(modex.waiting_on({"a", 1}), 0u);
    modex.record_commit(c, kLocal, kRemote);  // a second commit answers nobody again
    EXPECT_EQ(a.count, 1);
}

TEST_F(ModexTest, GetWaiterIsAnsweredNotFoundAtEachDeparture) {
    for (Departure why : {Departure::finalized, Departure::lost, Departure::deregistered}) {
        client("a", 1);
        Answer a, other;
        client("b", 0);
        modex.reply_get_local(into(a), {"a", 1}, true, 0);
        modex.reply_get_local(into(other), {"b", 0}, true, 0);
        if (why == Departure::deregistered) {
            table.deregister_client({"a", 1});
        } else {
            EXPECT_TRUE(table.depart({"a", 1}, why));
        }
        EXPECT_EQ(a.count, 1) << to_string(why);
        EXPECT_EQ(a.status, PMIX_ERR_NOT_FOUND) << to_string(why);
        EXPECT_EQ(other.count, 0) << "a waiter on another client stays";
        EXPECT_EQ(modex.waiting_on({"b", 0}), 1u);
        table.deregister_nspace("a");
        table.deregister_nspace("b");
        EXPECT_EQ(other.status, PMIX_ERR_NOT_FOUND);
    }
}

TEST_F(ModexTest, GetOfADepartedClientThatCommittedStillAnswersItsData) {
    ClientRecord &c = client("a", 0);
    modex.record_commit(c, kLocal, kRemote);
    table.depart({"a", 0}, Departure::finalized);
    Answer a;
    modex.reply_get_local(into(a), {"a", 0}, true, 0);
    EXPECT_EQ(a.status, PMIX_SUCCESS);
    ASSERT_EQ(a.records.size(), 1u);
    EXPECT_EQ(a.records[0].blob, kLocal);
}

TEST_F(ModexTest, GetWithoutWaitingOrOfAnUnknownClientIsNotFoundAtOnce) {
    client("a", 0);
    Answer immediate, unknown, gone;
    modex.reply_get_local(into(immediate), {"a", 0}, false, 0);
    modex.reply_get_local(into(unknown), {"zz", 3}, true, 0);
    table.depart({"a", 0}, Departure::lost);
    modex.reply_get_local(into(gone), {"a", 0}, true, 0);
    for (auto *a : {&immediate, &unknown, &gone}) {
        EXPECT_EQ(a->count, 1);
        EXPECT_EQ(a->status, PMIX_ERR_NOT_FOUND);
    }
    EXPECT_EQ(modex.waiting_on({"a", 0}), 0u);
}

TEST_F(ModexTest, DmodexRequestWaitsForTheCommitAndAnswersTheRemoteBlob) {
    ClientRecord &c = client("a", 2);
    DmodexAnswer d;
    const pmix_proc_t p = proc_of({"a", 2});
    modex.dmodex_request(p, &dmodex_cb, &d);
    EXPECT_EQ(d.count, 0);
    modex.record_commit(c, kLocal, kRemote);
    EXPECT_EQ(d.count, 1);
    EXPECT_EQ(d.status, PMIX_SUCCESS);
    ASSERT_EQ(d.records.size(), 1u);
    EXPECT_EQ(d.records[0].blob, kRemote);
}

TEST_F(ModexTest, DmodexRequestIsAnsweredNotFoundAtEachDeparture) {
    for (Departure why : {Departure::finalized, Departure::lost, Departure::deregistered}) {
        client("a", 0);
        DmodexAnswer d;
        modex.dmodex_request(proc_of({"a", 0}), &dmodex_cb, &d);
        if (why == Departure::deregistered) {
            table.deregister_nspace("a");
        } else {
            table.depart({"a", 0}, why);
        }
        EXPECT_EQ(d.count, 1) << to_string(why);
        EXPECT_EQ(d.status, PMIX_ERR_NOT_FOUND) << to_string(why);
        table.deregister_nspace("a");
    }
}

TEST_F(ModexTest, DmodexRequestForAJobNotRegisteredYetWaitsForIt) {
    DmodexAnswer early, never;
    modex.dmodex_request(proc_of({"late", 0}), &dmodex_cb, &early);
    modex.dmodex_request(proc_of({"never", 0}), &dmodex_cb, &never);
    EXPECT_EQ(early.count, 0);
    ClientRecord &c = client("late", 0);
    modex.record_commit(c, kLocal, kRemote);
    modex.job_registered("late");
    EXPECT_EQ(early.count, 1);
    EXPECT_EQ(early.status, PMIX_SUCCESS);
    EXPECT_EQ(never.count, 0);
    modex.clear();  // server stop
    EXPECT_EQ(never.count, 1);
    EXPECT_EQ(never.status, PMIX_ERR_NOT_FOUND);
}

TEST_F(ModexTest, RemoteBlobsAreForgottenByProcByJobAndAtDeregistration) {
    modex.keep_remote({"r", 0}, kLocal);
    modex.keep_remote({"r", 1}, kLocal);
    modex.keep_remote({"s", 0}, kRemote);
    modex.forget_remote({"r", 1});
    EXPECT_EQ(modex.remote_blobs().size(), 2u);
    modex.forget_remote({"r", PMIX_RANK_WILDCARD});
    EXPECT_EQ(modex.remote_blobs().size(), 1u);
    table.deregister_nspace("s");
    EXPECT_TRUE(modex.remote_blobs().empty());
}

// perf (issue 19 item 7): a receiver gets what a peer committed since the
// commit it holds: nothing, the later commits' blobs, or the whole when those
// add up to more.
TEST_F(ModexTest, AppendChangesSendsWhatTheReceiverLacks) {
    ClientRecord &c = client("d", 0);
    const std::vector<std::uint8_t> first(100, 1), second{2, 2}, third{3};
    modex.record_commit(c, first, {});
    modex.record_commit(c, second, {});
    modex.record_commit(c, third, {});
    EXPECT_EQ(c.commit_seq, 3u);
    auto records_for = [&](std::uint64_t seen) {
        std::vector<std::uint8_t> stream;
        Modex::append_changes(stream, c, seen);
        std::vector<pmixpp::wire::ModexRecord> out;
        EXPECT_TRUE(pmixpp::wire::parse_records(stream, out));
        return out;
    };
    EXPECT_TRUE(records_for(3).empty());  // holds it all
    auto r = records_for(2);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].blob, third);
    r = records_for(1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].blob, (std::vector<std::uint8_t>{2, 2, 3}));
    r = records_for(0);  // never received: the whole, in commit order
    ASSERT_EQ(r.size(), 1u);
    std::vector<std::uint8_t> whole = first;
    whole.insert(whole.end(), {2, 2, 3});
    EXPECT_EQ(r[0].blob, whole);
    EXPECT_EQ(c.local_blob, whole);
}

// perf (issue 17 item 1): a `whole` commit (everything the client committed,
// wire kCommitWhole) replaces the blobs the server kept instead of being
// appended, and a receiver behind it gets it whole.
TEST_F(ModexTest, WholeCommitReplacesTheKeptBlobs) {
    ClientRecord &c = client("w", 0);
    const std::vector<std::uint8_t> first(100, 1), second(100, 2), whole(150, 3), remote{7};
    modex.record_commit(c, first, remote);
    modex.record_commit(c, second, remote);
    EXPECT_EQ(c.local_blob.size(), 200u);
    EXPECT_EQ(c.remote_blob.size(), 2u);
    modex.record_commit(c, whole, remote, true);
    EXPECT_EQ(c.commit_seq, 3u);
    EXPECT_EQ(c.local_blob, whole);
    EXPECT_EQ(c.remote_blob, remote);
    EXPECT_TRUE(c.local_deltas.empty());
    for (std::uint64_t seen : {0u, 1u, 2u}) {
        std::vector<std::uint8_t> stream;
        Modex::append_changes(stream, c, seen);
        std::vector<pmixpp::wire::ModexRecord> out;
        ASSERT_TRUE(pmixpp::wire::parse_records(stream, out));
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].blob, whole);
        EXPECT_TRUE(out[0].whole);
    }
    // Later deltas are appended to the whole again.
    modex.record_commit(c, {4}, {});
    std::vector<std::uint8_t> stream;
    Modex::append_changes(stream, c, 3);
    std::vector<pmixpp::wire::ModexRecord> out;
    ASSERT_TRUE(pmixpp::wire::parse_records(stream, out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].blob, (std::vector<std::uint8_t>{4}));
    EXPECT_FALSE(out[0].whole);
}

// perf (issue 17 item 1): a commit is kept as its blobs and handed to the
// datastore's readers undecoded (Modex::pending); a `whole` one drops what is
// pending for that client, a deregistered job's go. Nothing here reads the
// datastore: a decode would need its module, which this one does not have.
TEST_F(ModexTest, CommitsArePendingNotDecoded) {
    auto store = std::make_shared<pmixpp::gds_base::Datastore>();
    modex.set_store(store);
    ClientRecord &c = client("p", 1);
    ClientRecord &d = client("p", 2);
    for (int i = 0; i < 5; ++i) modex.commit(c, kLocal, kRemote, {}, false, false);
    modex.commit(d, kLocal, {}, {}, false, false);
    EXPECT_EQ(modex.pending()->pending(), 11u);  // c: 5 x (LOCAL, REMOTE); d: its LOCAL
    EXPECT_EQ(modex.pending()->decoded(), 0u);
    EXPECT_EQ(c.commits_received, 5u);
    EXPECT_EQ(c.local_blob.size(), 5 * kLocal.size());
    modex.commit(c, kLocal, kRemote, {}, true, false);
    EXPECT_EQ(modex.pending()->pending(), 3u);  // c's whole (2), d's (1)
    EXPECT_EQ(c.local_blob, kLocal);
    table.deregister_nspace("p");
    EXPECT_EQ(modex.pending()->pending(), 0u);
    EXPECT_EQ(modex.pending()->decoded(), 0u);
    modex.set_store(nullptr);
}

// perf (issue 17 item 1): GLOBAL values sent once (wire kCommitGlobal) are
// kept after each audience's own: LOCAL + GLOBAL for Gets on this node,
// REMOTE + GLOBAL for other nodes; pending once each.
TEST_F(ModexTest, GlobalValuesSentOnceJoinBothParts) {
    auto store = std::make_shared<pmixpp::gds_base::Datastore>();
    modex.set_store(store);
    ClientRecord &c = client("g", 0);
    const std::vector<std::uint8_t> global{5, 5, 5};
    modex.commit(c, kLocal, kRemote, global, false, false);
    EXPECT_EQ(c.local_blob, (std::vector<std::uint8_t>{1, 2, 3, 5, 5, 5}));
    EXPECT_EQ(c.remote_blob, (std::vector<std::uint8_t>{9, 8, 5, 5, 5}));
    EXPECT_EQ(modex.pending()->pending(), 3u);
    modex.commit(c, {}, {}, global, false, false);
    EXPECT_EQ(c.local_blob, (std::vector<std::uint8_t>{1, 2, 3, 5, 5, 5, 5, 5, 5}));
    EXPECT_EQ(c.remote_blob, (std::vector<std::uint8_t>{9, 8, 5, 5, 5, 5, 5, 5}));
    DmodexAnswer a;
    modex.dmodex_request(c.proc, dmodex_cb, &a);
    ASSERT_EQ(a.records.size(), 1u);
    EXPECT_EQ(a.records[0].blob, c.remote_blob);
    modex.set_store(nullptr);
}

// perf (issue 17 item 1): a `whole` commit that stands for commits the
// client held back (wire/commit_flags.hpp, kCommitCount) numbers them all,
// as the fence segment counts them, and replaces what was kept; a receiver
// that held the first one gets the whole.
TEST_F(ModexTest, AWholeCommitStandingForHeldOnesCountsThemAll) {
    ClientRecord &c = client("h", 0);
    const std::vector<std::uint8_t> first{1, 1}, last{5, 5, 5};
    modex.record_commit(c, first, {});
    modex.record_commit(c, last, {}, /*whole=*/true, /*count=*/4);
    EXPECT_EQ(c.commit_seq, 5u);
    EXPECT_EQ(c.commits_received, 5u);
    EXPECT_EQ(c.local_blob, last);
    std::vector<std::uint8_t> stream;
    Modex::append_changes(stream, c, 1);
    std::vector<pmixpp::wire::ModexRecord> out;
    ASSERT_TRUE(pmixpp::wire::parse_records(stream, out));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].blob, last);
    EXPECT_TRUE(out[0].whole);
}
