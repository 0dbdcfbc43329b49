// The component repository against real DSOs built for each failure mode
// (tests/mca/components): every broken component fails with its own status and
// a message naming what differs, and nothing crashes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "mcatest.hpp"
#include "mcatest_repository.hpp"
#include "pmixpp/mca/repository.hpp"

namespace mca = pmixpp::mca;
using mcatest::Env;
using mcatest::kComponentDir;
using mcatest::TestRepository;
using ::testing::HasSubstr;

namespace {

const std::string kDuplicateDir = MCATEST_DUPLICATE_DIR;

std::string path_of(const std::string &comp) {
    return kComponentDir + "/pmix_mca_mcatest_" + comp + ".so";
}

}  // namespace

// --- checks before any component code runs ---------------------------------

TEST(ComponentChecks, MissingDescriptorSymbolIsNoDescriptorSymbol) {
    TestRepository t;
    auto f = t.failure_of("nosym");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::no_descriptor_symbol);
    EXPECT_EQ(f->stage, mca::LoadStage::open);
    EXPECT_THAT(f->message, HasSubstr("pmix_mca_mcatest_nosym_component"));
    EXPECT_THAT(f->message, HasSubstr(path_of("nosym")));
}

TEST(ComponentChecks, WrongAbiVersionNamesBothVersions) {
    TestRepository t;
    auto f = t.failure_of("badabi");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::abi_version_mismatch);
    EXPECT_EQ(f->stage, mca::LoadStage::check);
    EXPECT_THAT(f->message, HasSubstr("ABI version 1 expected, file offers 99"));
    EXPECT_THAT(f->message, HasSubstr(path_of("badabi")));
}

TEST(ComponentChecks, WrongInterfaceMajorNamesBothVersions) {
    TestRepository t;
    auto f = t.failure_of("badiface");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::interface_version_mismatch);
    EXPECT_THAT(f->message, HasSubstr("component mcatest_badiface: framework interface 1.2 "
                                      "expected, file offers 2.0"));
    EXPECT_THAT(f->message, HasSubstr(path_of("badiface")));
}

TEST(ComponentChecks, InterfaceMinorNewerThanCoreIsRefused) {
    TestRepository t;
    auto f = t.failure_of("newminor");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::interface_version_mismatch);
    EXPECT_THAT(f->message, HasSubstr("file offers 1.3"));
}

TEST(ComponentChecks, InterfaceMinorOlderThanCoreIsAccepted) {
    TestRepository t;
    EXPECT_FALSE(t.failure_of("beta"));
    auto comps = t.repo.components("mcatest");
    EXPECT_TRUE(std::any_of(comps.begin(), comps.end(),
                            [](const auto &r) { return r.component == "beta"; }));
}

TEST(ComponentChecks, DescriptorComponentNameDifferentFromFileNameNamesBoth) {
    TestRepository t;
    auto f = t.failure_of("misnamed");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::component_name_mismatch);
    EXPECT_THAT(f->message,
                HasSubstr("file name says component 'misnamed', descriptor says 'other'"));
}

TEST(ComponentChecks, DescriptorFrameworkDifferentFromFileNameNamesBoth) {
    TestRepository t;
    auto f = t.failure_of("wrongfw");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::framework_name_mismatch);
    EXPECT_THAT(f->message,
                HasSubstr("file name says framework 'mcatest', descriptor says 'mcaone'"));
}

TEST(ComponentChecks, DescriptorWithoutQueryIsIncomplete) {
    TestRepository t;
    auto f = t.failure_of("noquery");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::incomplete_descriptor);
}

TEST(ComponentChecks, FileThatIsNotALibraryCannotBeOpened) {
    TestRepository t;
    auto f = t.failure_of("garbage");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::cannot_open);
    EXPECT_THAT(f->message, HasSubstr(path_of("garbage")));
}

TEST(ComponentChecks, UnknownFrameworkInFileNameIsRecordedWithoutLoading) {
    TestRepository t;
    auto f = t.failure_of("stranger");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::unknown_framework);
    EXPECT_EQ(f->stage, mca::LoadStage::scan);
    EXPECT_THAT(f->message, HasSubstr("framework 'nosuchfw'"));
}

TEST(ComponentChecks, SameComponentLaterInSearchPathIsDuplicate) {
    TestRepository t(Env{}, {kComponentDir, kDuplicateDir});
    std::optional<mca::LoadFailure> dup;
    for (auto &f : t.repo.failures())
        if (f.component == "alpha") dup = f;
    ASSERT_TRUE(dup);
    EXPECT_EQ(dup->status, mca::McaStatus::duplicate_component);
    EXPECT_THAT(dup->message, HasSubstr(path_of("alpha")));
    EXPECT_THAT(dup->message, HasSubstr(kDuplicateDir));
}

TEST(ComponentChecks, EveryFailureModeHasItsOwnStatus) {
    TestRepository t(Env{{"mcatest", "unavail,throws,queryerr,badreg"}});
    t.repo.select_components("mcatest");
    std::map<std::string, mca::McaStatus> expected = {
        {"nosym", mca::McaStatus::no_descriptor_symbol},
        {"badabi", mca::McaStatus::abi_version_mismatch},
        {"badiface", mca::McaStatus::interface_version_mismatch},
        {"misnamed", mca::McaStatus::component_name_mismatch},
        {"wrongfw", mca::McaStatus::framework_name_mismatch},
        {"garbage", mca::McaStatus::cannot_open},
        {"throws", mca::McaStatus::query_threw},
        {"queryerr", mca::McaStatus::query_error},
        {"badreg", mca::McaStatus::register_failed},
    };
    for (const auto &[comp, status] : expected) {
        auto f = t.failure_of(comp);
        ASSERT_TRUE(f) << comp;
        EXPECT_EQ(f->status, status) << comp << ": " << f->message;
    }
}

// --- running component code: query outcomes --------------------------------

TEST(ComponentQuery, NotAvailableIsSkippedSilentlyWithItsReason) {
    TestRepository t(Env{{"mcatest", "^fatal"}});
    auto sel = t.repo.select_components("mcatest");
    const auto *d = TestRepository::decision(sel, "unavail");
    ASSERT_NE(d, nullptr);
    EXPECT_FALSE(d->selected);
    EXPECT_EQ(d->status, mca::McaStatus::query_not_available);
    EXPECT_THAT(d->reason, HasSubstr("no such device on this host"));
    EXPECT_FALSE(t.failure_of("unavail"));  // not a failure: no record, no warning
    for (const auto &w : sel.warnings) EXPECT_THAT(w, ::testing::Not(HasSubstr("unavail")));
}

TEST(ComponentQuery, QueryThatThrowsIsRecordedAndOthersStillSelected) {
    TestRepository t(Env{{"mcatest", "throws,alpha"}});
    auto sel = t.repo.select_components("mcatest");
    EXPECT_FALSE(sel.error);
    auto f = t.failure_of("throws");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::query_threw);
    EXPECT_EQ(f->stage, mca::LoadStage::query);
    EXPECT_THAT(f->message, HasSubstr("boom from query"));
    ASSERT_EQ(sel.selected.size(), 1u);
    EXPECT_EQ(sel.selected[0].record.component, "alpha");
}

TEST(ComponentQuery, QueryErrorIsRecordedWithComponentMessage) {
    TestRepository t(Env{{"mcatest", "queryerr"}});
    auto sel = t.repo.select_components("mcatest");
    auto f = t.failure_of("queryerr");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::query_error);
    EXPECT_THAT(f->message, HasSubstr("configuration file is missing"));
    EXPECT_TRUE(sel.selected.empty());
}

TEST(ComponentQuery, FatalOutcomeStopsSelectionWithoutFallback) {
    TestRepository t(Env{{"mcatest", "fatal,alpha,beta"}});
    auto sel = t.repo.select_components("mcatest");
    ASSERT_TRUE(sel.error);
    EXPECT_EQ(sel.error->status, mca::McaStatus::query_fatal);
    EXPECT_THAT(sel.error->message, HasSubstr("mcatest_fatal"));
    EXPECT_THAT(sel.error->message, HasSubstr("the requested device is unusable"));
    EXPECT_TRUE(sel.selected.empty());
    auto f = t.failure_of("fatal");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::query_fatal);
}

TEST(ComponentQuery, RegisterParamsFailureIsRecorded) {
    TestRepository t(Env{{"mcatest", "badreg"}});
    auto sel = t.repo.select_components("mcatest");
    auto f = t.failure_of("badreg");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->status, mca::McaStatus::register_failed);
    EXPECT_THAT(f->message, HasSubstr("register_params returned 5"));
}

TEST(ComponentQuery, CreateReturningNothingIsCreateFailed) {
    TestRepository t(Env{{"mcatest", "nocreate"}});
    auto sel = t.repo.select_components("mcatest");
    ASSERT_EQ(sel.selected.size(), 1u);
    auto m = t.repo.create_module(sel.selected[0]);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().status, mca::McaStatus::create_failed);
    EXPECT_THAT(m.error().message, HasSubstr("mcatest_nocreate"));
    auto f = t.failure_of("nocreate");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->stage, mca::LoadStage::create);
}

// --- selection ---------------------------------------------------------------

TEST(ComponentSelection, AllUsablePolicySelectsEveryUsableByPriority) {
    TestRepository t(Env{{"mcatest", "alpha,beta,unavail"}});
    auto sel = t.repo.select_components("mcatest");
    EXPECT_FALSE(sel.error);
    ASSERT_EQ(sel.selected.size(), 2u);
    EXPECT_EQ(sel.selected[0].record.component, "alpha");  // 30
    EXPECT_EQ(sel.selected[1].record.component, "beta");   // 20
}

TEST(ComponentSelection, IncludeListKeepsOnlyNamedComponents) {
    TestRepository t(Env{{"mcatest", "beta"}});
    auto sel = t.repo.select_components("mcatest");
    ASSERT_EQ(sel.selected.size(), 1u);
    EXPECT_EQ(sel.selected[0].record.component, "beta");
    const auto *alpha = TestRepository::decision(sel, "alpha");
    ASSERT_NE(alpha, nullptr);
    EXPECT_EQ(alpha->status, mca::McaStatus::excluded);
    EXPECT_THAT(alpha->reason, HasSubstr("not listed in mcatest=beta"));
}

TEST(ComponentSelection, ExcludeListDropsNamedComponents) {
    TestRepository t(Env{{"mcatest", "^alpha,fatal,throws,queryerr,badreg,nocreate"}});
    auto sel = t.repo.select_components("mcatest");
    EXPECT_FALSE(sel.error);
    ASSERT_EQ(sel.selected.size(), 1u);
    EXPECT_EQ(sel.selected[0].record.component, "beta");
    EXPECT_THAT(TestRepository::decision(sel, "alpha")->reason, HasSubstr("excluded by"));
}

TEST(ComponentSelection, MisplacedCaretIsAnErrorNamingIt) {
    TestRepository t(Env{{"mcatest", "alpha,^beta"}});
    auto sel = t.repo.select_components("mcatest");
    ASSERT_TRUE(sel.error);
    EXPECT_EQ(sel.error->status, mca::McaStatus::bad_selection);
    EXPECT_THAT(sel.error->message, HasSubstr("^beta"));
    EXPECT_THAT(sel.error->message, HasSubstr("PMIX_MCA_mcatest"));
    EXPECT_TRUE(sel.selected.empty());
}

TEST(ComponentSelection, RequestedNonexistentComponentWarnsNamingIt) {
    TestRepository t(Env{{"mcatest", "alpha,doesnotexist"}});
    auto sel = t.repo.select_components("mcatest");
    ASSERT_EQ(sel.warnings.size(), 1u);
    EXPECT_THAT(sel.warnings[0], HasSubstr("mcatest_doesnotexist"));
    EXPECT_THAT(sel.warnings[0], HasSubstr("does not exist"));
    EXPECT_THAT(sel.warnings[0], HasSubstr(kComponentDir));
}

TEST(ComponentSelection, RequestedBrokenComponentWarnsWithItsFailure) {
    TestRepository t(Env{{"mcatest", "alpha,badabi"}});
    auto sel = t.repo.select_components("mcatest");
    ASSERT_EQ(sel.warnings.size(), 1u);
    EXPECT_THAT(sel.warnings[0], HasSubstr("mcatest_badabi was requested"));
    EXPECT_THAT(sel.warnings[0], HasSubstr("file offers 99"));
}

TEST(ComponentSelection, RequestedComponentNotAvailableWarns) {
    TestRepository t(Env{{"mcatest", "unavail"}});
    auto sel = t.repo.select_components("mcatest");
    ASSERT_EQ(sel.warnings.size(), 1u);
    EXPECT_THAT(sel.warnings[0], HasSubstr("mcatest_unavail was requested but is not available"));
}

TEST(ComponentSelection, HighestPriorityPolicySelectsOnlyTheBest) {
    TestRepository t;
    auto sel = t.repo.select_components("mcaone");
    EXPECT_FALSE(sel.error);
    ASSERT_EQ(sel.selected.size(), 1u);
    EXPECT_EQ(sel.selected[0].record.component, "high");
    const auto *low = TestRepository::decision(sel, "low");
    ASSERT_NE(low, nullptr);
    EXPECT_EQ(low->status, mca::McaStatus::not_selected);
    EXPECT_THAT(low->reason, HasSubstr("mcaone_high has higher priority (50 > 10)"));
}

TEST(ComponentSelection, PriorityParameterOverridesDefaultPriority) {
    TestRepository t(Env{{"mcaone_low_priority", "99"}});
    auto sel = t.repo.select_components("mcaone");
    ASSERT_EQ(sel.selected.size(), 1u);
    EXPECT_EQ(sel.selected[0].record.component, "low");
    EXPECT_EQ(sel.selected[0].priority, 99);
    EXPECT_EQ(TestRepository::decision(sel, "low")->default_priority, 10);
}

TEST(ComponentSelection, RequiredFrameworkWithoutModuleFailsNamingFrameworkAndPath) {
    TestRepository t(Env{{"mcaone", "^high,low"}});
    auto sel = t.repo.select_components("mcaone");
    ASSERT_TRUE(sel.error);
    EXPECT_EQ(sel.error->status, mca::McaStatus::no_module);
    EXPECT_THAT(sel.error->message, HasSubstr("framework mcaone"));
    EXPECT_THAT(sel.error->message, HasSubstr(kComponentDir));
    EXPECT_THAT(sel.error->message, HasSubstr("mcaone_high: excluded by"));
}

TEST(ComponentSelection, ComponentParametersAreRegisteredWithPrefix) {
    TestRepository t(Env{{"mcatest", "alpha"}, {"mcatest_alpha_answer", "7"}});
    t.repo.select_components("mcatest");
    auto p = t.params.find("mcatest_alpha_answer");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->int_value, 7);
    EXPECT_EQ(p->source, mca::ParamSource::environment);
    EXPECT_TRUE(t.params.find("mcatest_alpha_priority"));
}

// --- modules and DSO lifetime ------------------------------------------------

TEST(ComponentModules, SameNamedInternalFunctionsResolveInsideTheirOwnComponent) {
    TestRepository t(Env{{"mcatest", "alpha,beta"}});
    auto sel = t.repo.select_components("mcatest");
    ASSERT_EQ(sel.selected.size(), 2u);
    auto a = t.repo.create_module(sel.selected[0]);
    auto b = t.repo.create_module(sel.selected[1]);
    ASSERT_TRUE(a) << a.error().message;
    ASSERT_TRUE(b) << b.error().message;
    EXPECT_EQ(a.value().as<mca::mcatest::Module>()->value(), 1);
    EXPECT_EQ(b.value().as<mca::mcatest::Module>()->value(), 2);
    EXPECT_EQ(a.value().component(), "mcatest_alpha");
}

TEST(ComponentModules, ModuleKeepsItsLibraryLoadedAfterRepositoryIsGone) {
    std::optional<mca::ModuleHandle> module;
    {
        TestRepository t(Env{{"mcatest", "beta"}});
        auto sel = t.repo.select_components("mcatest");
        ASSERT_EQ(sel.selected.size(), 1u);
        auto m = t.repo.create_module(sel.selected[0]);
        ASSERT_TRUE(m);
        module.emplace(std::move(m).value());
    }
    // The repository (and its own reference to the DSO) is gone; the module's
    // code must still be mapped.
    EXPECT_EQ(module->as<mca::mcatest::Module>()->value(), 2);
    module.reset();  // destroy_module runs before the DSO is released
}

TEST(ComponentModules, NothingIsFoundInAnEmptyOrMissingDirectory) {
    TestRepository t(Env{}, {kComponentDir + "/does-not-exist"});
    EXPECT_TRUE(t.repo.components("mcatest").empty());
    EXPECT_TRUE(t.repo.failures().empty());
    auto sel = t.repo.select_components("mcaone");
    ASSERT_TRUE(sel.error);
    EXPECT_THAT(sel.error->message, HasSubstr("no component found"));
}

// Selecting one framework opens only that framework's files: a client does not
// pay at PMIx_Init for the DSOs of frameworks it does not use.
TEST(ComponentModules, SelectingAFrameworkOpensOnlyItsOwnFiles) {
    const std::string alpha = path_of("alpha");
    const std::string high = kComponentDir + "/pmix_mca_mcaone_high.so";
    auto loaded = [](const std::string &path) {
        void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
        if (h != nullptr) dlclose(h);
        return h != nullptr;
    };
    if (loaded(alpha) || loaded(high))
        GTEST_SKIP() << "an earlier test in this process loaded them";
    TestRepository t;
    auto sel = t.repo.select_components("mcaone");
    ASSERT_FALSE(sel.error);
    EXPECT_TRUE(loaded(high));
    EXPECT_FALSE(loaded(alpha)) << "selecting mcaone opened a file of framework mcatest";
    // The other framework is scanned when asked for, and the full list of
    // failures still covers every file, those of unknown frameworks too.
    EXPECT_FALSE(t.repo.components("mcatest").empty());
    EXPECT_TRUE(loaded(alpha));
    EXPECT_TRUE(t.failure_of("stranger"));
    EXPECT_TRUE(t.failure_of("garbage"));
}

// --- search path ---------------------------------------------------------------

TEST(ComponentSearchPath, ComponentPathParameterReplacesBuiltinDirectory) {
    mca::ParamSourceConfig c;
    c.environment["mca_base_component_path"] = "/a:/b";
    mca::ParameterRegistry params(c);
    auto path = mca::ComponentRepository::default_search_path(params);
    EXPECT_EQ(path, (std::vector<std::string>{"/a", "/b"}));
}

TEST(ComponentSearchPath, DefaultTokenStandsForBuiltinDirectory) {
    mca::ParamSourceConfig c;
    c.environment["mca_base_component_path"] = "/a:@default@";
    mca::ParameterRegistry params(c);
    auto path = mca::ComponentRepository::default_search_path(params);
    ASSERT_EQ(path.size(), 2u);
    EXPECT_EQ(path[1], mca::ComponentRepository::builtin_component_dir());
}

TEST(ComponentSearchPath, BuiltinDirectoryIsPmixNextToLibpmix) {
    // The library's real directory: the build path may pass through a link.
    const std::string dir = mca::ComponentRepository::builtin_component_dir();
    EXPECT_EQ(dir, std::filesystem::weakly_canonical(PMIXPP_BUILD_COMPONENT_DIR).string());
}
