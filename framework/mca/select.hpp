// select_one<M> / select_all<M>: the select -> create -> hold step every
// framework base needs (README.md, "The selection helper"), so that a base only
// says which framework, how many modules, and what it does with them.
//
// Threads: like ComponentRepository::select_components(), on the thread that
// opens the framework (PMIx_*_init's caller, a tool's main thread).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pmixpp/mca/repository.hpp"
#include "pmixpp/mca/sdk_types.hpp"

namespace pmixpp::mca {

// One module of framework interface M (pmixpp::mca::<fw>::Module), made by a
// selected component. The handle owns the module and keeps its DSO mapped.
template <class M>
struct SelectedModule {
    ModuleHandle handle;
    M *module = nullptr;
    std::string component;              // "usock" (the framework's prefix left off)
    int priority = 0;                   // as the component's query answered
    bool explicitly_requested = false;  // named in an include list PMIX_MCA_<fw>=a,b
    unsigned interface_minor = 0;       // the framework interface minor it was built against
};

// A framework error as a PMIx status for the C API: PMIX_ERR_NOT_AVAILABLE
// with the error's message (which names the framework and why).
inline Status to_status(const McaError &error) {
    return Status(PMIX_ERR_NOT_AVAILABLE, error.message);
}

namespace detail {

// What one select_one/select_all call went through; the untyped part of the
// helper (select.cpp).
struct Attempt {
    FrameworkSelection selection;
    std::vector<McaError> create_failures;  // in the order tried

    // Selects `framework` in `repo`; false (and `error` set) when selection
    // itself failed (bad_selection, query_fatal, a required framework's no_module).
    bool select(ComponentRepository &repo, std::string_view framework);
    // Creates the module of `candidate`: the handle, or an empty handle after
    // recording and logging why (the repository's failures() has it too).
    ModuleHandle create(ComponentRepository &repo, const SelectedComponent &candidate);
    // no_module: "framework <fw>: no component ..." with every component's
    // reason, the create failures and the search path.
    McaError none_left(const ComponentRepository &repo) const;
    // Logs (info) the module the framework uses.
    void log_using(const SelectedComponent &candidate) const;

    McaError error;
};

template <class M>
SelectedModule<M> hold(ModuleHandle handle, const SelectedComponent &candidate) {
    SelectedModule<M> out;
    out.module = handle.as<M>();
    out.handle = std::move(handle);
    out.component = candidate.record.component;
    out.priority = candidate.priority;
    out.explicitly_requested = candidate.explicitly_requested;
    if (candidate.record.descriptor != nullptr)
        out.interface_minor = candidate.record.descriptor->interface_minor;
    return out;
}

}  // namespace detail

// The highest-priority usable component's module. A component whose
// create_module fails is recorded (failures(), a warning) and the next usable
// one is taken, in priority order. Errors: the selection's own (bad_selection,
// query_fatal), or no_module when no component is left ("framework <fw>: no
// component ...", naming each component's reason and the search path).
template <class M>
McaResult<SelectedModule<M>> select_one(ComponentRepository &repo, std::string_view framework) {
    detail::Attempt attempt;
    if (!attempt.select(repo, framework)) return attempt.error;
    std::vector<SelectedComponent> candidates = attempt.selection.selected;
    candidates.insert(candidates.end(), attempt.selection.fallbacks.begin(),
                      attempt.selection.fallbacks.end());
    for (const auto &candidate : candidates) {
        if (auto handle = attempt.create(repo, candidate)) {
            attempt.log_using(candidate);
            return detail::hold<M>(std::move(handle), candidate);
        }
    }
    return attempt.none_left(repo);
}

// Every usable component's module, highest priority first (the framework's
// policy decides which are selected). A component whose create_module fails is
// recorded and left out. Errors: the selection's own, or no_module when no
// module was made.
template <class M>
McaResult<std::vector<SelectedModule<M>>> select_all(ComponentRepository &repo,
                                                     std::string_view framework) {
    detail::Attempt attempt;
    if (!attempt.select(repo, framework)) return attempt.error;
    std::vector<SelectedModule<M>> modules;
    for (const auto &candidate : attempt.selection.selected) {
        if (auto handle = attempt.create(repo, candidate)) {
            attempt.log_using(candidate);
            modules.push_back(detail::hold<M>(std::move(handle), candidate));
        }
    }
    if (modules.empty()) return attempt.none_left(repo);
    return modules;
}

// What the base of an all-usable framework holds (psensor, plog, pnet): every
// module select_all<M> made, highest priority first, alive as long as the set.
template <class M>
class ModuleSet {
  public:
    static McaResult<ModuleSet> open(ComponentRepository &repo, std::string_view framework) {
        auto selected = select_all<M>(repo, framework);
        if (!selected) return selected.error();
        ModuleSet set;
        set.selected_ = std::move(selected).value();
        for (const auto &s : set.selected_) set.modules_.push_back(s.module);
        return set;
    }

    const std::vector<M *> &modules() const noexcept { return modules_; }
    const std::vector<SelectedModule<M>> &selected() const noexcept { return selected_; }

  private:
    std::vector<SelectedModule<M>> selected_;
    std::vector<M *> modules_;
};

}  // namespace pmixpp::mca
