// Two test-only frameworks, known to the test's ComponentRepository and to no
// real core: "mcatest" (all usable components are selected) and "mcaone"
// (highest priority one, module required). Their module tells which component
// made it, so a test can see that code from the right DSO runs.
#pragma once

namespace pmixpp::mca::mcatest {
inline constexpr const char *kFrameworkName = "mcatest";
inline constexpr unsigned kInterfaceMajor = 1;
inline constexpr unsigned kInterfaceMinor = 2;

class Module {
  public:
    virtual ~Module() = default;
    // A value computed by a function the component defines internally.
    virtual int value() const = 0;
};
}  // namespace pmixpp::mca::mcatest

namespace pmixpp::mca::mcaone {
inline constexpr const char *kFrameworkName = "mcaone";
inline constexpr unsigned kInterfaceMajor = 1;
inline constexpr unsigned kInterfaceMinor = 0;
using Module = mcatest::Module;
}  // namespace pmixpp::mca::mcaone
