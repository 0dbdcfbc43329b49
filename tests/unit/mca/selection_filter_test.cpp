// PMIX_MCA_<fw>=a,b / ^a,b.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include "pmixpp/mca/selection.hpp"

namespace mca = pmixpp::mca;
using ::testing::HasSubstr;

TEST(SelectionFilter, EmptyValueAdmitsEverything) {
    auto f = mca::parse_selection("ptl", "", "environment PMIX_MCA_ptl");
    ASSERT_TRUE(f);
    EXPECT_TRUE(f.value().admits("usock"));
    EXPECT_FALSE(f.value().requests("usock"));
}

TEST(SelectionFilter, ListKeepsOnlyNamedComponents) {
    auto f = mca::parse_selection("ptl", " usock , tcp ", "environment PMIX_MCA_ptl");
    ASSERT_TRUE(f);
    EXPECT_TRUE(f.value().admits("usock"));
    EXPECT_TRUE(f.value().admits("tcp"));
    EXPECT_FALSE(f.value().admits("shm"));
    EXPECT_TRUE(f.value().requests("tcp"));
}

TEST(SelectionFilter, LeadingCaretExcludesNamedComponents) {
    auto f = mca::parse_selection("ptl", "^usock,tcp", "environment PMIX_MCA_ptl");
    ASSERT_TRUE(f);
    EXPECT_FALSE(f.value().admits("usock"));
    EXPECT_FALSE(f.value().admits("tcp"));
    EXPECT_TRUE(f.value().admits("shm"));
    EXPECT_FALSE(f.value().requests("shm"));
}

TEST(SelectionFilter, CaretAnywhereButFirstIsAnErrorNamingIt) {
    auto f = mca::parse_selection("ptl", "usock,^tcp", "environment PMIX_MCA_ptl");
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error().status, mca::McaStatus::bad_selection);
    EXPECT_THAT(f.error().message, HasSubstr("'^tcp'"));
    EXPECT_THAT(f.error().message, HasSubstr("ptl=usock,^tcp"));
    EXPECT_THAT(f.error().message, HasSubstr("environment PMIX_MCA_ptl"));
}

TEST(SelectionFilter, SecondCaretAfterLeadingOneIsAnError) {
    auto f = mca::parse_selection("gds", "^hash,^ds12", "file /etc/pmix-mca-params.conf:3");
    ASSERT_FALSE(f);
    EXPECT_THAT(f.error().message, HasSubstr("'^ds12'"));
}
