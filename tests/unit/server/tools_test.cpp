// Unit tests of the Tools service's logic (framework/server/tools.hpp)
// without sockets: which PMIx_server_init flags accept tools, how an approved
// tool is kept (a connected record of its own nspace), which identities are
// refused (a job's nspace, a connected tool's rank, an empty nspace), and a
// tool's departure (its record goes, its nspace with the last one; a job's
// client is left alone). The handshake's transport checks need a channel:
// the integration tests (tool_*.c) cover them.
#include <gtest/gtest.h>

#include <string>

#include "server/client_table.hpp"
#include "server/tools.hpp"
#include "server/upcalls.hpp"

using namespace pmixpp::server;

namespace {

pmix_info_t flag(const char *key, bool value) {
    pmix_info_t i{};
    PMIx_Info_load(&i, key, &value, PMIX_BOOL);
    return i;
}

struct ToolsTest : ::testing::Test {
    ClientTable table;
    HostUpcalls host;
    pmix_proc_t self{};
    Tools tools{table, host, self,
                HandshakeOutcome{[](pmixpp::wire::Channel &, const pmixpp::wire::Frame &,
                                    pmix_status_t, const std::string &) {},
                                 [](pmixpp::wire::Channel &, const ProcKey &) {}}};
    void SetUp() override { table.subscribe(&tools); }
    pmix_status_t admit(const char *ns, pmix_rank_t rank, std::string *why = nullptr) {
        std::string reason;
        const pmix_status_t rc = tools.admit(proc_of({ns, rank}), 1000, 100, 4242, nullptr, reason);
        if (why != nullptr) *why = reason;
        return rc;
    }
};

TEST_F(ToolsTest, AnyOfTheThreeSupportFlagsAcceptsTools) {
    tools.configure({});
    EXPECT_FALSE(tools.accepts_tools());
    for (const char *key :
         {PMIX_SERVER_TOOL_SUPPORT, PMIX_SERVER_SYSTEM_SUPPORT, PMIX_SERVER_SESSION_SUPPORT}) {
        pmix_info_t on = flag(key, true);
        tools.configure({&on, 1});
        EXPECT_TRUE(tools.accepts_tools()) << key;
        pmix_info_t off = flag(key, false);
        tools.configure({&off, 1});
        EXPECT_FALSE(tools.accepts_tools()) << key << " false";
    }
    pmix_info_t on = flag(PMIX_SERVER_TOOL_SUPPORT, true);
    tools.configure({&on, 1});
    tools.clear();
    EXPECT_FALSE(tools.accepts_tools());
}

TEST_F(ToolsTest, AnApprovedToolIsAConnectedRecordOfItsOwnNspace) {
    ASSERT_EQ(admit("tool.a", 0), PMIX_SUCCESS);
    EXPECT_TRUE(tools.is_tool({"tool.a", 0}));
    const ClientRecord *c = table.find_client({"tool.a", 0});
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->state, ClientRecord::State::connected);
    EXPECT_EQ(c->uid, 1000u);
    EXPECT_EQ(c->gid, 100u);
    EXPECT_EQ(c->pid, 4242u);
    const JobRecord *job = table.find_job("tool.a");
    ASSERT_NE(job, nullptr);
    EXPECT_FALSE(job->registered);  // no job registered it: it is the tool's
}

TEST_F(ToolsTest, AJobsNamespaceIsRefused) {
    JobRecord &job = table.job("app");
    job.registered = true;
    table.register_client(proc_of({"app", 0}), 1000, 100, nullptr);
    std::string why;
    EXPECT_EQ(admit("app", 0, &why), PMIX_ERR_INVALID_CRED);
    EXPECT_NE(why.find("already in use"), std::string::npos) << why;
    EXPECT_EQ(admit("app", 7), PMIX_ERR_INVALID_CRED);  // another rank of the job too
    EXPECT_FALSE(tools.is_tool({"app", 7}));
    EXPECT_EQ(table.find_client({"app", 7}), nullptr);
}

TEST_F(ToolsTest, AToolsNamespaceTakesOtherRanksNotTheSameOne) {
    ASSERT_EQ(admit("tool.b", 0), PMIX_SUCCESS);
    EXPECT_EQ(admit("tool.b", 1), PMIX_SUCCESS);
    EXPECT_EQ(admit("tool.b", 0), PMIX_ERR_INVALID_CRED);
    EXPECT_TRUE(tools.is_tool({"tool.b", 1}));
}

TEST_F(ToolsTest, AnEmptyNamespaceIsABadParameter) {
    EXPECT_EQ(admit("", 0), PMIX_ERR_BAD_PARAM);
    EXPECT_TRUE(table.jobs().empty());
}

TEST_F(ToolsTest, ADepartedToolGoesAndItsNamespaceWithTheLastOne) {
    ASSERT_EQ(admit("tool.c", 0), PMIX_SUCCESS);
    ASSERT_EQ(admit("tool.c", 1), PMIX_SUCCESS);
    EXPECT_TRUE(table.depart({"tool.c", 0}, Departure::finalized));
    EXPECT_FALSE(tools.is_tool({"tool.c", 0}));
    EXPECT_EQ(table.find_client({"tool.c", 0}), nullptr);
    ASSERT_NE(table.find_job("tool.c"), nullptr);
    EXPECT_TRUE(table.depart({"tool.c", 1}, Departure::lost));
    EXPECT_EQ(table.find_job("tool.c"), nullptr);
    // The identity is free again.
    EXPECT_EQ(admit("tool.c", 0), PMIX_SUCCESS);
}

TEST_F(ToolsTest, AJobsClientDepartingIsNotTheToolsConcern) {
    table.job("app").registered = true;
    table.register_client(proc_of({"app", 0}), 1000, 100, nullptr).state =
        ClientRecord::State::connected;
    EXPECT_TRUE(table.depart({"app", 0}, Departure::finalized));
    EXPECT_NE(table.find_client({"app", 0}), nullptr);
    EXPECT_NE(table.find_job("app"), nullptr);
}

}  // namespace
