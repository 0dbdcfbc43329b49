// The frameworks this core knows, with the interface version each was built with.
#include "pmixpp/mca/evcache.hpp"
#include "pmixpp/mca/gds.hpp"
#include "pmixpp/mca/plog.hpp"
#include "pmixpp/mca/pnet.hpp"
#include "pmixpp/mca/psensor.hpp"
#include "pmixpp/mca/ptl.hpp"
#include "pmixpp/mca/repository.hpp"

namespace pmixpp::mca {

namespace {
FrameworkInfo describe(const char *name, unsigned major, unsigned minor, SelectionPolicy policy,
                       bool requires_module, const char *description) {
    return FrameworkInfo{name, major, minor, policy, requires_module, description};
}
}  // namespace

const std::vector<FrameworkInfo> &builtin_frameworks() {
    static const std::vector<FrameworkInfo> frameworks = {
        describe(ptl::kFrameworkName, ptl::kInterfaceMajor, ptl::kInterfaceMinor,
                 SelectionPolicy::all_usable, true, "transports: listen, connect, frame I/O"),
        describe(gds::kFrameworkName, gds::kInterfaceMajor, gds::kInterfaceMinor,
                 SelectionPolicy::highest_priority_one, true,
                 "datastore: job/node/proc info, Put/Commit data, modex"),
        describe(psensor::kFrameworkName, psensor::kInterfaceMajor, psensor::kInterfaceMinor,
                 SelectionPolicy::all_usable, false,
                 "process monitoring (PMIx_Process_monitor_nb)"),
        describe(plog::kFrameworkName, plog::kInterfaceMajor, plog::kInterfaceMinor,
                 SelectionPolicy::all_usable, false, "PMIx_Log_nb channels"),
        describe(pnet::kFrameworkName, pnet::kInterfaceMajor, pnet::kInterfaceMinor,
                 SelectionPolicy::all_usable, false,
                 "network set-up for a job: launch env, inventory"),
        describe(evcache::kFrameworkName, evcache::kInterfaceMajor, evcache::kInterfaceMinor,
                 SelectionPolicy::highest_priority_one, false,
                 "server cache of events for late registrants"),
    };
    return frameworks;
}

std::string_view to_string(SelectionPolicy policy) noexcept {
    switch (policy) {
        case SelectionPolicy::highest_priority_one:
            return "highest priority";
        case SelectionPolicy::all_usable:
            return "all usable";
    }
    return "unknown";
}

std::string_view to_string(LoadStage stage) noexcept {
    switch (stage) {
        case LoadStage::scan:
            return "scan";
        case LoadStage::open:
            return "open";
        case LoadStage::check:
            return "check";
        case LoadStage::register_params:
            return "register";
        case LoadStage::query:
            return "query";
        case LoadStage::create:
            return "create";
    }
    return "unknown";
}

}  // namespace pmixpp::mca
