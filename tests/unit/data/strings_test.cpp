// The pretty-printers know every value the headers define, and answer
// something readable (never NULL) for values they do not know.
#include <gtest/gtest.h>
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace {

struct Named {
    long long value;
    const char *name;
};

}  // namespace

#define PMIXPP_TEST_STATUS(name) {name, #name},
static const Named kHeaderStatuses[] = {
#include "header_status_codes.inc"
};
#undef PMIXPP_TEST_STATUS

TEST(ErrorString, KnowsEveryStatusConstantOfTheHeaders) {
    ASSERT_GT(std::size(kHeaderStatuses), 150u);
    for (const Named &s : kHeaderStatuses) {
        const char *text = PMIx_Error_string(static_cast<pmix_status_t>(s.value));
        ASSERT_NE(text, nullptr) << s.name;
        EXPECT_STRNE(text, "UNKNOWN STATUS") << s.name;
    }
    EXPECT_STREQ(PMIx_Error_string(PMIX_SUCCESS), "SUCCESS");
}

TEST(ErrorString, MatchesTheStringsBinariesExpect) {
    EXPECT_STREQ(PMIx_Error_string(PMIX_ERR_NOT_FOUND), "NOT-FOUND");
    EXPECT_STREQ(PMIx_Error_string(PMIX_OPERATION_SUCCEEDED), "OPERATION-SUCCEEDED");
    EXPECT_STREQ(PMIx_Error_string(PMIX_ERR_BAD_PARAM), "BAD-PARAM");
}

// The text is the constant's name without PMIX_ERR_/PMIX_, '_' as '-'
// ("NOT-FOUND"), the first name of a value (pmix_common.h before the
// deprecated names) winning: OpenPMIx 4.2.2's form, not the full name (it
// answers "NOT-FOUND" for PMIX_ERR_NOT_FOUND too; docs/dropin.md,
// "PMIx_Error_string"). Derived here from the header's names for every code.
TEST(ErrorString, EveryTextIsItsConstantsShortName) {
    std::set<long long> seen;
    for (const Named &s : kHeaderStatuses) {
        if (!seen.insert(s.value).second) continue;  // a later name of the same value
        std::string want = s.name;
        for (const char *prefix : {"PMIX_ERR_", "PMIX_"}) {
            if (want.rfind(prefix, 0) == 0) {
                want.erase(0, std::strlen(prefix));
                break;
            }
        }
        for (char &c : want) {
            if (c == '_') c = '-';
        }
        EXPECT_EQ(PMIx_Error_string(static_cast<pmix_status_t>(s.value)), want) << s.name;
    }
}

TEST(ErrorString, UnknownCodesGetAReadableString) {
    EXPECT_STREQ(PMIx_Error_string(-2999), "UNKNOWN STATUS");
    EXPECT_STREQ(PMIx_Error_string(12345), "UNKNOWN STATUS");
}

namespace {

void expect_all_known(const char *(*fn)(long long), const std::vector<Named> &values,
                      const char *unknown, long long unknown_value) {
    for (const Named &v : values) {
        const char *text = fn(v.value);
        ASSERT_NE(text, nullptr) << v.name;
        EXPECT_STRNE(text, unknown) << v.name;
    }
    EXPECT_STREQ(fn(unknown_value), unknown);
}

#define NAMED(x)                      \
    Named {                           \
        static_cast<long long>(x), #x \
    }

}  // namespace

TEST(PrettyPrinters, ProcStateStringKnowsEveryState) {
    expect_all_known(
        [](long long v) { return PMIx_Proc_state_string(static_cast<pmix_proc_state_t>(v)); },
        {NAMED(PMIX_PROC_STATE_UNDEF),
         NAMED(PMIX_PROC_STATE_PREPPED),
         NAMED(PMIX_PROC_STATE_LAUNCH_UNDERWAY),
         NAMED(PMIX_PROC_STATE_RESTART),
         NAMED(PMIX_PROC_STATE_TERMINATE),
         NAMED(PMIX_PROC_STATE_RUNNING),
         NAMED(PMIX_PROC_STATE_CONNECTED),
         NAMED(PMIX_PROC_STATE_UNTERMINATED),
         NAMED(PMIX_PROC_STATE_TERMINATED),
         NAMED(PMIX_PROC_STATE_ERROR),
         NAMED(PMIX_PROC_STATE_KILLED_BY_CMD),
         NAMED(PMIX_PROC_STATE_ABORTED),
         NAMED(PMIX_PROC_STATE_FAILED_TO_START),
         NAMED(PMIX_PROC_STATE_ABORTED_BY_SIG),
         NAMED(PMIX_PROC_STATE_TERM_WO_SYNC),
         NAMED(PMIX_PROC_STATE_COMM_FAILED),
         NAMED(PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED),
         NAMED(PMIX_PROC_STATE_CALLED_ABORT),
         NAMED(PMIX_PROC_STATE_HEARTBEAT_FAILED),
         NAMED(PMIX_PROC_STATE_MIGRATING),
         NAMED(PMIX_PROC_STATE_CANNOT_RESTART),
         NAMED(PMIX_PROC_STATE_TERM_NON_ZERO),
         NAMED(PMIX_PROC_STATE_FAILED_TO_LAUNCH)},
        "UNKNOWN STATE", 99);
}

TEST(PrettyPrinters, ScopeStringKnowsEveryScope) {
    expect_all_known([](long long v) { return PMIx_Scope_string(static_cast<pmix_scope_t>(v)); },
                     {NAMED(PMIX_SCOPE_UNDEF), NAMED(PMIX_LOCAL), NAMED(PMIX_REMOTE),
                      NAMED(PMIX_GLOBAL), NAMED(PMIX_INTERNAL)},
                     "UNKNOWN SCOPE", 9);
    EXPECT_STREQ(PMIx_Scope_string(PMIX_GLOBAL), "SHARE ACROSS ALL NODES");
}

TEST(PrettyPrinters, PersistenceStringKnowsEveryPolicy) {
    expect_all_known(
        [](long long v) { return PMIx_Persistence_string(static_cast<pmix_persistence_t>(v)); },
        {NAMED(PMIX_PERSIST_INDEF), NAMED(PMIX_PERSIST_FIRST_READ), NAMED(PMIX_PERSIST_PROC),
         NAMED(PMIX_PERSIST_APP), NAMED(PMIX_PERSIST_SESSION), NAMED(PMIX_PERSIST_INVALID)},
        "UNKNOWN PERSISTENCE", 9);
}

TEST(PrettyPrinters, DataRangeStringKnowsEveryRange) {
    expect_all_known(
        [](long long v) { return PMIx_Data_range_string(static_cast<pmix_data_range_t>(v)); },
        {NAMED(PMIX_RANGE_UNDEF), NAMED(PMIX_RANGE_RM), NAMED(PMIX_RANGE_LOCAL),
         NAMED(PMIX_RANGE_NAMESPACE), NAMED(PMIX_RANGE_SESSION), NAMED(PMIX_RANGE_GLOBAL),
         NAMED(PMIX_RANGE_CUSTOM), NAMED(PMIX_RANGE_PROC_LOCAL), NAMED(PMIX_RANGE_INVALID)},
        "UNKNOWN RANGE", 9);
}

TEST(PrettyPrinters, AllocDirectiveStringKnowsEveryDirective) {
    expect_all_known(
        [](long long v) {
            return PMIx_Alloc_directive_string(static_cast<pmix_alloc_directive_t>(v));
        },
        {NAMED(PMIX_ALLOC_NEW), NAMED(PMIX_ALLOC_EXTEND), NAMED(PMIX_ALLOC_RELEASE),
         NAMED(PMIX_ALLOC_REAQUIRE), NAMED(PMIX_ALLOC_EXTERNAL)},
        "UNSPECIFIED", 9);
}

TEST(PrettyPrinters, JobStateStringKnowsEveryState) {
    expect_all_known(
        [](long long v) { return PMIx_Job_state_string(static_cast<pmix_job_state_t>(v)); },
        {NAMED(PMIX_JOB_STATE_UNDEF), NAMED(PMIX_JOB_STATE_AWAITING_ALLOC),
         NAMED(PMIX_JOB_STATE_LAUNCH_UNDERWAY), NAMED(PMIX_JOB_STATE_RUNNING),
         NAMED(PMIX_JOB_STATE_SUSPENDED), NAMED(PMIX_JOB_STATE_CONNECTED),
         NAMED(PMIX_JOB_STATE_UNTERMINATED), NAMED(PMIX_JOB_STATE_TERMINATED),
         NAMED(PMIX_JOB_STATE_TERMINATED_WITH_ERROR)},
        "UNKNOWN JOB STATE", 9);
}

TEST(PrettyPrinters, LinkStateStringKnowsEveryState) {
    EXPECT_STREQ(PMIx_Link_state_string(PMIX_LINK_UP), "ACTIVE");
    EXPECT_STREQ(PMIx_Link_state_string(PMIX_LINK_DOWN), "INACTIVE");
    EXPECT_STREQ(PMIx_Link_state_string(PMIX_LINK_STATE_UNKNOWN), "UNKNOWN");
}

TEST(PrettyPrinters, DeviceTypeStringKnowsEveryType) {
    expect_all_known(
        [](long long v) { return PMIx_Device_type_string(static_cast<pmix_device_type_t>(v)); },
        {NAMED(PMIX_DEVTYPE_BLOCK), NAMED(PMIX_DEVTYPE_GPU), NAMED(PMIX_DEVTYPE_NETWORK),
         NAMED(PMIX_DEVTYPE_OPENFABRICS), NAMED(PMIX_DEVTYPE_DMA), NAMED(PMIX_DEVTYPE_COPROC)},
        "UNKNOWN", 0x400);
}

TEST(PrettyPrinters, ValueComparisonStringKnowsEveryResult) {
    expect_all_known(
        [](long long v) { return PMIx_Value_comparison_string(static_cast<pmix_value_cmp_t>(v)); },
        {NAMED(PMIX_EQUAL), NAMED(PMIX_VALUE1_GREATER), NAMED(PMIX_VALUE2_GREATER),
         NAMED(PMIX_VALUE_TYPE_DIFFERENT), NAMED(PMIX_VALUE_INCOMPATIBLE_OBJECTS),
         NAMED(PMIX_VALUE_COMPARISON_NOT_AVAIL)},
        "UNKNOWN COMPARISON RESULT", 77);
}

TEST(PrettyPrinters, IofChannelStringNamesEveryChannelInACombination) {
    EXPECT_STREQ(PMIx_IOF_channel_string(PMIX_FWD_NO_CHANNELS), "NONE");
    EXPECT_STREQ(PMIx_IOF_channel_string(PMIX_FWD_STDIN_CHANNEL), "STDIN");
    EXPECT_STREQ(PMIx_IOF_channel_string(PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL),
                 "STDOUT STDERR");
    EXPECT_STREQ(PMIx_IOF_channel_string(PMIX_FWD_ALL_CHANNELS), "STDIN STDOUT STDERR STDDIAG");
}

TEST(PrettyPrinters, DataTypeStringNamesEveryType) {
    std::set<std::string> seen;
    for (pmix_data_type_t t = PMIX_BOOL; t <= PMIX_STOR_ACCESS_TYPE; ++t) {
        if (t == 26 || t == 29 || t == 44) {  // holes left by removed types
            EXPECT_STREQ(PMIx_Data_type_string(t), "UNKNOWN DATA TYPE");
            continue;
        }
        std::string name = PMIx_Data_type_string(t);
        EXPECT_EQ(name.rfind("PMIX_", 0), 0u) << t;
        EXPECT_TRUE(seen.insert(name).second) << "duplicate " << name;
    }
    EXPECT_STREQ(PMIx_Data_type_string(PMIX_PROC_RANK), "PMIX_PROC_RANK");
    EXPECT_STREQ(PMIx_Data_type_string(499), "UNKNOWN DATA TYPE");
}

TEST(PrettyPrinters, InfoDirectivesStringIsMallocdAndNamesTheFlags) {
    char *s = PMIx_Info_directives_string(PMIX_INFO_REQD | PMIX_INFO_ARRAY_END);
    EXPECT_STREQ(s, "REQUIRED:END");
    std::free(s);
    s = PMIx_Info_directives_string(0);
    EXPECT_STREQ(s, "OPTIONAL");
    std::free(s);
}

TEST(PrettyPrinters, ValueAndInfoStringsShowTypeKeyAndValue) {
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    uint32_t n = 42;
    PMIx_Info_load(&info, PMIX_JOB_SIZE, &n, PMIX_UINT32);
    char *v = PMIx_Value_string(&info.value);
    EXPECT_NE(std::string(v).find("PMIX_UINT32"), std::string::npos) << v;
    EXPECT_NE(std::string(v).find("42"), std::string::npos) << v;
    char *i = PMIx_Info_string(&info);
    EXPECT_NE(std::string(i).find(PMIX_JOB_SIZE), std::string::npos) << i;
    EXPECT_NE(std::string(i).find("42"), std::string::npos) << i;
    std::free(v);
    std::free(i);
    PMIX_INFO_DESTRUCT(&info);
}

// What Open MPI 4.1 does with PMIx_Get_version() (its only caller there is the
// ext3x component, opal/mca/pmix/ext3x/ext3x_component.c, the one Debian
// builds): at open it refuses the library when `'3' > version[0]`, the first
// char compared as a (signed) char; at register it prints the string whole
// into "PMIx library version %s (embedded in Open MPI)".
namespace {
bool open_mpi_41_ext3x_accepts(const char *version) {
    return !('3' > version[0]);
}
}  // namespace

TEST(Version, OpenMpi41CheckAsImplementedHere) {
    // The same check on the strings of real PMIx libraries: OpenPMIx 4.2 and
    // 3.x pass, a bare "2.x" (PMIx 2, which ext3x does not support) fails.
    EXPECT_TRUE(
        open_mpi_41_ext3x_accepts("OpenPMIx 4.2.2rc2 (PMIx Standard: 4.2, Stable ABI: 0.0, "
                                  "Provisional ABI: 0.0)"));
    EXPECT_TRUE(open_mpi_41_ext3x_accepts("3.2.3"));
    EXPECT_FALSE(open_mpi_41_ext3x_accepts("2.2.5"));
    EXPECT_FALSE(open_mpi_41_ext3x_accepts(""));
}

TEST(Version, NamesPmixppAndItsVersionInAFormOpenMpi41Accepts) {
    const std::string version = PMIx_Get_version();
    const std::string ours = std::string("pmixpp ") + PMIXPP_TEST_PROJECT_VERSION + " ";
    EXPECT_EQ(version.rfind(ours, 0), 0U) << version;
    EXPECT_EQ(version.find("OpenPMIx"), std::string::npos) << version;
    EXPECT_NE(version.find("(PMIx Standard: 4.2, "), std::string::npos) << version;
    EXPECT_EQ(version.find('\n'), std::string::npos) << version;
    EXPECT_TRUE(open_mpi_41_ext3x_accepts(PMIx_Get_version())) << version;
    // The same pointer every time (callers keep it, ext3x among them).
    EXPECT_EQ(PMIx_Get_version(), PMIx_Get_version());
    EXPECT_EQ(PMIx_Initialized(), 0);
}

namespace {

struct Attr {
    const char *name;
    const char *key;
};

#define PMIXPP_ATTRIBUTE(name, key, type, description) {name, key},
const Attr kAttributes[] = {
#include "attributes.inc"
};
#undef PMIXPP_ATTRIBUTE

}  // namespace

TEST(Attributes, EveryAttributeNameAndKeyTranslateBothWays) {
    ASSERT_GT(std::size(kAttributes), 400u);
    for (const Attr &a : kAttributes) {
        EXPECT_STREQ(PMIx_Get_attribute_string(a.name), a.key) << a.name;
        const char *name = PMIx_Get_attribute_name(a.key);
        // Two names may share a key (aliases); the name must map back to it.
        EXPECT_STREQ(PMIx_Get_attribute_string(name), a.key) << a.key;
    }
    EXPECT_STREQ(PMIx_Get_attribute_string("PMIX_JOB_SIZE"), "pmix.job.size");
    EXPECT_STREQ(PMIx_Get_attribute_name("pmix.job.size"), "PMIX_JOB_SIZE");
}

TEST(Attributes, UnknownInputIsReturnedUnchanged) {
    const char *foo = "NOT_AN_ATTRIBUTE";
    EXPECT_EQ(PMIx_Get_attribute_string(foo), foo);
    EXPECT_EQ(PMIx_Get_attribute_name(foo), foo);
}
