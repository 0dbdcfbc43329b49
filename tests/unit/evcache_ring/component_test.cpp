// evcache_ring as the core sees it: found by the component repository,
// selected as the evcache framework's module, sized by evcache_ring_size.
#include "evcache_ring_support.hpp"

#include <gtest/gtest.h>

#include <string>

namespace evcache_ring_test {
namespace {

const mca::ComponentDecision *decision_for(const mca::FrameworkSelection &selection,
                                           std::string_view component) {
    for (const auto &d : selection.decisions) {
        if (d.component == component) return &d;
    }
    return nullptr;
}

TEST(EvcacheRingComponent, IsSelectedAsTheEvcacheModuleWithPriority50) {
    LoadedRing ring(std::nullopt);
    ASSERT_FALSE(ring.selection.error) << ring.selection.error->message;
    ASSERT_EQ(ring.selection.selected.size(), 1u);
    EXPECT_EQ(ring.selection.selected[0].record.component, "ring");
    EXPECT_EQ(ring.selection.selected[0].priority, 50);
    EXPECT_EQ(ring.selection.selected[0].record.version(), "1.0.0");
    ASSERT_NE(ring.module(), nullptr);
}

TEST(EvcacheRingComponent, HoldsFiveHundredTwelveEventsByDefault) {
    LoadedRing ring(std::nullopt);
    ASSERT_NE(ring.module(), nullptr);
    EXPECT_EQ(ring.module()->capacity(), 512u);
    EXPECT_EQ(ring.module()->size(), 0u);

    const auto param = ring.parameters().find("evcache_ring_size");
    ASSERT_TRUE(param) << "evcache_ring_size is registered for pmix_info";
    EXPECT_EQ(param->value, "512");
    EXPECT_EQ(param->source, mca::ParamSource::default_value);
    EXPECT_FALSE(param->spec.description.empty());
}

TEST(EvcacheRingComponent, EvcacheRingSizeSetsTheCapacity) {
    LoadedRing ring("3");
    ASSERT_NE(ring.module(), nullptr);
    EXPECT_EQ(ring.module()->capacity(), 3u);
    for (pmix_status_t code = 1; code <= 5; ++code)
        cache_ok(*ring.module(), environment_event(code));
    EXPECT_EQ(ring.module()->size(), 3u) << "never more than evcache_ring_size events";
    EXPECT_EQ(ring.parameters().find("evcache_ring_size")->source, mca::ParamSource::environment);
}

// The evcache base passes PMIx_server_init's "pmix.evcache.size" this way; the
// component must register evcache_ring_size with the same type (integer) to
// pick it up.
TEST(EvcacheRingComponent, ASizeTheHostGaveBecomesTheDefaultOfEvcacheRingSize) {
    LoadedRing ring(std::nullopt, /*host_size=*/"20");
    ASSERT_NE(ring.module(), nullptr);
    EXPECT_EQ(ring.module()->capacity(), 20u);
    EXPECT_TRUE(ring.parameters().problems().empty());
}

TEST(EvcacheRingComponent, AUserSetEvcacheRingSizeWinsOverTheSizeTheHostGave) {
    LoadedRing ring("5", /*host_size=*/"20");
    ASSERT_NE(ring.module(), nullptr);
    EXPECT_EQ(ring.module()->capacity(), 5u);
}

TEST(EvcacheRingComponent, SizeZeroMeansNoEventCacheAndNoModule) {
    LoadedRing ring("0");
    EXPECT_TRUE(ring.selection.selected.empty());
    EXPECT_FALSE(ring.selection.error) << "the server runs without a cache, it does not fail";
    const auto *d = decision_for(ring.selection, "ring");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->status, mca::McaStatus::query_not_available);
    EXPECT_NE(d->reason.find("evcache_ring_size is 0"), std::string::npos) << d->reason;
}

TEST(EvcacheRingComponent, ANegativeSizeIsAnErrorThatNamesTheParameterAndItsSource) {
    LoadedRing ring("-4");
    EXPECT_TRUE(ring.selection.selected.empty());
    const auto *d = decision_for(ring.selection, "ring");
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->status, mca::McaStatus::query_error);
    EXPECT_NE(d->reason.find("evcache_ring_size = -4"), std::string::npos) << d->reason;
    EXPECT_NE(d->reason.find("PMIX_MCA_evcache_ring_size"), std::string::npos) << d->reason;
}

}  // namespace
}  // namespace evcache_ring_test
