// A ComponentRepository over the test components of tests/mca/components only
// (never the process environment or the built-in directory), shared by the
// repository and selection-helper tests.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pmixpp/mca/repository.hpp"

namespace mcatest {

namespace mca = pmixpp::mca;

// Set by CMake: the directory the test components were built into.
inline const std::string kComponentDir = MCATEST_COMPONENT_DIR;

inline std::vector<mca::FrameworkInfo> test_frameworks() {
    return {
        {"mcatest", 1, 2, mca::SelectionPolicy::all_usable, false, "test: all usable"},
        {"mcaone", 1, 0, mca::SelectionPolicy::highest_priority_one, true,
         "test: highest priority one, module required"},
    };
}

using Env = std::map<std::string, std::string, std::less<>>;

// The repository, with `env` as its environment, `path` as its search path
// and `frameworks` as the frameworks it knows.
struct TestRepository {
    explicit TestRepository(Env env = {}, std::vector<std::string> path = {kComponentDir},
                            std::vector<mca::FrameworkInfo> frameworks = test_frameworks())
        : params([&] {
              mca::ParamSourceConfig c;
              c.environment = std::move(env);
              return c;
          }()),
          repo(params, [&] {
              mca::RepositoryOptions o;
              o.search_path = std::move(path);
              o.frameworks = std::move(frameworks);
              o.include_static = false;
              return o;
          }()) {}

    std::optional<mca::LoadFailure> failure_of(const std::string &component) {
        for (auto &f : repo.failures())
            if (f.component == component) return f;
        return std::nullopt;
    }
    static const mca::ComponentDecision *decision(const mca::FrameworkSelection &sel,
                                                  const std::string &component) {
        for (const auto &d : sel.decisions)
            if (d.component == component) return &d;
        return nullptr;
    }

    mca::ParameterRegistry params;
    mca::ComponentRepository repo;
};

}  // namespace mcatest
