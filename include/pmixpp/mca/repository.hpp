// The component repository: finds components (DSOs on the search path and the
// ones compiled into libpmix), checks their descriptors, keeps every failure as
// data, and selects the components of a framework by priority.
//
// Threads: scan(), select_components() and create_module() run on the thread
// that opens a framework (PMIx_*_init's caller, before the progress thread
// exists) or a tool's main thread; they are serialized by an internal mutex.
// ModuleHandle's destructor may run on any thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pmixpp/mca/component.h"
#include "pmixpp/mca/export.h"
#include "pmixpp/mca/parameters.hpp"
#include "pmixpp/mca/status.hpp"

namespace pmixpp::mca {

enum class SelectionPolicy {
    highest_priority_one,  // gds, evcache: one module
    all_usable,            // ptl, pnet, plog, psensor: every usable component, by priority
};

struct FrameworkInfo {
    std::string name;
    unsigned interface_major = 0;
    unsigned interface_minor = 0;
    SelectionPolicy policy = SelectionPolicy::all_usable;
    bool requires_module = false;  // init fails without one (ptl, gds)
    std::string description;
};

// The six frameworks of DESIGN.md §3, with the interface versions of
// include/pmixpp/mca/<fw>.hpp.
PMIXPP_SDK_EXPORT const std::vector<FrameworkInfo> &builtin_frameworks();

enum class LoadStage { scan, open, check, register_params, query, create };
PMIXPP_SDK_EXPORT std::string_view to_string(LoadStage stage) noexcept;
PMIXPP_SDK_EXPORT std::string_view to_string(SelectionPolicy policy) noexcept;

// One thing that went wrong with one component, kept for pmix_info --show-failed
// and for the warning printed when the user asked for that component.
struct LoadFailure {
    std::string framework;
    std::string component;
    std::string path;  // file, or "(static)"
    LoadStage stage = LoadStage::scan;
    McaStatus status = McaStatus::ok;
    std::string message;  // complete sentence naming the component and path
};

// A component whose descriptor passed every check.
struct ComponentRecord {
    std::string framework;
    std::string component;
    std::string path;  // file, or "(static)" for one compiled into libpmix
    const pmixpp_mca_component_t *descriptor = nullptr;  // valid while `library` is held
    std::shared_ptr<const void> library;                 // keeps the DSO mapped; empty when static

    std::string full_name() const { return framework + "_" + component; }
    PMIXPP_SDK_EXPORT std::string version() const;  // "1.2.0"
};

struct SelectedComponent {
    ComponentRecord record;
    int priority = 0;  // as answered by query
    bool explicitly_requested = false;
};

// Why one component was or was not selected.
struct ComponentDecision {
    std::string component;
    bool selected = false;
    // ok when selected; else excluded, not_selected, query_not_available,
    // query_error, query_fatal, query_threw or register_failed.
    McaStatus status = McaStatus::ok;
    int default_priority = 0;
    int priority = 0;  // effective: default or <fw>_<comp>_priority, then query's answer
    std::string reason;
};

struct FrameworkSelection {
    std::string framework;
    std::vector<SelectedComponent> selected;  // highest priority first
    // Usable, but left out by a highest_priority_one policy, highest priority
    // first: what select_one() falls back to when a module cannot be created.
    std::vector<SelectedComponent> fallbacks;
    std::vector<ComponentDecision> decisions;  // every component found, selected first
    std::vector<std::string> warnings;         // also logged through spdlog
    std::optional<McaError> error;  // bad_selection, query_fatal, no_module: do not go on
};

// Owns a module made by a component's create_module and the DSO it came from
// (Boost.DLL's refcount pattern): the library is released only after the
// component's destroy_module ran. Move-only.
class PMIXPP_SDK_EXPORT ModuleHandle {
  public:
    ModuleHandle() = default;
    ModuleHandle(ModuleHandle &&other) noexcept;
    ModuleHandle &operator=(ModuleHandle &&other) noexcept;
    ModuleHandle(const ModuleHandle &) = delete;
    ModuleHandle &operator=(const ModuleHandle &) = delete;
    ~ModuleHandle();

    // The caller knows its framework: M is pmixpp::mca::<fw>::Module.
    template <class M>
    M *as() const noexcept {
        return static_cast<M *>(module_);
    }
    void *get() const noexcept { return module_; }
    explicit operator bool() const noexcept { return module_ != nullptr; }
    const std::string &component() const noexcept { return component_; }  // "<fw>_<comp>"

  private:
    friend class ComponentRepository;
    void reset() noexcept;

    void *module_ = nullptr;
    void (*destroy_)(void *) = nullptr;
    std::shared_ptr<const void> library_;
    std::string component_;
};

struct RepositoryOptions {
    std::vector<std::string> search_path;  // directories, scanned in order
    std::vector<FrameworkInfo> frameworks = builtin_frameworks();
    bool include_static = true;  // the components compiled into libpmix
};

class PMIXPP_SDK_EXPORT ComponentRepository {
  public:
    ComponentRepository(ParameterRegistry &parameters, RepositoryOptions options);
    ~ComponentRepository();
    ComponentRepository(const ComponentRepository &) = delete;
    ComponentRepository &operator=(const ComponentRepository &) = delete;

    // Built-in frameworks, default_search_path(), ParameterRegistry::process_wide().
    static ComponentRepository &process_wide();

    // <directory of libpmix.so.2>/pmix, found with dladdr: right in the build
    // tree (build/lib/pmix) and when installed (<libdir>/pmix).
    static std::string builtin_component_dir();
    // The mca_base_component_path parameter (PMIX_MCA_mca_base_component_path):
    // colon-separated directories that REPLACE the built-in one; an element
    // "@default@" stands for builtin_component_dir(). Unset: the built-in one.
    static std::vector<std::string> default_search_path(ParameterRegistry &parameters);

    // Opens and checks every candidate file once (later calls do nothing).
    void scan();

    const std::vector<std::string> &search_path() const noexcept;
    const std::vector<FrameworkInfo> &frameworks() const noexcept;
    const FrameworkInfo *framework(std::string_view name) const noexcept;
    // Components of `framework` that passed the checks, by name. Scans if needed.
    std::vector<ComponentRecord> components(std::string_view framework);
    // Every failure so far (all frameworks when `framework` is empty), in order.
    std::vector<LoadFailure> failures(std::string_view framework = {});

    // Registers parameters, applies PMIX_MCA_<fw>, queries and ranks the
    // components of `framework` according to its policy. Runs each query again
    // on every call; creates no module.
    FrameworkSelection select_components(std::string_view framework);

    // Calls the component's create_module. A NULL result or an exception is a
    // create_failed error (also kept in failures()).
    McaResult<ModuleHandle> create_module(const SelectedComponent &component);

    ParameterRegistry &parameters() const noexcept;

    // Whether selection warnings and errors also go to the framework loggers
    // (stderr). On by default; a tool that prints FrameworkSelection itself
    // (pmix_info) turns it off to avoid saying everything twice.
    void set_log_problems(bool enabled) noexcept;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace pmixpp::mca
