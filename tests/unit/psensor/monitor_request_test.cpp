// What a PMIx_Process_monitor request must contain (psensor/monitor_request.hpp):
// the client refuses these before sending, the server again on arrival.
#include "psensor/monitor_request.hpp"

#include <gtest/gtest.h>

#include <pmix.h>

#include <vector>

#include "pmixpp/mca/psensor.hpp"

namespace {

using pmixpp::psensor_base::check_request;
using pmixpp::psensor_base::MonitorKind;

pmix_info_t info_u32(const char *key, std::uint32_t v) {
    pmix_info_t i;
    PMIX_INFO_CONSTRUCT(&i);
    PMIX_INFO_LOAD(&i, key, &v, PMIX_UINT32);
    return i;
}

pmix_info_t info_str(const char *key, const char *v) {
    pmix_info_t i;
    PMIX_INFO_CONSTRUCT(&i);
    PMIX_INFO_LOAD(&i, key, v, PMIX_STRING);
    return i;
}

pmix_info_t bare(const char *key) {
    pmix_info_t i;
    PMIX_INFO_CONSTRUCT(&i);
    PMIX_LOAD_KEY(i.key, key);
    return i;
}

struct Infos {
    std::vector<pmix_info_t> v;
    ~Infos() {
        for (auto &i : v) PMIX_INFO_DESTRUCT(&i);
    }
};

TEST(MonitorRequest, NoMonitorIsABadParameter) {
    auto r = check_request(nullptr, {});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().code(), PMIX_ERR_BAD_PARAM);
    pmix_info_t empty;
    PMIX_INFO_CONSTRUCT(&empty);
    r = check_request(&empty, {});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_NE(r.status().message().find("no key"), std::string::npos);
}

TEST(MonitorRequest, HeartbeatMonitorNeedsAPositiveHeartbeatTime) {
    Infos m;
    m.v.push_back(bare(PMIX_MONITOR_HEARTBEAT));
    auto r = check_request(&m.v[0], {});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_NE(r.status().message().find("PMIX_MONITOR_HEARTBEAT_TIME"), std::string::npos);
    Infos d;
    d.v.push_back(info_u32(PMIX_MONITOR_HEARTBEAT_TIME, 0));
    EXPECT_FALSE(check_request(&m.v[0], d.v));
    Infos ok;
    ok.v.push_back(info_u32(PMIX_MONITOR_HEARTBEAT_TIME, 5));
    ok.v.push_back(info_u32(PMIX_MONITOR_HEARTBEAT_DROPS, 2));
    auto good = check_request(&m.v[0], ok.v);
    ASSERT_TRUE(good) << good.status().message();
    EXPECT_EQ(good.value(), MonitorKind::heartbeat);
}

TEST(MonitorRequest, FileMonitorNeedsAFile) {
    Infos m;
    m.v.push_back(info_str(PMIX_MONITOR_FILE, ""));
    EXPECT_EQ(check_request(&m.v[0], {}).status().code(), PMIX_ERR_BAD_PARAM);
    Infos changes;
    changes.v.push_back(bare(pmixpp::mca::psensor::kMonitorFileChanges));
    auto r = check_request(&changes.v[0], {});
    ASSERT_FALSE(r);
    EXPECT_NE(r.status().message().find("PMIX_MONITOR_TARGET_FILES"), std::string::npos);
    Infos target;
    target.v.push_back(info_str(pmixpp::mca::psensor::kMonitorTargetFiles, "/tmp/x"));
    auto ok = check_request(&changes.v[0], target.v);
    ASSERT_TRUE(ok) << ok.status().message();
    EXPECT_EQ(ok.value(), MonitorKind::file);
    Infos named;
    named.v.push_back(info_str(PMIX_MONITOR_FILE, "/tmp/x"));
    EXPECT_EQ(check_request(&named.v[0], {}).value(), MonitorKind::file);
}

TEST(MonitorRequest, UnknownKindIsABadParameterNamingTheKey) {
    Infos m;
    m.v.push_back(bare("pmix.monitor.bogus"));
    auto r = check_request(&m.v[0], {});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_NE(r.status().message().find("pmix.monitor.bogus"), std::string::npos);
}

TEST(MonitorRequest, NegativeDropsAreRefused) {
    Infos m;
    m.v.push_back(bare(PMIX_MONITOR_HEARTBEAT));
    Infos d;
    d.v.push_back(info_u32(PMIX_MONITOR_HEARTBEAT_TIME, 1));
    int neg = -1;
    pmix_info_t drops;
    PMIX_INFO_CONSTRUCT(&drops);
    PMIX_INFO_LOAD(&drops, PMIX_MONITOR_HEARTBEAT_DROPS, &neg, PMIX_INT);
    d.v.push_back(drops);
    EXPECT_EQ(check_request(&m.v[0], d.v).status().code(), PMIX_ERR_BAD_PARAM);
}

TEST(MonitorRequest, HeartbeatCancelAndResourceUsageAreKinds) {
    Infos m;
    m.v.push_back(bare(PMIX_SEND_HEARTBEAT));
    m.v.push_back(info_str(PMIX_MONITOR_CANCEL, "hb"));
    m.v.push_back(bare(PMIX_MONITOR_CANCEL));
    m.v.push_back(bare("pmix.monitor.presuse"));
    EXPECT_EQ(check_request(&m.v[0], {}).value(), MonitorKind::send_heartbeat);
    EXPECT_EQ(check_request(&m.v[1], {}).value(), MonitorKind::cancel);
    EXPECT_EQ(pmixpp::psensor_base::cancel_id(m.v[1]), "hb");
    EXPECT_EQ(check_request(&m.v[2], {}).value(), MonitorKind::cancel);
    EXPECT_EQ(pmixpp::psensor_base::cancel_id(m.v[2]), "");
    EXPECT_EQ(check_request(&m.v[3], {}).value(), MonitorKind::resource_usage);
}

}  // namespace
