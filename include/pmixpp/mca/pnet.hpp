// Framework interface "pnet": network set-up for jobs and the network
// inventory of this node (see framework/pnet/README.md for the contract).
//
// Every usable module is active; the framework base calls each in priority
// order and merges what they produce.
//
// The launch flow, as the PMIx server API drives it:
//   launcher's server: PMIx_server_setup_application -> setup_application()
//                      (info the host carries to every node of the job)
//   every node's server: PMIx_server_setup_local_support -> setup_local_support()
//                        PMIx_server_setup_fork (per child) -> setup_fork()
//                        (after setup_local_support: job_info(), into the job's data)
//                        PMIx_server_deregister_nspace -> deregister_job()
#pragma once

#include "pmixpp/mca/sdk_types.hpp"

#include <span>
#include <string_view>

namespace pmixpp::mca::pnet {

inline constexpr const char *kFrameworkName = "pnet";
// Interface version a component of this framework is built against. The major
// must match the core's exactly; a component minor newer than the core's is refused.
inline constexpr unsigned kInterfaceMajor = 1;
inline constexpr unsigned kInterfaceMinor = 1;  // 1.1: job_info

// The module interface: what a component's create_module() returns.
//
// Every method runs on the progress thread and must not block on the network:
// a module whose inventory is slow to gather gathers it once, at creation.
// Spans and values passed in are borrowed for the call; values passed to a
// sink are borrowed for the sink call (the core copies them).
class PMIXPP_SDK_EXPORT Module {
  public:
    virtual ~Module() = default;

    // Plan the network for job `nspace` (its `job_info` as given to
    // PMIx_server_setup_application) and emit, through `launch_info`, the
    // key/values the host must deliver to setup_local_support() on each node
    // (network resources, PMIX_SET_ENV variables for the job's processes).
    // Emitting nothing is fine. An error fails the application set-up.
    virtual Status setup_application(std::string_view nspace, std::span<const pmix_info_t> job_info,
                                     const KeyValueSink &launch_info) = 0;

    // Prepare this node for the job's local processes from the info that
    // setup_application() produced (`launch_info`, possibly merged with other
    // modules' entries: ignore keys that are not this module's). Per-job
    // state kept here is released by deregister_job().
    virtual Status setup_local_support(std::string_view nspace,
                                       std::span<const pmix_info_t> launch_info) = 0;

    // Add the environment that local process `child` needs for the network
    // (typically what setup_local_support() kept for its job). Children of
    // jobs this module knows nothing about: add nothing, success.
    virtual Status setup_fork(const pmix_proc_t &child, Environment &env) = 0;

    // Release what the module keeps for job `nspace`. Unknown jobs: no-op.
    virtual void deregister_job(std::string_view nspace) = 0;

    // Emit this node's network inventory (interfaces, addresses, fabrics)
    // through `inventory` (PMIx_server_collect_inventory). `directives` are
    // the call's. Emitting nothing is fine.
    virtual Status collect_inventory(std::span<const pmix_info_t> directives,
                                     const KeyValueSink &inventory) = 0;

    // Take inventory collected elsewhere (PMIx_server_deliver_inventory),
    // e.g. to plan set-ups for other nodes. Keys that are not this module's
    // are ignored.
    virtual Status deliver_inventory(std::span<const pmix_info_t> inventory,
                                     std::span<const pmix_info_t> directives) = 0;

    // --- interface 1.1 (the core calls these only on a module built against 1.1 or later) ---

    // What the processes of job `nspace` read with PMIx_Get, from what
    // setup_local_support() kept: emitted through `info` in the form of
    // PMIx_server_register_nspace's info (job-level keys; a process's keys in
    // a PMIX_PROC_DATA array whose first entry is its PMIX_RANK). The core
    // adds them to the job's data on this node right after
    // setup_local_support() succeeded. Emitting nothing is fine; an error
    // fails PMIx_server_setup_local_support.
    virtual Status job_info(std::string_view nspace, const KeyValueSink &info) {
        (void)nspace;
        (void)info;
        return Status::success();
    }
};

}  // namespace pmixpp::mca::pnet
