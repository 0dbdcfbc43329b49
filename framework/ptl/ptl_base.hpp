// The ptl framework base: selects every usable transport module and orders
// server URIs for clients by module priority (framework/ptl/README.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pmixpp/mca/ptl.hpp"
#include "pmixpp/mca/repository.hpp"

namespace pmixpp::ptl_base {

class Transports {
  public:
    // The process's transports, selected on first use and shared by the
    // faces that hold the pointer; selected again after every holder let go.
    // Runs on the initializing thread. Errors: no module (message naming the
    // framework, search path and failures).
    static mca::Result<std::shared_ptr<Transports>> acquire();

    // Highest priority first.
    const std::vector<mca::ptl::Module *> &modules() const noexcept { return modules_; }
    // Component names ("ptl_usock"), same order.
    const std::vector<std::string> &names() const noexcept { return names_; }

    struct Target {
        std::string uri;
        mca::ptl::Module *module = nullptr;
    };
    // The URIs some module handles, ordered by that module's priority (stable
    // for equal priorities).
    std::vector<Target> order(const std::vector<std::string> &uris) const;

  private:
    std::vector<mca::ModuleHandle> handles_;
    std::vector<mca::ptl::Module *> modules_;
    std::vector<std::string> names_;
};

// Converts a failed selection into a Status naming the framework.
mca::Status selection_error(const mca::FrameworkSelection &selection);

}  // namespace pmixpp::ptl_base
