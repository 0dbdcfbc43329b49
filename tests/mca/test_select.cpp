// select_one<M> / select_all<M> (framework/mca/select.hpp) against the real
// test components of tests/mca/components: priority order, the user's
// include/exclude lists, a component whose module cannot be created recorded
// and the next one taken, and nothing left as a no_module error. Also the bases
// of psensor, plog and pnet, which have no component yet.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "mca/select.hpp"
#include "mcatest.hpp"
#include "mcatest_repository.hpp"
#include "plog/plog_base.hpp"
#include "pnet/pnet_base.hpp"
#include "psensor/psensor_base.hpp"

namespace mca = pmixpp::mca;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

using mcatest::Env;
using mcatest::TestRepository;
using Module = mca::mcatest::Module;

// The test frameworks, mcatest under `policy`.
std::vector<mca::FrameworkInfo> frameworks(mca::SelectionPolicy policy) {
    auto all = mcatest::test_frameworks();
    all.front().policy = policy;
    return all;
}

// A repository over the test components; mcatest under `policy`.
TestRepository repository(Env env, mca::SelectionPolicy policy = mca::SelectionPolicy::all_usable) {
    return TestRepository(std::move(env), {mcatest::kComponentDir}, frameworks(policy));
}

bool failed_at_create(TestRepository &t, const std::string &component) {
    auto f = t.failure_of(component);
    return f && f->stage == mca::LoadStage::create;
}

std::vector<std::string> names(const std::vector<mca::SelectedModule<Module>> &modules) {
    std::vector<std::string> out;
    for (const auto &m : modules) out.push_back(m.component);
    return out;
}

// The test failure modes that the user must exclude to see only alpha and beta.
constexpr const char *kBroken = "fatal,throws,queryerr,badreg,nocreate";

TEST(SelectAll, ModulesComeInPriorityOrderAndRunTheirComponentsCode) {
    auto t = repository({{"mcatest", "alpha,beta"}});
    auto modules = mca::select_all<Module>(t.repo, "mcatest");
    ASSERT_TRUE(modules) << modules.error().message;
    EXPECT_THAT(names(modules.value()), ElementsAre("alpha", "beta"));  // 30, 20
    EXPECT_EQ(modules.value()[0].priority, 30);
    EXPECT_EQ(modules.value()[0].module->value(), 1);  // alpha_internal.cpp
    EXPECT_EQ(modules.value()[0].handle.component(), "mcatest_alpha");
}

TEST(SelectAll, PriorityParameterReordersTheModules) {
    auto t = repository({{"mcatest", "alpha,beta"}, {"mcatest_beta_priority", "99"}});
    auto modules = mca::select_all<Module>(t.repo, "mcatest");
    ASSERT_TRUE(modules) << modules.error().message;
    EXPECT_THAT(names(modules.value()), ElementsAre("beta", "alpha"));
    EXPECT_EQ(modules.value()[0].priority, 99);
}

TEST(SelectAll, IncludeListKeepsOnlyTheNamedAndMarksThemRequested) {
    auto t = repository({{"mcatest", "beta"}});
    auto modules = mca::select_all<Module>(t.repo, "mcatest");
    ASSERT_TRUE(modules) << modules.error().message;
    EXPECT_THAT(names(modules.value()), ElementsAre("beta"));
    EXPECT_TRUE(modules.value()[0].explicitly_requested);
}

TEST(SelectAll, ExcludeListDropsTheNamedAndRequestsNone) {
    auto t = repository({{"mcatest", std::string("^alpha,") + kBroken}});
    auto modules = mca::select_all<Module>(t.repo, "mcatest");
    ASSERT_TRUE(modules) << modules.error().message;
    EXPECT_THAT(names(modules.value()), ElementsAre("beta"));
    EXPECT_FALSE(modules.value()[0].explicitly_requested);
}

TEST(SelectAll, ComponentWhoseCreateFailsIsRecordedAndLeftOut) {
    auto t = repository({{"mcatest", "alpha,nocreate"}, {"mcatest_nocreate_priority", "99"}});
    auto modules = mca::select_all<Module>(t.repo, "mcatest");
    ASSERT_TRUE(modules) << modules.error().message;
    EXPECT_THAT(names(modules.value()), ElementsAre("alpha"));
    EXPECT_TRUE(failed_at_create(t, "nocreate"));
}

TEST(SelectAll, NothingCreatedIsNoModuleNamingTheFailure) {
    auto t = repository({{"mcatest", "nocreate"}});
    auto modules = mca::select_all<Module>(t.repo, "mcatest");
    ASSERT_FALSE(modules);
    EXPECT_EQ(modules.error().status, mca::McaStatus::no_module);
    EXPECT_THAT(modules.error().message, HasSubstr("framework mcatest: no component left"));
    EXPECT_THAT(modules.error().message, HasSubstr("mcatest_nocreate: create_module returned no"));
}

TEST(SelectAll, SelectionErrorsComeBackAsTheyAre) {
    auto t = repository({{"mcatest", "alpha,^beta"}});
    auto modules = mca::select_all<Module>(t.repo, "mcatest");
    ASSERT_FALSE(modules);
    EXPECT_EQ(modules.error().status, mca::McaStatus::bad_selection);
    EXPECT_THAT(modules.error().message, HasSubstr("^beta"));
}

TEST(SelectOne, TakesTheHighestPriority) {
    auto t = repository({{"mcatest", "alpha,beta"}}, mca::SelectionPolicy::highest_priority_one);
    auto one = mca::select_one<Module>(t.repo, "mcatest");
    ASSERT_TRUE(one) << one.error().message;
    EXPECT_EQ(one.value().component, "alpha");
    EXPECT_EQ(one.value().module->value(), 1);
}

TEST(SelectOne, ExcludeListLeavesTheNextHighest) {
    auto t = repository({{"mcatest", std::string("^alpha,") + kBroken}},
                        mca::SelectionPolicy::highest_priority_one);
    auto one = mca::select_one<Module>(t.repo, "mcatest");
    ASSERT_TRUE(one) << one.error().message;
    EXPECT_EQ(one.value().component, "beta");
}

TEST(SelectOne, ComponentWhoseCreateFailsIsRecordedAndTheNextOneTaken) {
    auto t = repository({{"mcatest", "alpha,beta,nocreate"}, {"mcatest_nocreate_priority", "99"}},
                        mca::SelectionPolicy::highest_priority_one);
    auto one = mca::select_one<Module>(t.repo, "mcatest");
    ASSERT_TRUE(one) << one.error().message;
    EXPECT_EQ(one.value().component, "alpha");
    EXPECT_TRUE(failed_at_create(t, "nocreate"));
}

TEST(SelectOne, NoneLeftIsNoModuleWithEveryReason) {
    auto t =
        repository({{"mcatest", "nocreate,unavail"}}, mca::SelectionPolicy::highest_priority_one);
    auto one = mca::select_one<Module>(t.repo, "mcatest");
    ASSERT_FALSE(one);
    EXPECT_EQ(one.error().status, mca::McaStatus::no_module);
    EXPECT_THAT(one.error().message, HasSubstr("mcatest_unavail: not available here"));
    EXPECT_THAT(one.error().message, HasSubstr("mcatest_nocreate"));
    EXPECT_THAT(one.error().message, HasSubstr(mcatest::kComponentDir));
}

TEST(SelectOne, FrameworkErrorIsNotAvailableForTheCApi) {
    const mca::Status status = mca::to_status({mca::McaStatus::no_module, "framework x: none"});
    EXPECT_EQ(status.code(), PMIX_ERR_NOT_AVAILABLE);
    EXPECT_EQ(status.message(), "framework x: none");
}

// --- the bases of the frameworks without components --------------------------------

struct EmptyDir {
    EmptyDir() {
        char tmpl[] = "/tmp/pmixpp-select-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~EmptyDir() { std::filesystem::remove_all(path); }
    std::string path;
};

template <class Open>
void expect_no_component(const char *framework, Open open) {
    EmptyDir dir;
    TestRepository t({}, {dir.path}, mca::builtin_frameworks());
    auto opened = open(t.repo);
    ASSERT_FALSE(opened) << framework;
    EXPECT_EQ(opened.error().status, mca::McaStatus::no_module);
    EXPECT_EQ(opened.error().message, std::string("framework ") + framework +
                                          ": no component found; search path: " + dir.path);
}

TEST(EmptyFrameworkBases, OpeningWithoutAnyComponentIsNoComponentFound) {
    expect_no_component("psensor", pmixpp::psensor_base::open);
    expect_no_component("plog", pmixpp::plog_base::open);
    expect_no_component("pnet", pmixpp::pnet_base::open);
}

}  // namespace
