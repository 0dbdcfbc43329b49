// The ptl framework base: every usable transport module, ordered by module
// priority; which of them local clients depend on; server URIs ordered for
// clients (framework/ptl/README.md).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "mca/select.hpp"
#include "pmixpp/mca/ptl.hpp"

namespace pmixpp::ptl_base {

class Transports {
  public:
    // The process's transports, selected on first use and shared by the
    // faces that hold the pointer; selected again after every holder let go.
    // Runs on the initializing thread. Errors: no module (message naming the
    // framework, search path and failures).
    static mca::Result<std::shared_ptr<Transports>> acquire();
    // Selects the transports of `repo` (acquire() uses the process-wide one).
    static mca::Result<std::shared_ptr<Transports>> open(mca::ComponentRepository &repo);

    // Highest priority first.
    const std::vector<mca::ptl::Module *> &modules() const noexcept { return modules_; }
    // Component names ("ptl_usock"), same order.
    const std::vector<std::string> &names() const noexcept { return names_; }

    // Whether the server's local clients depend on `module`: the user named
    // it in PMIX_MCA_ptl, or it is the highest-priority transport.
    bool serves_local_clients(const mca::ptl::Module &module) const;
    // module.listen() with the server's info and serves_local_clients(module).
    mca::Result<std::vector<std::unique_ptr<mca::ptl::Listener>>> listen(
        mca::ptl::Module &module, std::span<const pmix_info_t> server_info) const;

    struct Target {
        std::string uri;
        mca::ptl::Module *module = nullptr;
    };
    // The URIs some module handles, ordered by that module's priority (stable
    // for equal priorities).
    std::vector<Target> order(const std::vector<std::string> &uris) const;

  private:
    std::vector<mca::SelectedModule<mca::ptl::Module>> selected_;  // as modules_
    std::vector<mca::ptl::Module *> modules_;
    std::vector<std::string> names_;
};

}  // namespace pmixpp::ptl_base
