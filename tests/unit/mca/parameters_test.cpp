// Parameter sources and their precedence, value checking, and the process
// environment. Tests build their own ParameterRegistry from an explicit
// ParamSourceConfig; the two that read the real environment restore it.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <unistd.h>
#include <string>

#include "pmixpp/mca/parameters.hpp"

namespace mca = pmixpp::mca;
using ::testing::HasSubstr;

namespace {

// A file in a fresh temporary directory, removed at the end of the test.
class TempFiles {
  public:
    TempFiles() {
        dir_ = std::filesystem::temp_directory_path() /
               ("pmixpp-params-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    ~TempFiles() { std::filesystem::remove_all(dir_); }
    std::string write(const std::string &name, const std::string &content) {
        const auto p = dir_ / name;
        std::ofstream(p) << content;
        return p.string();
    }

  private:
    std::filesystem::path dir_;
};

// Sets an environment variable for one test and restores the old value.
class ScopedEnv {
  public:
    // value nullptr: unset for the test.
    ScopedEnv(const char *name, const char *value) : name_(name) {
        if (const char *old = std::getenv(name)) old_ = old;
        if (value != nullptr)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_)
            ::setenv(name_.c_str(), old_->c_str(), 1);
        else
            ::unsetenv(name_.c_str());
    }

  private:
    std::string name_;
    std::optional<std::string> old_;
};

mca::ParamSpec int_param(const std::string &name, const std::string &def = "5") {
    return {name, "ptl", "tcp", mca::ParamType::integer, "a test parameter", def, {}};
}

}  // namespace

TEST(ParameterSources, DefaultWhenNoSourceSetsIt) {
    mca::ParameterRegistry reg(mca::ParamSourceConfig{});
    auto p = reg.register_param(int_param("ptl_tcp_port", "5000"));
    ASSERT_TRUE(p);
    EXPECT_EQ(p.value().int_value, 5000);
    EXPECT_EQ(p.value().source, mca::ParamSource::default_value);
    EXPECT_EQ(p.value().source_detail, "default");
}

TEST(ParameterSources, ParamFileBeatsDefault) {
    TempFiles files;
    mca::ParamSourceConfig c;
    c.param_files = {files.write("a.conf", "# comment\n\nptl_tcp_port = 6000\n")};
    mca::ParameterRegistry reg(c);
    auto p = reg.register_param(int_param("ptl_tcp_port"));
    ASSERT_TRUE(p);
    EXPECT_EQ(p.value().int_value, 6000);
    EXPECT_EQ(p.value().source, mca::ParamSource::param_file);
    EXPECT_EQ(p.value().source_detail, c.param_files[0] + ":3");
}

TEST(ParameterSources, EnvironmentBeatsParamFile) {
    TempFiles files;
    mca::ParamSourceConfig c;
    c.param_files = {files.write("a.conf", "ptl_tcp_port = 6000\n")};
    c.environment["ptl_tcp_port"] = "7000";
    mca::ParameterRegistry reg(c);
    auto p = reg.register_param(int_param("ptl_tcp_port"));
    ASSERT_TRUE(p);
    EXPECT_EQ(p.value().int_value, 7000);
    EXPECT_EQ(p.value().source, mca::ParamSource::environment);
    EXPECT_EQ(p.value().source_detail, "PMIX_MCA_ptl_tcp_port");
}

TEST(ParameterSources, OverrideFileBeatsEnvironment) {
    TempFiles files;
    mca::ParamSourceConfig c;
    c.environment["ptl_tcp_port"] = "7000";
    c.override_file = files.write("override.conf", "ptl_tcp_port = 8000\n");
    mca::ParameterRegistry reg(c);
    auto p = reg.register_param(int_param("ptl_tcp_port"));
    ASSERT_TRUE(p);
    EXPECT_EQ(p.value().int_value, 8000);
    EXPECT_EQ(p.value().source, mca::ParamSource::override_file);
}

TEST(ParameterSources, FirstListedParamFileWins) {
    TempFiles files;
    mca::ParamSourceConfig c;
    c.param_files = {files.write("user.conf", "ptl_tcp_port = 1\n"),
                     files.write("site.conf", "ptl_tcp_port = 2\nptl_tcp_other = 3\n")};
    mca::ParameterRegistry reg(c);
    EXPECT_EQ(reg.register_param(int_param("ptl_tcp_port")).value().int_value, 1);
    EXPECT_EQ(reg.register_param(int_param("ptl_tcp_other")).value().int_value, 3);
}

TEST(ParameterSources, MissingParamFileIsSkippedSilently) {
    mca::ParamSourceConfig c;
    c.param_files = {"/nonexistent/pmix-mca-params.conf"};
    mca::ParameterRegistry reg(c);
    EXPECT_TRUE(reg.register_param(int_param("ptl_tcp_port")));
    EXPECT_TRUE(reg.problems().empty());
}

TEST(ParameterSources, MalformedFileLineIsReportedWithFileAndLine) {
    TempFiles files;
    mca::ParamSourceConfig c;
    c.param_files = {files.write("bad.conf", "ptl_tcp_port = 1\nthis line has no equals\n")};
    mca::ParameterRegistry reg(c);
    ASSERT_EQ(reg.problems().size(), 1u);
    EXPECT_EQ(reg.problems()[0].status, mca::McaStatus::bad_param_file_line);
    EXPECT_THAT(reg.problems()[0].message, HasSubstr(c.param_files[0] + ":2"));
    EXPECT_EQ(reg.register_param(int_param("ptl_tcp_port")).value().int_value, 1);
}

TEST(ParameterValues, NonIntegerIsRejectedNamingParameterValueAndSource) {
    TempFiles files;
    mca::ParamSourceConfig c;
    c.param_files = {files.write("a.conf", "ptl_tcp_port = 6000\n")};
    c.environment["ptl_tcp_port"] = "abc";
    mca::ParameterRegistry reg(c);
    auto p = reg.register_param(int_param("ptl_tcp_port"));
    ASSERT_TRUE(p);
    // The rejected value does not hide the next source.
    EXPECT_EQ(p.value().int_value, 6000);
    EXPECT_EQ(p.value().source, mca::ParamSource::param_file);
    ASSERT_EQ(reg.problems().size(), 1u);
    EXPECT_EQ(reg.problems()[0].status, mca::McaStatus::bad_parameter_value);
    EXPECT_THAT(reg.problems()[0].message, HasSubstr("ptl_tcp_port"));
    EXPECT_THAT(reg.problems()[0].message, HasSubstr("'abc'"));
    EXPECT_THAT(reg.problems()[0].message, HasSubstr("environment (PMIX_MCA_ptl_tcp_port)"));
    EXPECT_THAT(reg.problems()[0].message, HasSubstr("not an integer"));
}

TEST(ParameterValues, BadDefaultIsAnError) {
    mca::ParameterRegistry reg(mca::ParamSourceConfig{});
    auto p = reg.register_param(int_param("ptl_tcp_port", "twelve"));
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().status, mca::McaStatus::bad_parameter_value);
    EXPECT_THAT(p.error().message, HasSubstr("'twelve'"));
}

TEST(ParameterValues, BooleanAcceptsCommonSpellingsAndRejectsOthers) {
    mca::ParamSourceConfig c;
    c.environment = {{"x_a_on", "Yes"}, {"x_a_off", "off"}, {"x_a_bad", "maybe"}};
    mca::ParameterRegistry reg(c);
    auto spec = [](std::string n) {
        return mca::ParamSpec{n, "x", "a", mca::ParamType::boolean, "", "false", {}};
    };
    EXPECT_EQ(reg.register_param(spec("x_a_on")).value().value, "true");
    EXPECT_EQ(reg.register_param(spec("x_a_off")).value().value, "false");
    auto bad = reg.register_param(spec("x_a_bad"));
    EXPECT_EQ(bad.value().source, mca::ParamSource::default_value);
    ASSERT_EQ(reg.problems().size(), 1u);
    EXPECT_THAT(reg.problems()[0].message, HasSubstr("'maybe'"));
}

TEST(ParameterValues, SizeAcceptsBinarySuffixes) {
    mca::ParamSourceConfig c;
    c.environment = {{"x_a_max", "4k"}, {"x_a_big", "2M"}, {"x_a_bad", "12q"}};
    mca::ParameterRegistry reg(c);
    auto spec = [](std::string n) {
        return mca::ParamSpec{n, "x", "a", mca::ParamType::size, "", "0", {}};
    };
    EXPECT_EQ(reg.register_param(spec("x_a_max")).value().size_value, 4096u);
    EXPECT_EQ(reg.register_param(spec("x_a_big")).value().size_value, 2u << 20);
    EXPECT_EQ(reg.register_param(spec("x_a_bad")).value().size_value, 0u);
    EXPECT_EQ(reg.problems().size(), 1u);
}

TEST(ParameterValues, EnumerationAcceptsOnlyItsChoices) {
    mca::ParamSourceConfig c;
    c.environment = {{"x_a_mode", "fast"}};
    mca::ParameterRegistry reg(c);
    auto p = reg.register_param(
        {"x_a_mode", "x", "a", mca::ParamType::enumeration, "", "safe", {"safe", "quick"}});
    EXPECT_EQ(p.value().value, "safe");
    ASSERT_EQ(reg.problems().size(), 1u);
    EXPECT_THAT(reg.problems()[0].message, HasSubstr("is not one of: safe, quick"));
}

TEST(ParameterRegistration, SameNameDifferentTypeIsAConflict) {
    mca::ParameterRegistry reg(mca::ParamSourceConfig{});
    ASSERT_TRUE(reg.register_param(int_param("ptl_tcp_port")));
    auto again =
        reg.register_param({"ptl_tcp_port", "ptl", "tcp", mca::ParamType::string, "", "x", {}});
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().status, mca::McaStatus::parameter_type_conflict);
}

TEST(ParameterRegistration, ComponentParametersArePrefixedWithFrameworkAndComponent) {
    mca::ParamSourceConfig c;
    c.environment["ptl_tcp_port"] = "9";
    mca::ParameterRegistry reg(c);
    mca::ComponentParameters params(reg, "ptl", "tcp");
    EXPECT_EQ(params.add_int("port", "listening port", 0), 9);
    EXPECT_EQ(params.add_string("iface", "interface", "lo"), "lo");
    EXPECT_TRUE(params.add_bool("ipv6", "use IPv6", true));
    ASSERT_TRUE(reg.find("ptl_tcp_iface"));
    EXPECT_EQ(params.get("port")->source, mca::ParamSource::environment);
    // The C handle round-trips to the same object.
    EXPECT_EQ(&mca::ComponentParameters::from(params.handle()), &params);
}

TEST(ParameterRegistration, RawValueOfUnregisteredNameFollowsSamePrecedence) {
    TempFiles files;
    mca::ParamSourceConfig c;
    c.param_files = {files.write("a.conf", "ptl_tcp_port = 6000\nptl_tcp_only_file = 1\n")};
    c.environment["ptl_tcp_port"] = "7000";
    mca::ParameterRegistry reg(c);
    auto port = reg.raw_value("ptl_tcp_port");
    ASSERT_TRUE(port);
    EXPECT_EQ(port->value, "7000");
    EXPECT_EQ(port->source, mca::ParamSource::environment);
    EXPECT_EQ(reg.raw_value("ptl_tcp_only_file")->source, mca::ParamSource::param_file);
    EXPECT_FALSE(reg.raw_value("ptl_tcp_unset"));
}

TEST(ParameterRegistration, FrameworkWideNamesUseBase) {
    EXPECT_EQ(mca::param_name("ptl", "base", "verbose"), "ptl_base_verbose");
    EXPECT_EQ(mca::param_name("ptl", "", ""), "ptl");
}

TEST(ProcessParameterSources, EnvironmentPrefixIsStripped) {
    ScopedEnv env("PMIX_MCA_ptl_tcp_port", "4242");
    auto c = mca::ParamSourceConfig::from_process();
    ASSERT_EQ(c.environment.count("ptl_tcp_port"), 1u);
    EXPECT_EQ(c.environment.at("ptl_tcp_port"), "4242");
}

TEST(ProcessParameterSources, ParamFilesVariableReplacesDefaultFiles) {
    ScopedEnv env("PMIX_MCA_mca_base_param_files", "/x/one.conf:/x/two.conf");
    ScopedEnv over("PMIX_MCA_mca_base_param_file_override", "/x/override.conf");
    auto c = mca::ParamSourceConfig::from_process();
    EXPECT_EQ(c.param_files, (std::vector<std::string>{"/x/one.conf", "/x/two.conf"}));
    EXPECT_EQ(c.override_file, "/x/override.conf");
}

TEST(ProcessParameterSources, DefaultFilesAreUserThenSite) {
    ScopedEnv files("PMIX_MCA_mca_base_param_files", nullptr);
    ScopedEnv home("HOME", "/home/tester");
    auto c = mca::ParamSourceConfig::from_process();
    ASSERT_EQ(c.param_files.size(), 2u);
    EXPECT_EQ(c.param_files[0], "/home/tester/.pmix/mca-params.conf");
    EXPECT_THAT(c.param_files[1], HasSubstr("pmix-mca-params.conf"));
}
