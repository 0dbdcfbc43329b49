// Unit tests of the Queries service (framework/server/queries.hpp) without
// sockets: what the library answers from the client table, what a service's
// hook answers, what goes to the host's query upcall (only the keys nobody
// here knows, with the query's qualifiers), the host-first keys (proc tables)
// with the library's table as the fallback, and the statuses (SUCCESS,
// PARTIAL_SUCCESS, NOT_FOUND at once). The upcall's completion is
// thread-shifted, so requests run on a real progress engine; every wait has a
// bound that fails the test.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/progress.hpp"
#include "server/client_table.hpp"
#include "server/queries.hpp"
#include "server/requests.hpp"
#include "server/upcall_results.hpp"
#include "wire/message.hpp"

using namespace pmixpp::server;
using pmixpp::runtime::Completion;
using pmixpp::runtime::ProgressEngine;

namespace {

constexpr std::chrono::seconds kBound{20};

// A decoded answer: the status and, per query, its result entries.
struct Answer {
    pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;
    std::vector<pmixpp::wire::InfoArray> results;
    const pmix_info_t *find(std::size_t q, const char *key) const {
        for (const auto &i : results.at(q).span())
            if (PMIX_CHECK_KEY(&i, key)) return &i;
        return nullptr;
    }
};

struct Waiter {
    Completion<Answer> done;
    int count = 0;  // progress thread
    PendingReply reply() {
        return PendingReply::to([this](std::span<const std::uint8_t> body) {
            ++count;
            Answer a;
            pmixpp::wire::BodyReader r(body);
            std::int32_t st = 0;
            r.i32(st);
            a.status = st;
            std::uint32_t n = 0;
            if (r.u32(n)) {
                for (std::uint32_t k = 0; k < n; ++k) {
                    a.results.emplace_back();
                    r.infos(a.results.back());
                }
            }
            done.complete(std::move(a));
        });
    }
    Answer wait() {
        EXPECT_TRUE(done.wait(kBound)) << "no answer within the bound";
        return std::move(done.value());
    }
};

// The fake host's query upcall: what it saw, what it answers.
struct FakeHost {
    int calls = 0;
    std::vector<std::string> keys;             // every key of every query handed up
    std::vector<std::string> qualifiers;       // the qualifier keys of the first query
    std::map<std::string, std::string> known;  // key -> STRING answer
    bool from_thread = true;
};
FakeHost g_host;

pmix_status_t host_query(pmix_proc_t *, pmix_query_t *queries, size_t nqueries,
                         pmix_info_cbfunc_t cb, void *cbdata) {
    ++g_host.calls;
    g_host.keys.clear();
    g_host.qualifiers.clear();
    std::vector<std::string> answer_keys;
    for (size_t q = 0; q < nqueries; ++q) {
        for (char **k = queries[q].keys; k != nullptr && *k != nullptr; ++k) {
            g_host.keys.emplace_back(*k);
            if (g_host.known.count(*k) != 0) answer_keys.emplace_back(*k);
        }
        for (size_t i = 0; q == 0 && i < queries[q].nqual; ++i)
            g_host.qualifiers.emplace_back(queries[q].qualifiers[i].key);
    }
    if (answer_keys.empty()) return PMIX_ERR_NOT_FOUND;
    auto complete = [cb, cbdata, answer_keys] {
        std::vector<pmix_info_t> out(answer_keys.size());
        for (std::size_t i = 0; i < out.size(); ++i) {
            std::memset(&out[i], 0, sizeof out[i]);
            PMIx_Info_load(&out[i], answer_keys[i].c_str(), g_host.known[answer_keys[i]].c_str(),
                           PMIX_STRING);
        }
        cb(PMIX_SUCCESS, out.data(), out.size(), cbdata, nullptr, nullptr);
        for (auto &i : out) PMIx_Value_destruct(&i.value);
    };
    if (g_host.from_thread) {
        std::thread(complete).detach();
    } else {
        complete();
    }
    return PMIX_SUCCESS;
}

struct QueriesTest : ::testing::Test {
    ClientTable table;
    HostUpcalls host;
    RequestTable requests;
    int hook_calls = 0;
    Queries queries{
        table, host, requests,
        QueryHooks{[this](std::span<const pmix_info_t>, const std::string &key, HostInfo &out) {
                       ++hook_calls;
                       if (key != "svc.key") return false;
                       pmix_info_t i{};
                       std::uint32_t seven = 7;
                       PMIx_Info_load(&i, "svc.key", &seven, PMIX_UINT32);
                       out.adopt(i);
                       return true;
                   },
                   nullptr}};
    pmix_proc_t caller{};

    void SetUp() override {
        g_host = FakeHost{};
        ASSERT_TRUE(ProgressEngine::instance().acquire().ok());
        JobRecord &job = table.job("app");
        job.registered = true;
        job.job_size = 2;
        table.register_client(proc_of({"app", 0}), 1000, 1000, nullptr).pid = 4711;
        table.register_client(proc_of({"app", 1}), 1000, 1000, nullptr).pid = 4712;
        table.find_client({"app", 0})->state = ClientRecord::State::connected;
        caller = proc_of({"app", 0});
    }
    void TearDown() override { ProgressEngine::instance().release(); }
    void with_host() {
        pmix_server_module_t m{};
        m.query = &host_query;
        host.set(&m);
    }
    // One query of `keys` with the qualifiers `quals` (key -> STRING).
    Answer ask(std::vector<std::string> keys,
               std::vector<std::pair<const char *, std::string>> quals = {}) {
        Queries::Query q;
        q.keys = std::move(keys);
        for (const auto &[k, v] : quals) {
            pmix_info_t i{};
            PMIx_Info_load(&i, k, v.c_str(), PMIX_STRING);
            q.qualifiers.adopt(i);
        }
        std::vector<Queries::Query> all;
        all.push_back(std::move(q));
        Waiter w;
        EXPECT_TRUE(ProgressEngine::instance().run_sync(
            [&] { queries.request(w.reply(), caller, std::move(all)); }));
        Answer a = w.wait();
        bool once = false;
        EXPECT_TRUE(ProgressEngine::instance().run_sync([&] { once = w.count == 1; }));
        EXPECT_TRUE(once) << "answered more than once";
        return a;
    }
};

TEST_F(QueriesTest, LibraryKeysAreAnsweredFromTheClientTable) {
    Answer a = ask({PMIX_QUERY_NAMESPACES, PMIX_JOB_SIZE});
    ASSERT_EQ(a.status, PMIX_SUCCESS);
    ASSERT_EQ(a.results.size(), 1u);
    const pmix_info_t *ns = a.find(0, PMIX_QUERY_NAMESPACES);
    ASSERT_NE(ns, nullptr);
    EXPECT_STREQ(ns->value.data.string, "app");
    const pmix_info_t *size = a.find(0, PMIX_JOB_SIZE);
    ASSERT_NE(size, nullptr);
    EXPECT_EQ(size->value.data.uint32, 2u);
    EXPECT_EQ(g_host.calls, 0);
}

TEST_F(QueriesTest, UnknownKeysWithoutAHostAreNotFoundAtOnce) {
    Answer a = ask({"nobody.knows"});
    EXPECT_EQ(a.status, PMIX_ERR_NOT_FOUND);
    EXPECT_TRUE(a.results.empty());
}

TEST_F(QueriesTest, SomeKeysFoundIsPartialSuccess) {
    Answer a = ask({PMIX_QUERY_NAMESPACES, "nobody.knows"});
    ASSERT_EQ(a.status, PMIX_ERR_PARTIAL_SUCCESS);
    EXPECT_NE(a.find(0, PMIX_QUERY_NAMESPACES), nullptr);
    EXPECT_EQ(a.find(0, "nobody.knows"), nullptr);
}

TEST_F(QueriesTest, AServiceHookAnswersItsOwnKeys) {
    Answer a = ask({"svc.key"});
    ASSERT_EQ(a.status, PMIX_SUCCESS);
    const pmix_info_t *v = a.find(0, "svc.key");
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->value.data.uint32, 7u);
    EXPECT_GE(hook_calls, 1);
}

TEST_F(QueriesTest, OnlyTheUnresolvedKeysGoToTheHostWithTheQualifiers) {
    with_host();
    g_host.known["host.key"] = "from the host";
    Answer a = ask({PMIX_QUERY_NAMESPACES, "host.key", "nobody.knows"}, {{PMIX_NSPACE, "app"}});
    ASSERT_EQ(a.status, PMIX_ERR_PARTIAL_SUCCESS);
    EXPECT_EQ(g_host.calls, 1);
    EXPECT_EQ(g_host.keys, (std::vector<std::string>{"host.key", "nobody.knows"}));
    EXPECT_EQ(g_host.qualifiers, (std::vector<std::string>{PMIX_NSPACE}));
    const pmix_info_t *v = a.find(0, "host.key");
    ASSERT_NE(v, nullptr);
    EXPECT_STREQ(v->value.data.string, "from the host");
    EXPECT_NE(a.find(0, PMIX_QUERY_NAMESPACES), nullptr);
}

TEST_F(QueriesTest, AnInlineHostCompletionIsAnsweredOnce) {
    with_host();
    g_host.from_thread = false;
    g_host.known["host.key"] = "inline";
    Answer a = ask({"host.key"});
    ASSERT_EQ(a.status, PMIX_SUCCESS);
    EXPECT_NE(a.find(0, "host.key"), nullptr);
}

TEST_F(QueriesTest, ProcTablesAskTheHostFirstThenTheLibrarysTable) {
    with_host();  // it knows no proc table: the library's answers
    Answer a = ask({PMIX_QUERY_PROC_TABLE}, {{PMIX_NSPACE, "app"}});
    ASSERT_EQ(a.status, PMIX_SUCCESS);
    EXPECT_EQ(g_host.keys, (std::vector<std::string>{PMIX_QUERY_PROC_TABLE}));
    const pmix_info_t *t = a.find(0, PMIX_QUERY_PROC_TABLE);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->value.type, PMIX_DATA_ARRAY);
    ASSERT_EQ(t->value.data.darray->size, 2u);
    const auto *pi = static_cast<const pmix_proc_info_t *>(t->value.data.darray->array);
    EXPECT_EQ(pi[0].pid, 4711);
    EXPECT_EQ(pi[0].state, PMIX_PROC_STATE_CONNECTED);
    EXPECT_EQ(pi[1].pid, 4712);
    EXPECT_EQ(pi[1].state, PMIX_PROC_STATE_LAUNCH_UNDERWAY);

    g_host.known[PMIX_QUERY_PROC_TABLE] = "the host's table";  // now the host answers
    a = ask({PMIX_QUERY_PROC_TABLE}, {{PMIX_NSPACE, "app"}});
    ASSERT_EQ(a.status, PMIX_SUCCESS);
    t = a.find(0, PMIX_QUERY_PROC_TABLE);
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->value.type, PMIX_STRING);
    EXPECT_STREQ(t->value.data.string, "the host's table");
}

TEST_F(QueriesTest, AnUnknownNamespaceHasNoJobKeys) {
    Answer a = ask({PMIX_JOB_SIZE, PMIX_QUERY_LOCAL_PROC_TABLE}, {{PMIX_NSPACE, "other"}});
    EXPECT_EQ(a.status, PMIX_ERR_NOT_FOUND);
}

}  // namespace
