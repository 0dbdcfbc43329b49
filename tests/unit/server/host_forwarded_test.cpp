// Unit tests of the host-forwarded services (framework/server/spawn.hpp,
// publish.hpp, local_support.hpp) without sockets: a request's answer for
// each of the host's outcomes (no upcall, an error at once, a completion
// later or inline), what the host is handed, and a job's set-up info applied
// to its children and forgotten at its deregistration. The upcalls'
// completions are thread-shifted, so the requests run on a real progress
// engine; every wait has a bound that fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "runtime/progress.hpp"
#include "server/client_table.hpp"
#include "server/local_support.hpp"
#include "server/publish.hpp"
#include "server/requests.hpp"
#include "server/spawn.hpp"
#include "wire/codec.hpp"
#include "wire/message.hpp"

using namespace pmixpp::server;
using pmixpp::runtime::Completion;
using pmixpp::runtime::ProgressEngine;

namespace {

constexpr std::chrono::seconds kBound{20};

// What a reply body said: the status and the rest of the body.
struct Reply {
    pmix_status_t status = PMIX_ERR_NOT_AVAILABLE;
    std::vector<std::uint8_t> body;
};

// The answer to one request, waited for on the test thread.
struct Answer {
    Completion<Reply> done;
    int count = 0;  // progress thread

    PendingReply reply() {
        return PendingReply::to([this](std::span<const std::uint8_t> body) {
            ++count;
            Reply r;
            pmixpp::wire::BodyReader reader(body);
            std::int32_t st = 0;
            reader.i32(st);
            r.status = st;
            r.body.assign(body.begin(), body.end());
            done.complete(std::move(r));
        });
    }
    Reply wait() {
        EXPECT_TRUE(done.wait(kBound)) << "no answer within the bound";
        return done.value();
    }
};

// What the fake host did and will do. One test at a time uses it.
struct FakeHost {
    pmix_status_t rc = PMIX_SUCCESS;          // the upcall's return code
    pmix_status_t status = PMIX_SUCCESS;      // the completion's status
    bool inline_completion = false;           // complete before returning
    std::string spawned_nspace = "child";     // what the spawn completion names
    std::map<std::string, std::string> data;  // what lookup finds
    // Seen by the upcalls.
    pmix_proc_t caller{};
    std::vector<std::string> keys;               // lookup/unpublish keys ("<null>": NULL)
    std::map<std::string, std::uint32_t> uints;  // uint32 infos handed up
    std::vector<std::string> info_keys;
    std::size_t napps = 0;
    int calls = 0;
};
FakeHost g_host;

void record(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo) {
    ++g_host.calls;
    g_host.caller = *proc;
    g_host.info_keys.clear();
    g_host.uints.clear();
    for (size_t i = 0; i < ninfo; ++i) {
        g_host.info_keys.emplace_back(info[i].key);
        if (info[i].value.type == PMIX_UINT32)
            g_host.uints[info[i].key] = info[i].value.data.uint32;
    }
}

void record_keys(char **keys) {
    g_host.keys.clear();
    if (keys == nullptr) {
        g_host.keys.emplace_back("<null>");
        return;
    }
    for (char **k = keys; *k != nullptr; ++k) g_host.keys.emplace_back(*k);
}

// Completes `fn` inline or from another thread, as the host may.
template <class Fn>
pmix_status_t finish(Fn fn) {
    if (g_host.rc != PMIX_SUCCESS) return g_host.rc;
    if (g_host.inline_completion) {
        fn();
    } else {
        std::thread(fn).detach();
    }
    return PMIX_SUCCESS;
}

pmix_status_t host_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                           pmix_op_cbfunc_t cb, void *cbdata) {
    record(proc, info, ninfo);
    return finish([cb, cbdata] { cb(g_host.status, cbdata); });
}

pmix_status_t host_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                             size_t ninfo, pmix_op_cbfunc_t cb, void *cbdata) {
    record(proc, info, ninfo);
    record_keys(keys);
    return finish([cb, cbdata] { cb(g_host.status, cbdata); });
}

pmix_status_t host_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                          size_t ninfo, pmix_lookup_cbfunc_t cb, void *cbdata) {
    record(proc, info, ninfo);
    record_keys(keys);
    std::vector<std::string> wanted = g_host.keys;
    return finish([cb, cbdata, wanted] {
        std::vector<pmix_pdata_t> found;
        for (const auto &k : wanted) {
            auto it = g_host.data.find(k);
            if (it == g_host.data.end()) continue;
            found.emplace_back();
            std::memset(&found.back(), 0, sizeof(pmix_pdata_t));
            PMIX_LOAD_KEY(found.back().key, k.c_str());
            PMIx_Value_load(&found.back().value, it->second.c_str(), PMIX_STRING);
        }
        cb(g_host.status, found.empty() ? nullptr : found.data(), found.size(), cbdata);
        for (auto &p : found) PMIx_Value_destruct(&p.value);
    });
}

pmix_status_t host_spawn(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                         const pmix_app_t[], size_t napps, pmix_spawn_cbfunc_t cb, void *cbdata) {
    record(proc, info, ninfo);
    g_host.napps = napps;
    return finish([cb, cbdata] {
        pmix_nspace_t ns{};
        PMIX_LOAD_NSPACE(ns, g_host.spawned_nspace.c_str());
        cb(g_host.status, g_host.spawned_nspace.empty() ? nullptr : ns, cbdata);
    });
}

pmix_server_module_t module_with_upcalls() {
    pmix_server_module_t m{};
    m.publish = &host_publish;
    m.lookup = &host_lookup;
    m.unpublish = &host_unpublish;
    m.spawn = &host_spawn;
    return m;
}

// A running progress engine, and a client record of uid/gid 4242/77.
struct ServiceTest : ::testing::Test {
    ClientTable table;
    HostUpcalls host;
    RequestTable requests;
    ClientRecord *client = nullptr;

    void SetUp() override {
        g_host = FakeHost{};
        ASSERT_TRUE(ProgressEngine::instance().acquire().ok());
        client = &table.register_client(proc_of({"parent", 3}), 4242, 77, nullptr);
        client->state = ClientRecord::State::connected;
    }
    void TearDown() override { ProgressEngine::instance().release(); }
    void with_upcalls() {
        const pmix_server_module_t m = module_with_upcalls();
        host.set(&m);
    }
    // Runs `work` on the progress thread.
    template <class Fn>
    void run(Fn work) {
        ASSERT_TRUE(ProgressEngine::instance().run_sync(work));
    }
};

// ---------------------------------------------------------------------------------------------
// Publishing

struct PublishingTest : ServiceTest {
    Publishing publishing{host, requests};
};

pmixpp::wire::InfoArray infos_with_identity() {
    std::vector<pmix_info_t> in(3);
    std::uint32_t zero = 0, one = 1;
    PMIx_Info_load(&in[0], PMIX_USERID, &zero, PMIX_UINT32);
    PMIx_Info_load(&in[1], PMIX_GRPID, &zero, PMIX_UINT32);
    PMIx_Info_load(&in[2], "app.key", &one, PMIX_UINT32);
    auto out = pmixpp::wire::InfoArray::copy_of(in.data(), in.size());
    for (auto &i : in) PMIx_Value_destruct(&i.value);
    return out;
}

TEST_F(PublishingTest, RegistersPublishLookupAndUnpublish) {
    for (auto c : {pmixpp::wire::Command::publish, pmixpp::wire::Command::lookup,
                   pmixpp::wire::Command::unpublish}) {
        EXPECT_NE(requests.find(static_cast<std::uint16_t>(c)), nullptr);
    }
}

TEST_F(PublishingTest, WithoutTheHostsUpcallsEachIsNotSupported) {
    Answer p, l, u;
    run([&] {
        publishing.publish(p.reply(), *client, {});
        publishing.lookup(l.reply(), *client, {"k"}, {});
        publishing.unpublish(u.reply(), *client, {}, {});
    });
    EXPECT_EQ(p.wait().status, PMIX_ERR_NOT_SUPPORTED);
    EXPECT_EQ(l.wait().status, PMIX_ERR_NOT_SUPPORTED);
    EXPECT_EQ(u.wait().status, PMIX_ERR_NOT_SUPPORTED);
}

TEST_F(PublishingTest, PublishHandsTheHostTheClientsRegisteredUidNotTheOneItSent) {
    with_upcalls();
    const auto info = infos_with_identity();
    for (bool inline_completion : {false, true}) {
        g_host.inline_completion = inline_completion;
        Answer a;
        run([&] { publishing.publish(a.reply(), *client, info.span()); });
        EXPECT_EQ(a.wait().status, PMIX_SUCCESS);
        EXPECT_STREQ(g_host.caller.nspace, "parent");
        EXPECT_EQ(g_host.caller.rank, 3u);
        EXPECT_EQ(g_host.uints[PMIX_USERID], 4242u);
        EXPECT_EQ(g_host.uints["app.key"], 1u);
        // One euid, the registered one; no grpid (publish.cpp says why).
        EXPECT_EQ(std::count(g_host.info_keys.begin(), g_host.info_keys.end(), PMIX_USERID), 1);
        EXPECT_EQ(std::count(g_host.info_keys.begin(), g_host.info_keys.end(), PMIX_GRPID), 0);
    }
}

TEST_F(PublishingTest, TheHostsErrorIsTheAnswerWhetherAtOnceOrLater) {
    with_upcalls();
    g_host.rc = PMIX_ERR_NOT_AVAILABLE;
    Answer now;
    run([&] { publishing.publish(now.reply(), *client, {}); });
    EXPECT_EQ(now.wait().status, PMIX_ERR_NOT_AVAILABLE);
    g_host.rc = PMIX_SUCCESS;
    g_host.status = PMIX_ERR_DUPLICATE_KEY;
    Answer later;
    run([&] { publishing.publish(later.reply(), *client, {}); });
    EXPECT_EQ(later.wait().status, PMIX_ERR_DUPLICATE_KEY);
}

TEST_F(PublishingTest, LookupAnswersWhatTheHostFound) {
    with_upcalls();
    g_host.data = {{"a", "1"}, {"b", "2"}};
    Answer a;
    run([&] { publishing.lookup(a.reply(), *client, {"a", "b"}, {}); });
    const Reply r = a.wait();
    EXPECT_EQ(r.status, PMIX_SUCCESS);
    EXPECT_EQ(g_host.keys, (std::vector<std::string>{"a", "b"}));
    pmixpp::wire::BodyReader reader(r.body);
    std::int32_t st = 0;
    std::vector<pmix_proc_t> procs;
    pmixpp::wire::InfoArray data;
    reader.i32(st);
    reader.procs(procs);
    reader.infos(data);
    ASSERT_TRUE(reader.finished());
    ASSERT_EQ(data.size(), 2u);
    EXPECT_STREQ(data.data()[0].key, "a");
    EXPECT_STREQ(data.data()[0].value.data.string, "1");
}

TEST_F(PublishingTest, LookupOfSomeKeysOnlyIsPartialSuccessAndOfNoneNotFound) {
    with_upcalls();
    g_host.data = {{"a", "1"}};
    Answer some, none;
    run([&] {
        publishing.lookup(some.reply(), *client, {"a", "missing"}, {});
        publishing.lookup(none.reply(), *client, {"missing"}, {});
    });
    EXPECT_EQ(some.wait().status, PMIX_ERR_PARTIAL_SUCCESS);
    EXPECT_EQ(none.wait().status, PMIX_ERR_NOT_FOUND);
}

TEST_F(PublishingTest, UnpublishWithoutKeysHandsTheHostNull) {
    with_upcalls();
    Answer all, one;
    run([&] { publishing.unpublish(all.reply(), *client, {}, {}); });
    EXPECT_EQ(all.wait().status, PMIX_SUCCESS);
    EXPECT_EQ(g_host.keys, std::vector<std::string>{"<null>"});
    run([&] { publishing.unpublish(one.reply(), *client, {"k"}, {}); });
    EXPECT_EQ(one.wait().status, PMIX_SUCCESS);
    EXPECT_EQ(g_host.keys, std::vector<std::string>{"k"});
}

// ---------------------------------------------------------------------------------------------
// Spawn

struct SpawnTest : ServiceTest {
    std::vector<std::pair<ProcKey, std::string>> spawned;  // the hook's calls
    Spawn spawn{
        host, requests,
        [](const std::string &ns) { return std::vector<std::uint8_t>(ns.begin(), ns.end()); },
        [this](const ProcKey &parent, const std::string &ns) { spawned.emplace_back(parent, ns); }};
};

std::vector<std::uint8_t> encoded_apps(std::size_t n) {
    std::vector<pmix_app_t> apps(n);
    for (auto &a : apps) {
        std::memset(&a, 0, sizeof a);
        a.cmd = const_cast<char *>("/bin/true");
        a.maxprocs = 1;
    }
    pmixpp::wire::Encoder enc;
    enc.put_u64(n);
    if (n > 0) {
        EXPECT_EQ(pmixpp::wire::encode(enc, PMIX_APP, apps.data(), n), PMIX_SUCCESS);
    }
    return enc.bytes();
}

TEST_F(SpawnTest, RegistersSpawn) {
    EXPECT_NE(requests.find(static_cast<std::uint16_t>(pmixpp::wire::Command::spawn)), nullptr);
}

TEST_F(SpawnTest, MalformedAppsAreRefusedAndNothingIsAnswered) {
    with_upcalls();
    Answer a;
    bool accepted = true;
    std::vector<std::uint8_t> bad = encoded_apps(2);
    bad.resize(bad.size() - 3);
    run([&] { accepted = spawn.request(a.reply(), *client, {}, bad); });
    EXPECT_FALSE(accepted);
    EXPECT_EQ(g_host.calls, 0);
    run([&] { EXPECT_EQ(a.count, 0); });
}

TEST_F(SpawnTest, NoAppsIsBadParamAndNoUpcallNotSupported) {
    Answer none, unsupported;
    run([&] {
        EXPECT_TRUE(spawn.request(none.reply(), *client, {}, encoded_apps(0)));
        EXPECT_TRUE(spawn.request(unsupported.reply(), *client, {}, encoded_apps(1)));
    });
    EXPECT_EQ(none.wait().status, PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(unsupported.wait().status, PMIX_ERR_NOT_SUPPORTED);
    EXPECT_TRUE(spawned.empty());
}

TEST_F(SpawnTest, ASpawnedJobIsConnectedToItsParentAndAnsweredWithItsBlob) {
    with_upcalls();
    for (bool inline_completion : {false, true}) {
        g_host.inline_completion = inline_completion;
        g_host.spawned_nspace = inline_completion ? "child-inline" : "child-later";
        spawned.clear();
        Answer a;
        run([&] { EXPECT_TRUE(spawn.request(a.reply(), *client, {}, encoded_apps(2))); });
        const Reply r = a.wait();
        ASSERT_EQ(r.status, PMIX_SUCCESS);
        EXPECT_EQ(g_host.napps, 2u);
        EXPECT_STREQ(g_host.caller.nspace, "parent");
        pmixpp::wire::BodyReader reader(r.body);
        std::int32_t st = 0;
        std::string ns;
        std::vector<std::uint8_t> blob;
        reader.i32(st);
        reader.str(ns);
        reader.bytes(blob);
        EXPECT_TRUE(reader.finished());
        EXPECT_EQ(ns, g_host.spawned_nspace);
        EXPECT_EQ(blob, std::vector<std::uint8_t>(ns.begin(), ns.end()));
        run([&] {
            ASSERT_EQ(spawned.size(), 1u);
            EXPECT_EQ(spawned[0].first, (ProcKey{"parent", 3}));
            EXPECT_EQ(spawned[0].second, g_host.spawned_nspace);
        });
    }
}

TEST_F(SpawnTest, ASuccessWithoutAnNspaceIsAFailedLaunch) {
    with_upcalls();
    g_host.spawned_nspace = "";  // a NULL nspace
    Answer a;
    run([&] { EXPECT_TRUE(spawn.request(a.reply(), *client, {}, encoded_apps(1))); });
    EXPECT_EQ(a.wait().status, PMIX_ERR_JOB_FAILED_TO_LAUNCH);
    // OPERATION_SUCCEEDED at once names no nspace either.
    g_host.rc = PMIX_OPERATION_SUCCEEDED;
    Answer at_once;
    run([&] { EXPECT_TRUE(spawn.request(at_once.reply(), *client, {}, encoded_apps(1))); });
    EXPECT_EQ(at_once.wait().status, PMIX_ERR_JOB_FAILED_TO_LAUNCH);
    run([&] { EXPECT_TRUE(spawned.empty()); });
}

TEST_F(SpawnTest, TheHostsErrorIsTheAnswer) {
    with_upcalls();
    g_host.status = PMIX_ERR_OUT_OF_RESOURCE;
    Answer later;
    run([&] { EXPECT_TRUE(spawn.request(later.reply(), *client, {}, encoded_apps(1))); });
    EXPECT_EQ(later.wait().status, PMIX_ERR_OUT_OF_RESOURCE);
    g_host.rc = PMIX_ERR_NOT_AVAILABLE;
    Answer now;
    run([&] { EXPECT_TRUE(spawn.request(now.reply(), *client, {}, encoded_apps(1))); });
    EXPECT_EQ(now.wait().status, PMIX_ERR_NOT_AVAILABLE);
    run([&] { EXPECT_TRUE(spawned.empty()); });
}

// ---------------------------------------------------------------------------------------------
// LocalSupport (no pnet module: the opener finds none)

pmixpp::mca::McaResult<pmixpp::pnet_base::Networks> no_networks() {
    return pmixpp::mca::McaError{pmixpp::mca::McaStatus::no_module, "no pnet component"};
}

pmixpp::wire::InfoArray envars(
    std::vector<std::tuple<const char *, const char *, const char *>> e) {
    std::vector<pmix_info_t> in(e.size());
    for (std::size_t i = 0; i < e.size(); ++i) {
        pmix_envar_t v{const_cast<char *>(std::get<1>(e[i])), const_cast<char *>(std::get<2>(e[i])),
                       ':'};
        PMIx_Info_load(&in[i], std::get<0>(e[i]), &v, PMIX_ENVAR);
    }
    auto out = pmixpp::wire::InfoArray::copy_of(in.data(), in.size());
    for (auto &i : in) PMIx_Value_destruct(&i.value);
    return out;
}

pmix_proc_t child(const char *ns, pmix_rank_t rank) {
    return proc_of({ns, rank});
}

TEST(LocalSupportTest, SetEnvarReplacesAndAddEnvarOnlyFillsWhatIsUnset) {
    LocalSupport support(&no_networks);
    ASSERT_EQ(support.setup_local_support("job", envars({{PMIX_SET_ENVAR, "SET_ME", "new"},
                                                         {PMIX_ADD_ENVAR, "ADD_ME", "added"},
                                                         {PMIX_ADD_ENVAR, "KEEP_ME", "not used"},
                                                         {"pmix.other.key", "IGNORED", "x"}})),
              PMIX_SUCCESS);
    pmixpp::mca::Environment env{{"SET_ME", "old"}, {"KEEP_ME", "kept"}};
    ASSERT_TRUE(support.setup_fork(child("job", 0), env).ok());
    EXPECT_EQ(env["SET_ME"], "new");
    EXPECT_EQ(env["ADD_ME"], "added");
    EXPECT_EQ(env["KEEP_ME"], "kept");
    EXPECT_EQ(env.count("IGNORED"), 0u);
}

TEST(LocalSupportTest, OnlyTheChildrenOfThatNspaceGetItUntilItIsDeregistered) {
    LocalSupport support(&no_networks);
    ASSERT_EQ(support.setup_local_support("job", envars({{PMIX_SET_ENVAR, "V", "1"}})),
              PMIX_SUCCESS);
    pmixpp::mca::Environment other, before, after;
    ASSERT_TRUE(support.setup_fork(child("other", 0), other).ok());
    EXPECT_EQ(other.count("V"), 0u);
    ASSERT_TRUE(support.setup_fork(child("job", 5), before).ok());
    EXPECT_EQ(before["V"], "1");
    support.job_deregistered("job");
    ASSERT_TRUE(support.setup_fork(child("job", 5), after).ok());
    EXPECT_EQ(after.count("V"), 0u);
}

TEST(LocalSupportTest, SetupApplicationCarriesTheConfiguredVariablesOnlyWhenAsked) {
    ::setenv("PMIX_MCA_unit_local_support", "carried", 1);
    ::setenv("FI_UNIT_LOCAL_SUPPORT", "fabric", 1);
    ::setenv("UNIT_LOCAL_SUPPORT_NOT_CARRIED", "no", 1);
    LocalSupport support(&no_networks);
    auto names = [](const pmixpp::wire::InfoArray &out) {
        std::map<std::string, std::string> m;
        for (const auto &i : out.span()) {
            EXPECT_STREQ(i.key, PMIX_SET_ENVAR);
            if (i.value.type == PMIX_ENVAR) m[i.value.data.envar.envar] = i.value.data.envar.value;
        }
        return m;
    };
    auto without = support.setup_application("job", {});
    ASSERT_TRUE(without);
    EXPECT_EQ(without.value().size(), 0u);

    pmix_info_t flag;
    bool yes = true;
    PMIx_Info_load(&flag, PMIX_SETUP_APP_ENVARS, &yes, PMIX_BOOL);
    auto with = support.setup_application("job", {&flag, 1});
    ASSERT_TRUE(with);
    const auto m = names(with.value());
    EXPECT_EQ(m.at("PMIX_MCA_unit_local_support"), "carried");
    EXPECT_EQ(m.at("FI_UNIT_LOCAL_SUPPORT"), "fabric");
    EXPECT_EQ(m.count("UNIT_LOCAL_SUPPORT_NOT_CARRIED"), 0u);
    ::unsetenv("PMIX_MCA_unit_local_support");
    ::unsetenv("FI_UNIT_LOCAL_SUPPORT");
    ::unsetenv("UNIT_LOCAL_SUPPORT_NOT_CARRIED");
}

TEST(LocalSupportTest, ANetworkFrameworkThatFailsToOpenFailsTheSetUpWithItsReason) {
    int opens = 0;
    LocalSupport support([&opens]() -> pmixpp::mca::McaResult<pmixpp::pnet_base::Networks> {
        ++opens;
        return pmixpp::mca::McaError{pmixpp::mca::McaStatus::cannot_open, "pnet_x: broken"};
    });
    auto app = support.setup_application("job", {});
    ASSERT_FALSE(app);
    EXPECT_EQ(app.status().code(), PMIX_ERR_NOT_AVAILABLE);
    EXPECT_NE(app.status().message().find("pnet_x: broken"), std::string::npos);
    EXPECT_EQ(support.setup_local_support("job", envars({{PMIX_SET_ENVAR, "V", "1"}})),
              PMIX_ERR_NOT_AVAILABLE);
    pmixpp::mca::Environment env;
    ASSERT_TRUE(support.setup_fork(child("job", 0), env).ok());
    EXPECT_EQ(env.count("V"), 0u) << "a failed set-up keeps nothing";
    EXPECT_EQ(opens, 2) << "a failed open is tried again next time";
}

}  // namespace
