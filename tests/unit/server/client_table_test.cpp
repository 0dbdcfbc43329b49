// Unit tests of the server's ClientTable (framework/server/client_table.hpp):
// registration, and the one departure path told exactly once to every
// listener for every kind of departure. No sockets, no progress loop.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "server/client_table.hpp"

using namespace pmixpp::server;

namespace {

pmix_proc_t proc(const char *ns, pmix_rank_t rank) {
    return proc_of({ns, rank});
}

// Records what it hears: "ns:rank/kind" or "job:ns".
struct Recorder : DepartureListener {
    std::vector<std::string> heard;
    void client_departed(const ProcKey &client, Departure why) override {
        heard.push_back(describe(client) + "/" + to_string(why));
    }
    void job_deregistered(const std::string &nspace) override { heard.push_back("job:" + nspace); }
};

}  // namespace

TEST(ClientTable, RegisterClientCreatesTheJobWithASecret) {
    ClientTable t;
    int object = 0;
    ClientRecord &c = t.register_client(proc("a", 1), 1000, 100, &object);
    EXPECT_EQ(c.uid, 1000u);
    EXPECT_EQ(c.gid, 100u);
    EXPECT_EQ(c.server_object, &object);
    EXPECT_EQ(c.state, ClientRecord::State::registered);
    EXPECT_EQ(t.find_client({"a", 1}), &c);
    EXPECT_EQ(t.find_client({"a", 0}), nullptr);
    EXPECT_EQ(t.find_client({"b", 1}), nullptr);
    ASSERT_NE(t.find_job("a"), nullptr);
    EXPECT_EQ(t.find_job("a")->secret.size(), 32u);
    EXPECT_FALSE(t.find_job("a")->registered);  // only register_nspace sets it
    const std::string secret = t.find_job("a")->secret;
    t.register_client(proc("a", 2), 1000, 100, nullptr);
    EXPECT_EQ(t.find_job("a")->secret, secret);  // one secret per job
    EXPECT_NE(t.job("b").secret, secret);
}

TEST(ClientTable, EachDepartureIsToldOnceToEveryListenerInOrder) {
    for (Departure why : {Departure::finalized, Departure::lost, Departure::deregistered}) {
        ClientTable t;
        Recorder first, second;
        t.subscribe(&first);
        t.subscribe(&second);
        t.register_client(proc("a", 0), 0, 0, nullptr).state = ClientRecord::State::connected;
        EXPECT_TRUE(t.depart({"a", 0}, why));
        EXPECT_FALSE(t.depart({"a", 0}, why));  // exactly once
        EXPECT_FALSE(t.depart({"a", 0}, Departure::lost));
        EXPECT_FALSE(t.depart({"a", 7}, why));  // no such client: nobody told
        const std::string want = std::string("a:0/") + to_string(why);
        EXPECT_EQ(first.heard, std::vector<std::string>{want});
        EXPECT_EQ(second.heard, std::vector<std::string>{want});
        const ClientRecord *c = t.find_client({"a", 0});
        ASSERT_NE(c, nullptr);  // depart() marks, it does not remove
        EXPECT_TRUE(c->departed);
        EXPECT_TRUE(c->gone());
        EXPECT_EQ(c->state, why == Departure::lost ? ClientRecord::State::lost
                                                   : ClientRecord::State::finalized);
    }
}

TEST(ClientTable, ANewConnectionLifeDepartsAgain) {
    ClientTable t;
    Recorder r;
    t.subscribe(&r);
    ClientRecord &c = t.register_client(proc("a", 0), 0, 0, nullptr);
    EXPECT_TRUE(t.depart({"a", 0}, Departure::finalized));
    c.departed = false;  // what a new handshake does (PMIx_Init after PMIx_Finalize)
    c.state = ClientRecord::State::connected;
    EXPECT_TRUE(t.depart({"a", 0}, Departure::lost));
    EXPECT_EQ(r.heard, (std::vector<std::string>{"a:0/finalized", "a:0/lost"}));
}

TEST(ClientTable, DeregisterClientDepartsThenRemovesTheRecord) {
    ClientTable t;
    Recorder r;
    t.subscribe(&r);
    t.register_client(proc("a", 0), 0, 0, nullptr);
    t.register_client(proc("a", 1), 0, 0, nullptr);
    t.deregister_client({"a", 1});
    EXPECT_EQ(r.heard, std::vector<std::string>{"a:1/deregistered"});
    EXPECT_EQ(t.find_client({"a", 1}), nullptr);
    EXPECT_NE(t.find_client({"a", 0}), nullptr);
    t.deregister_client({"a", 1});  // again: nothing
    EXPECT_EQ(r.heard.size(), 1u);
}

TEST(ClientTable, AClientThatFinalizedIsNotToldAgainWhenDeregistered) {
    ClientTable t;
    Recorder r;
    t.subscribe(&r);
    t.register_client(proc("a", 0), 0, 0, nullptr);
    t.depart({"a", 0}, Departure::finalized);
    t.deregister_client({"a", 0});
    EXPECT_EQ(r.heard, std::vector<std::string>{"a:0/finalized"});
    EXPECT_EQ(t.find_client({"a", 0}), nullptr);
}

TEST(ClientTable, DeregisterNspaceDepartsEachClientThenTellsTheJob) {
    ClientTable t;
    Recorder r;
    t.subscribe(&r);
    for (pmix_rank_t i = 0; i < 3; ++i) t.register_client(proc("a", i), 0, 0, nullptr);
    t.register_client(proc("b", 0), 0, 0, nullptr);
    t.depart({"a", 1}, Departure::lost);
    t.deregister_nspace("a");
    EXPECT_EQ(r.heard, (std::vector<std::string>{"a:1/lost", "a:0/deregistered", "a:2/deregistered",
                                                 "job:a"}));
    EXPECT_EQ(t.find_job("a"), nullptr);
    EXPECT_NE(t.find_client({"b", 0}), nullptr);
    t.deregister_nspace("c");  // a job without clients here (remote): still told
    EXPECT_EQ(r.heard.back(), "job:c");
}

TEST(ClientTable, AListenerMayRemoveTheRecordItIsToldAbout) {
    // As the tools service does with a tool's record.
    struct Remover : DepartureListener {
        ClientTable *t = nullptr;
        void client_departed(const ProcKey &client, Departure) override {
            t->erase_client(client);
            t->erase_job(client.first);
        }
    };
    ClientTable t;
    Remover remover;
    remover.t = &t;
    Recorder after;
    t.subscribe(&remover);
    t.subscribe(&after);
    t.register_client(proc("tool", 0), 0, 0, nullptr);
    EXPECT_TRUE(t.depart({"tool", 0}, Departure::lost));
    EXPECT_EQ(after.heard, std::vector<std::string>{"tool:0/lost"});
    EXPECT_EQ(t.find_job("tool"), nullptr);
}

TEST(ClientTable, UnsubscribedListenersHearNothing) {
    ClientTable t;
    Recorder r;
    t.subscribe(&r);
    t.unsubscribe(&r);
    t.register_client(proc("a", 0), 0, 0, nullptr);
    t.depart({"a", 0}, Departure::lost);
    EXPECT_TRUE(r.heard.empty());
}
