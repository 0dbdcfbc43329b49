// ptl_usock and ptl_tcp as components: found and loaded by the real
// component repository, ranked by priority, filtered by PMIX_MCA_ptl, with
// their parameters registered.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ptl_test_support.hpp"

namespace {

using namespace ptltest;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> selected_names(const mca::FrameworkSelection &selection) {
    std::vector<std::string> names;
    for (const auto &s : selection.selected) names.push_back(s.record.component);
    return names;
}

const mca::ComponentDecision *decision_of(const mca::FrameworkSelection &selection,
                                          std::string_view component) {
    for (const auto &d : selection.decisions) {
        if (d.component == component) return &d;
    }
    return nullptr;
}

TEST(PtlComponents, BothTransportsLoadAndUsockComesFirst) {
    PtlRepository repository;
    const auto selection = repository.select();
    ASSERT_FALSE(selection.error) << selection.error->message;
    EXPECT_THAT(selected_names(selection), ElementsAre("usock", "tcp"));
    for (const auto &failure : repository.repository().failures("ptl")) {
        ADD_FAILURE() << failure.message;
    }

    auto usock = repository.module("usock");
    auto tcp = repository.module("tcp");
    ASSERT_TRUE(usock && tcp);
    EXPECT_GT(usock.as<ptl::Module>()->priority(), tcp.as<ptl::Module>()->priority());
    EXPECT_THAT(usock.as<ptl::Module>()->uri_schemes(), ElementsAre("usock"));
    EXPECT_THAT(tcp.as<ptl::Module>()->uri_schemes(), ElementsAre("tcp4", "tcp6"));
    EXPECT_FALSE(usock.as<ptl::Module>()->handles_uri("tcp4://127.0.0.1:4711"));
    EXPECT_FALSE(tcp.as<ptl::Module>()->handles_uri("usock:///tmp/s"));
}

TEST(PtlComponents, SelectingTcpKeepsOnlyTcp) {
    PtlRepository repository({{"ptl", "tcp"}});
    const auto selection = repository.select();
    ASSERT_FALSE(selection.error) << selection.error->message;
    EXPECT_THAT(selected_names(selection), ElementsAre("tcp"));
    const auto *usock = decision_of(selection, "usock");
    ASSERT_NE(usock, nullptr);
    EXPECT_EQ(usock->status, mca::McaStatus::excluded);
}

TEST(PtlComponents, ExcludingUsockKeepsTcp) {
    PtlRepository repository({{"ptl", "^usock"}});
    EXPECT_THAT(selected_names(repository.select()), ElementsAre("tcp"));
}

TEST(PtlComponents, PriorityParameterReordersTheModules) {
    PtlRepository repository({{"ptl_tcp_priority", "90"}});
    EXPECT_THAT(selected_names(repository.select()), ElementsAre("tcp", "usock"));
    auto tcp = repository.module("tcp");
    ASSERT_TRUE(tcp);
    EXPECT_EQ(tcp.as<ptl::Module>()->priority(), 90);
}

TEST(PtlComponents, TcpWithoutAnyFamilyIsNotAvailableOrFatalWhenRequested) {
    {
        PtlRepository repository({{"ptl_tcp_ipv4", "0"}, {"ptl_tcp_ipv6", "0"}});
        const auto selection = repository.select();
        EXPECT_THAT(selected_names(selection), ElementsAre("usock"));
        const auto *tcp = decision_of(selection, "tcp");
        ASSERT_NE(tcp, nullptr);
        EXPECT_EQ(tcp->status, mca::McaStatus::query_not_available);
    }
    {
        PtlRepository repository({{"ptl", "tcp"}, {"ptl_tcp_ipv4", "0"}, {"ptl_tcp_ipv6", "0"}});
        const auto selection = repository.select();
        ASSERT_TRUE(selection.error.has_value());
        EXPECT_EQ(selection.error->status, mca::McaStatus::query_fatal);
        EXPECT_THAT(selection.error->message, HasSubstr("neither IPv4 nor IPv6"));
    }
}

TEST(PtlComponents, ParametersAreRegisteredWithDefaults) {
    PtlRepository repository;
    (void)repository.select();
    const std::map<std::string, std::string> expected = {
        {"ptl_usock_tmpdir", ""},     {"ptl_tcp_listen", "auto"}, {"ptl_tcp_if_include", ""},
        {"ptl_tcp_port", "0"},        {"ptl_tcp_ipv4", "true"},   {"ptl_tcp_ipv6", "true"},
        {"ptl_usock_priority", "50"}, {"ptl_tcp_priority", "30"},
    };
    for (const auto &[name, value] : expected) {
        const auto info = repository.parameters().find(name);
        ASSERT_TRUE(info.has_value()) << name;
        EXPECT_EQ(info->value, value) << name;
        EXPECT_FALSE(info->spec.description.empty()) << name;
    }
}

TEST(PtlComponents, ABadPortParameterIsAQueryError) {
    PtlRepository repository({{"ptl_tcp_port", "70000"}});
    const auto selection = repository.select();
    EXPECT_THAT(selected_names(selection), ElementsAre("usock"));
    const auto *tcp = decision_of(selection, "tcp");
    ASSERT_NE(tcp, nullptr);
    EXPECT_EQ(tcp->status, mca::McaStatus::query_error);
    EXPECT_THAT(tcp->reason, HasSubstr("70000"));
}

}  // namespace
