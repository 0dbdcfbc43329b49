// gds_hash: loading through the component repository, and what
// PMIx_server_register_nspace's info becomes (job, app, node, session and
// process realms, looked up as Chap_API_Reserved_Keys describes).
#include "gds_hash_support.hpp"

#include <unistd.h>

#include <climits>

using namespace gds_hash_test;

// --- loading ---------------------------------------------------------------------

TEST(GdsHashComponent, IsFoundCheckedAndSelectedByTheRepository) {
    auto &repo = ComponentLoader::instance().repository();
    auto selection = repo.select_components(gds::kFrameworkName);
    ASSERT_FALSE(selection.error) << selection.error->message;
    bool found = false;
    for (const auto &s : selection.selected) {
        if (s.record.component != "hash") continue;
        found = true;
        EXPECT_EQ(s.record.version(), "1.0.0");
        EXPECT_EQ(s.priority, 50);
        EXPECT_EQ(s.record.descriptor->interface_major, gds::kInterfaceMajor);
    }
    EXPECT_TRUE(found) << "gds_hash was not selected";
}

TEST(GdsHashComponent, CreatesAModuleThatDestroysCleanly) {
    auto handle = ComponentLoader::instance().create();
    ASSERT_TRUE(handle);
    EXPECT_EQ(handle.component(), "gds_hash");
    auto blob = handle.as<gds::Module>()->assemble_modex(proc("ns", 0), PMIX_LOCAL);
    EXPECT_TRUE(blob.ok());
}

// --- job realm ----------------------------------------------------------------------

TEST_F(GdsHash, JobLevelKeysAnswerTheWildcardRankWithTheirRegisteredType) {
    const char *nodes = "node[0-1]";
    Infos info;
    info.u32(PMIX_JOB_SIZE, 4).u32(PMIX_UNIV_SIZE, 8).str(PMIX_NODE_MAP, nodes);
    pmix_byte_object_t procmap{const_cast<char *>("pmix:0,1;2,3"), 13};
    info.add(PMIX_PROC_MAP, &procmap, PMIX_REGEX);
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());

    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_JOB_SIZE), 4u);
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_UNIV_SIZE), 8u);
    EXPECT_EQ(get_str(*m, job("job1"), PMIX_NODE_MAP), "node[0-1]");
    auto map = get(*m, job("job1"), PMIX_PROC_MAP);
    ASSERT_TRUE(map->ok());
    ASSERT_EQ(map->value.type, PMIX_REGEX);
    ASSERT_EQ(map->value.data.bo.size, 13u);
    EXPECT_STREQ(map->value.data.bo.bytes, "pmix:0,1;2,3");
    // PMIX_RANK_UNDEF also names the job.
    EXPECT_EQ(get_u32(*m, proc("job1", PMIX_RANK_UNDEF), PMIX_JOB_SIZE), 4u);
}

TEST_F(GdsHash, UnknownKeyOrJobIsNotFound) {
    Infos info;
    info.u32(PMIX_JOB_SIZE, 4);
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());
    EXPECT_EQ(get(*m, job("job1"), "no.such.key")->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(get(*m, job("job2"), PMIX_JOB_SIZE)->status, PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, JobInfoArrayMembersAreJobLevel) {
    Infos jobinfo;
    jobinfo.u32(PMIX_JOB_SIZE, 6).u32(PMIX_JOB_NUM_APPS, 1);
    Infos info;
    info.array(PMIX_JOB_INFO_ARRAY, jobinfo);
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_JOB_SIZE), 6u);
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_JOB_NUM_APPS), 1u);
}

TEST_F(GdsHash, RegisteringAgainAddsAndReplacesKeys) {
    Infos first, second;
    first.u32(PMIX_JOB_SIZE, 4).u32(PMIX_UNIV_SIZE, 8);
    second.u32(PMIX_JOB_SIZE, 5).u32(PMIX_JOB_NUM_APPS, 1);
    ASSERT_TRUE(m->register_job("job1", first.span()).ok());
    ASSERT_TRUE(m->register_job("job1", second.span()).ok());
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_JOB_SIZE), 5u);
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_UNIV_SIZE), 8u);
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_JOB_NUM_APPS), 1u);
}

// --- process realm --------------------------------------------------------------------

namespace {

// Two ranks on two nodes, as a host registers them.
Infos two_rank_job() {
    Infos info;
    info.u32(PMIX_JOB_SIZE, 2);
    for (pmix_rank_t r = 0; r < 2; ++r) {
        Infos pdata;
        pdata.rank(PMIX_RANK, r)
            .u16(PMIX_LOCAL_RANK, 0)
            .u16(PMIX_NODE_RANK, static_cast<std::uint16_t>(10 + r))
            .str(PMIX_HOSTNAME, r == 0 ? "alpha" : "beta")
            .u32(PMIX_NODEID, r)
            .u32(PMIX_APPNUM, 0);
        info.array(PMIX_PROC_DATA, pdata);
    }
    return info;
}

}  // namespace

TEST_F(GdsHash, ProcDataArraysAnswerPerRank) {
    ASSERT_TRUE(m->register_job("job1", two_rank_job().span()).ok());
    for (pmix_rank_t r = 0; r < 2; ++r) {
        auto local = get(*m, proc("job1", r), PMIX_LOCAL_RANK);
        ASSERT_TRUE(local->ok());
        EXPECT_EQ(local->value.type, PMIX_UINT16);
        EXPECT_EQ(local->value.data.uint16, 0);
        auto node_rank = get(*m, proc("job1", r), PMIX_NODE_RANK);
        ASSERT_TRUE(node_rank->ok());
        EXPECT_EQ(node_rank->value.type, PMIX_UINT16);
        EXPECT_EQ(node_rank->value.data.uint16, 10 + r);
        EXPECT_EQ(get_str(*m, proc("job1", r), PMIX_HOSTNAME), r == 0 ? "alpha" : "beta");
        EXPECT_EQ(get_u32(*m, proc("job1", r), PMIX_NODEID), r);
        EXPECT_EQ(get_u32(*m, proc("job1", r), PMIX_APPNUM), 0u);
        auto rank = get(*m, proc("job1", r), PMIX_RANK);
        ASSERT_TRUE(rank->ok());
        EXPECT_EQ(rank->value.type, PMIX_PROC_RANK);
    }
    // Process-level keys are not job-level ones.
    EXPECT_EQ(get(*m, job("job1"), PMIX_NODE_RANK)->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(get(*m, proc("job1", 2), PMIX_NODE_RANK)->status, PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, ReservedKeyAskedOfARankFallsBackToTheJobButUserKeysDoNot) {
    Infos info = two_rank_job();
    info.u32("app.custom", 7);
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());
    EXPECT_EQ(get_u32(*m, proc("job1", 1), PMIX_JOB_SIZE), 2u);
    EXPECT_EQ(get(*m, proc("job1", 1), "app.custom")->status, PMIX_ERR_NOT_FOUND);
    // PMIX_PROC_INFO (the realm qualifier) keeps the request in the process realm.
    Infos qual;
    qual.flag("pmix.proc.info");
    EXPECT_EQ(get(*m, proc("job1", 1), PMIX_JOB_SIZE, qual)->status, PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, ProcArrayIdentifiedByProcid) {
    pmix_proc_t id = proc("job1", 3);
    Infos pdata;
    pdata.add(PMIX_PROCID, &id, PMIX_PROC).u16(PMIX_LOCAL_RANK, 2);
    Infos info;
    info.array(PMIX_PROC_INFO_ARRAY, pdata);
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());
    auto local = get(*m, proc("job1", 3), PMIX_LOCAL_RANK);
    ASSERT_TRUE(local->ok());
    EXPECT_EQ(local->value.data.uint16, 2);
}

// --- malformed registrations ---------------------------------------------------------

TEST_F(GdsHash, ProcArrayWithoutRankIsBadParamNamingTheKeyAndStoresNothing) {
    Infos pdata;
    pdata.u16(PMIX_LOCAL_RANK, 0);
    Infos info;
    info.u32(PMIX_JOB_SIZE, 4).array(PMIX_PROC_INFO_ARRAY, pdata);
    const auto st = m->register_job("job1", info.span());
    EXPECT_EQ(st.code(), PMIX_ERR_BAD_PARAM);
    EXPECT_NE(st.message().find("PMIX_PROC_INFO_ARRAY"), std::string::npos) << st.message();
    EXPECT_EQ(get(*m, job("job1"), PMIX_JOB_SIZE)->status, PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, ArrayKeysThatAreNotInfoArraysAreBadParam) {
    for (const char *key : {PMIX_APP_INFO_ARRAY, PMIX_NODE_INFO_ARRAY, PMIX_PROC_INFO_ARRAY,
                            PMIX_JOB_INFO_ARRAY, PMIX_SESSION_INFO_ARRAY}) {
        Infos info;
        info.u32(key, 1);
        const auto st = m->register_job("job1", info.span());
        EXPECT_EQ(st.code(), PMIX_ERR_BAD_PARAM) << key;
        EXPECT_NE(st.message().find(key), std::string::npos) << st.message();
    }
}

TEST_F(GdsHash, AppArrayWithoutAppnumAndNodeArrayWithoutIdAreBadParam) {
    Infos app, node;
    app.u32(PMIX_APP_SIZE, 2);
    node.u32(PMIX_LOCAL_SIZE, 2);
    Infos a, n;
    a.array(PMIX_APP_INFO_ARRAY, app);
    n.array(PMIX_NODE_INFO_ARRAY, node);
    EXPECT_EQ(m->register_job("job1", a.span()).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(m->register_job("job1", n.span()).code(), PMIX_ERR_BAD_PARAM);
}

// --- app realm ------------------------------------------------------------------------

namespace {

// Two apps (sizes 2 and 3); rank 2 belongs to app 1.
Infos two_app_job() {
    Infos info;
    info.u32(PMIX_JOB_SIZE, 5).u32(PMIX_JOB_NUM_APPS, 2);
    for (std::uint32_t a = 0; a < 2; ++a) {
        Infos app;
        app.u32(PMIX_APPNUM, a).u32(PMIX_APP_SIZE, 2 + a).str(PMIX_WDIR, a ? "/b" : "/a");
        info.array(PMIX_APP_INFO_ARRAY, app);
    }
    Infos rank2;
    rank2.rank(PMIX_RANK, 2).u32(PMIX_APPNUM, 1);
    info.array(PMIX_PROC_DATA, rank2);
    return info;
}

}  // namespace

TEST_F(GdsHash, AppInfoIsQualifiedByAppnum) {
    ASSERT_TRUE(m->register_job("job1", two_app_job().span()).ok());
    Infos app1;
    app1.flag(PMIX_APP_INFO).u32(PMIX_APPNUM, 1);
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_APP_SIZE, app1), 3u);
    EXPECT_EQ(get_str(*m, job("job1"), PMIX_WDIR, app1), "/b");
    Infos app0;
    app0.u32(PMIX_APPNUM, 0);
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_APP_SIZE, app0), 2u);
    Infos app7;
    app7.u32(PMIX_APPNUM, 7);
    EXPECT_EQ(get(*m, job("job1"), PMIX_APP_SIZE, app7)->status, PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, AppKeyOfARankComesFromItsOwnAppAndOfTheJobFromAppZero) {
    ASSERT_TRUE(m->register_job("job1", two_app_job().span()).ok());
    EXPECT_EQ(get_u32(*m, proc("job1", 2), PMIX_APP_SIZE), 3u);
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_APP_SIZE), 2u);
}

// --- node realm ----------------------------------------------------------------------

namespace {

Infos two_node_job() {
    Infos info = two_rank_job();
    const char *names[] = {"alpha", "beta"};
    const char *peers[] = {"0", "1"};
    for (std::uint32_t n = 0; n < 2; ++n) {
        Infos node;
        node.u32(PMIX_NODEID, n)
            .str(PMIX_HOSTNAME, names[n])
            .u32(PMIX_LOCAL_SIZE, 1)
            .str(PMIX_LOCAL_PEERS, peers[n])
            .u32(PMIX_NODE_SIZE, 10 * (n + 1));
        info.array(PMIX_NODE_INFO_ARRAY, node);
    }
    return info;
}

}  // namespace

TEST_F(GdsHash, NodeInfoIsQualifiedByHostnameOrNodeid) {
    ASSERT_TRUE(m->register_job("job1", two_node_job().span()).ok());
    Infos by_name;
    by_name.flag(PMIX_NODE_INFO).str(PMIX_HOSTNAME, "beta");
    EXPECT_EQ(get_str(*m, job("job1"), PMIX_LOCAL_PEERS, by_name), "1");
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_NODE_SIZE, by_name), 20u);
    Infos by_id;
    by_id.u32(PMIX_NODEID, 0);
    EXPECT_EQ(get_str(*m, job("job1"), PMIX_LOCAL_PEERS, by_id), "0");
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_NODE_SIZE, by_id), 10u);
    Infos unknown;
    unknown.str(PMIX_HOSTNAME, "gamma");
    EXPECT_EQ(get(*m, job("job1"), PMIX_NODE_SIZE, unknown)->status, PMIX_ERR_NOT_FOUND);
}

TEST_F(GdsHash, NodeKeyOfARankComesFromTheNodeItRunsOn) {
    ASSERT_TRUE(m->register_job("job1", two_node_job().span()).ok());
    EXPECT_EQ(get_u32(*m, proc("job1", 0), PMIX_NODE_SIZE), 10u);
    EXPECT_EQ(get_u32(*m, proc("job1", 1), PMIX_NODE_SIZE), 20u);
}

TEST_F(GdsHash, NodeKeyOfTheJobComesFromThisHostsNode) {
    char host[HOST_NAME_MAX + 1] = {};
    ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
    Infos info;
    for (std::uint32_t n = 0; n < 2; ++n) {
        Infos node;
        node.u32(PMIX_NODEID, n).str(PMIX_HOSTNAME, n == 1 ? host : "elsewhere");
        node.u32(PMIX_LOCAL_SIZE, 3 + n);
        info.array(PMIX_NODE_INFO_ARRAY, node);
    }
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_LOCAL_SIZE), 4u);
}

TEST_F(GdsHash, SingleNodeJobMayRegisterNodeKeysAtTopLevel) {
    Infos info;
    info.u32(PMIX_LOCAL_SIZE, 2).str(PMIX_LOCAL_PEERS, "0,1");
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());
    Infos node;
    node.flag(PMIX_NODE_INFO);
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_LOCAL_SIZE, node), 2u);
    EXPECT_EQ(get_str(*m, proc("job1", 1), PMIX_LOCAL_PEERS), "0,1");
}

// --- session realm -------------------------------------------------------------------

TEST_F(GdsHash, SessionInfoAnswersTheJobAndTheSessionIdQualifier) {
    Infos session;
    session.u32(PMIX_SESSION_ID, 7).u32(PMIX_UNIV_SIZE, 16).u32(PMIX_NUM_NODES, 4);
    Infos info;
    info.array(PMIX_SESSION_INFO_ARRAY, session).u32(PMIX_NUM_NODES, 2);
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());

    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_UNIV_SIZE), 16u);
    // The job's own value wins without a qualifier; PMIX_SESSION_INFO asks the session.
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_NUM_NODES), 2u);
    Infos ssn;
    ssn.flag(PMIX_SESSION_INFO);
    EXPECT_EQ(get_u32(*m, job("job1"), PMIX_NUM_NODES, ssn), 4u);
    // PMIX_SESSION_ID: the proc is ignored.
    Infos id7;
    id7.u32(PMIX_SESSION_ID, 7);
    EXPECT_EQ(get_u32(*m, job("other"), PMIX_NUM_NODES, id7), 4u);
    Infos id8;
    id8.u32(PMIX_SESSION_ID, 8);
    EXPECT_EQ(get(*m, job("job1"), PMIX_NUM_NODES, id8)->status, PMIX_ERR_NOT_FOUND);
}

// --- fetch_all -----------------------------------------------------------------------

TEST_F(GdsHash, FetchAllOfTheJobListsJobKeysAndTheRealmArrays) {
    Infos info = two_node_job();
    ASSERT_TRUE(m->register_job("job1", info.span()).ok());
    pmix_status_t st = PMIX_ERROR;
    std::map<std::string, int> count;
    auto keys = all_keys(*m, job("job1"), &st, &count);
    EXPECT_EQ(st, PMIX_SUCCESS);
    EXPECT_EQ(count[PMIX_JOB_SIZE], 1);
    EXPECT_EQ(count[PMIX_NODE_INFO_ARRAY], 2) << "one array per node";
    EXPECT_FALSE(keys.contains(PMIX_LOCAL_RANK));
}

// --- delete_job ------------------------------------------------------------------------

TEST_F(GdsHash, DeleteJobForgetsItsDataAndOnlyIts) {
    ASSERT_TRUE(m->register_job("job1", two_node_job().span()).ok());
    ASSERT_TRUE(m->register_job("job2", two_rank_job().span()).ok());
    const pmix_value_t v = u32_value(9);
    ASSERT_TRUE(m->store(proc("job1", 0), PMIX_GLOBAL, "user.key", v).ok());

    ASSERT_TRUE(m->delete_job("job1").ok());
    EXPECT_EQ(get(*m, job("job1"), PMIX_JOB_SIZE)->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(get(*m, proc("job1", 0), PMIX_LOCAL_RANK)->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(get(*m, proc("job1", 0), "user.key")->status, PMIX_ERR_NOT_FOUND);
    pmix_status_t st = PMIX_SUCCESS;
    all_keys(*m, job("job1"), &st);
    EXPECT_EQ(st, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(m->assemble_job("job1").status().code(), PMIX_ERR_NOT_FOUND);

    EXPECT_EQ(get_u32(*m, job("job2"), PMIX_JOB_SIZE), 2u);
    EXPECT_TRUE(m->delete_job("never.registered").ok());
}
