// select_components(): register, filter by PMIX_MCA_<fw>, query, rank by
// priority, apply the framework's policy. create_module().
#include <algorithm>
#include <cstring>

#include "mca/logging.hpp"
#include "mca/repository_impl.hpp"
#include "pmixpp/mca/selection.hpp"

namespace pmixpp::mca {

namespace {

std::string describe_exception(std::exception_ptr e) {
    try {
        std::rethrow_exception(std::move(e));
    } catch (const std::exception &ex) {
        return std::string("exception: ") + ex.what();
    } catch (...) {
        return "exception of unknown type";
    }
}

}  // namespace

ComponentParameters *ComponentRepository::Impl::ensure_registered(const ComponentRecord &record) {
    const std::string full = record.full_name();
    if (registration_failed.count(full) != 0) return nullptr;
    if (auto it = component_params.find(full); it != component_params.end())
        return it->second.get();
    auto handle = std::make_unique<ComponentParameters>(params, record.framework, record.component);
    handle->add_int("priority",
                    "Selection priority of component " + full + " (higher wins; default " +
                        std::to_string(record.descriptor->default_priority) + ")",
                    record.descriptor->default_priority);
    std::string problem;
    if (record.descriptor->register_params != nullptr) {
        try {
            const int rc = record.descriptor->register_params(handle->handle());
            if (rc != 0) problem = "register_params returned " + std::to_string(rc);
        } catch (...) {
            problem = "register_params threw an " + describe_exception(std::current_exception());
        }
    }
    if (!problem.empty()) {
        registration_failed.insert(full);
        record_failure({record.framework, record.component, record.path, LoadStage::register_params,
                        McaStatus::register_failed,
                        "component " + full + ": " + problem + "; path " + record.path});
        return nullptr;
    }
    auto *raw = handle.get();
    component_params.emplace(full, std::move(handle));
    return raw;
}

FrameworkSelection ComponentRepository::select_components(std::string_view framework) {
    std::lock_guard lock(impl_->mutex);
    impl_->scan_locked(framework);
    FrameworkSelection sel;
    sel.framework = std::string(framework);
    auto log = framework_logger(framework);
    const bool log_problems = impl_->log_problems;
    auto warn = [&](std::string msg) {
        if (log_problems) log->warn("{}", msg);
        sel.warnings.push_back(std::move(msg));
    };
    auto fail_selection = [&](McaError error) {
        if (log_problems) log->error("{}", error.message);
        sel.error = std::move(error);
    };
    const FrameworkInfo *info = impl_->find_framework(framework);
    if (info == nullptr) {
        sel.error = McaError{McaStatus::unknown_framework,
                             "framework '" + sel.framework + "' is not known to this core"};
        return sel;
    }

    // Every component's parameters exist before anything is decided, so that
    // pmix_info lists them even for components the user excluded.
    for (const auto &r : impl_->records)
        if (r.framework == framework) impl_->ensure_registered(r);

    // The user's include/exclude list.
    SelectionFilter filter;
    std::string filter_text;  // "ptl=usock (environment PMIX_MCA_ptl)" for messages
    if (auto raw = impl_->params.find(framework); raw && !raw->value.empty()) {
        const std::string source = std::string(to_string(raw->source)) + " " + raw->source_detail;
        auto parsed = parse_selection(framework, raw->value, source);
        if (!parsed) {
            fail_selection(parsed.error());
            return sel;
        }
        filter = std::move(parsed).value();
        filter_text = sel.framework + "=" + raw->value + " (" + source + ")";
    }
    for (const auto &name : filter.names) {
        if (filter.mode != SelectionFilter::Mode::include_only) break;
        if (impl_->find_record(framework, name) != nullptr) continue;
        std::string failed;
        for (const auto &f : impl_->failures)
            if (f.framework == framework && f.component == name) failed = f.message;
        if (!failed.empty())
            warn("component " + sel.framework + "_" + name + " was requested in " + filter_text +
                 " but failed to load: " + failed);
        else
            warn("component " + sel.framework + "_" + name + " was requested in " + filter_text +
                 " but does not exist; search path: " + impl_->search_path_text());
    }

    std::vector<ComponentRecord> found;
    for (const auto &r : impl_->records)
        if (r.framework == framework) found.push_back(r);
    std::sort(found.begin(), found.end(),
              [](const auto &a, const auto &b) { return a.component < b.component; });

    std::vector<std::size_t> usable;  // indexes into sel.decisions
    std::vector<SelectedComponent> candidates;
    for (const auto &rec : found) {
        ComponentDecision d;
        d.component = rec.component;
        d.default_priority = rec.descriptor->default_priority;
        d.priority = d.default_priority;
        const bool requested = filter.requests(rec.component);
        const std::string full = rec.full_name();
        if (!filter.admits(rec.component)) {
            d.status = McaStatus::excluded;
            d.reason = (filter.mode == SelectionFilter::Mode::exclude ? "excluded by "
                                                                      : "not listed in ") +
                       filter_text;
            sel.decisions.push_back(std::move(d));
            continue;
        }
        ComponentParameters *cparams = impl_->ensure_registered(rec);
        if (cparams == nullptr) {
            d.status = McaStatus::register_failed;
            d.reason = "parameter registration failed (see pmix_info --show-failed)";
            if (requested) warn("component " + full + " was requested but its " + d.reason);
            sel.decisions.push_back(std::move(d));
            continue;
        }
        if (auto p = cparams->get("priority")) d.priority = static_cast<int>(p->int_value);

        pmixpp_mca_query_context_t ctx{};
        ctx.struct_size = sizeof ctx;
        ctx.priority = d.priority;
        ctx.explicitly_requested = requested ? 1 : 0;
        ctx.params = cparams->handle();
        pmixpp_mca_query_result_t result{};
        result.struct_size = sizeof result;
        result.outcome = PMIXPP_MCA_QUERY_USABLE;
        result.priority = d.priority;
        std::string threw;
        try {
            rec.descriptor->query(&ctx, &result);
        } catch (...) {
            threw = describe_exception(std::current_exception());
        }
        result.message[sizeof result.message - 1] = '\0';
        const std::string message = result.message;
        auto failure = [&](McaStatus status, const std::string &what) {
            impl_->record_failure({rec.framework, rec.component, rec.path, LoadStage::query, status,
                                   "component " + full + ": " + what + "; path " + rec.path});
            d.status = status;
            d.reason = what;
        };
        if (!threw.empty()) {
            failure(McaStatus::query_threw, "query threw an " + threw);
            warn("component " + full + ": " + d.reason);
        } else if (result.outcome == PMIXPP_MCA_QUERY_USABLE) {
            d.priority = result.priority;
            usable.push_back(sel.decisions.size());
            candidates.push_back({rec, result.priority, requested});
        } else if (result.outcome == PMIXPP_MCA_QUERY_NOT_AVAILABLE) {
            d.status = McaStatus::query_not_available;
            d.reason = "not available here" + (message.empty() ? "" : ": " + message);
            if (requested)
                warn("component " + full + " was requested but is " + d.reason);
            else
                log->debug("component {}: {}", full, d.reason);
        } else if (result.outcome == PMIXPP_MCA_QUERY_FATAL) {
            failure(McaStatus::query_fatal, "query failed fatally: " + message);
            sel.decisions.push_back(d);
            fail_selection({McaStatus::query_fatal, "framework " + sel.framework + ": component " +
                                                        full + " cannot work: " + message +
                                                        "; path " + rec.path +
                                                        "; not falling back to other components"});
            return sel;
        } else {
            failure(McaStatus::query_error,
                    result.outcome == PMIXPP_MCA_QUERY_ERROR
                        ? "query reported an error: " + message
                        : "query answered unknown outcome " + std::to_string(result.outcome));
            warn("component " + full + ": " + d.reason);
        }
        sel.decisions.push_back(std::move(d));
    }

    // Rank: priority, then name, so equal priorities always resolve the same way.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto &a, const auto &b) { return a.priority > b.priority; });
    const std::size_t keep = info->policy == SelectionPolicy::highest_priority_one
                                 ? std::min<std::size_t>(1, candidates.size())
                                 : candidates.size();
    for (std::size_t i : usable) {
        auto &d = sel.decisions[i];
        std::size_t rank = 0;
        while (candidates[rank].record.component != d.component) ++rank;
        if (rank < keep) {
            d.selected = true;
            d.status = McaStatus::ok;
            d.reason = info->policy == SelectionPolicy::highest_priority_one
                           ? "selected: highest priority (" + std::to_string(d.priority) + ")"
                           : "selected: usable, priority " + std::to_string(d.priority);
        } else {
            d.status = McaStatus::not_selected;
            d.reason = "usable, but " + candidates[0].record.full_name() +
                       " has higher priority (" + std::to_string(candidates[0].priority) + " > " +
                       std::to_string(d.priority) + ")";
        }
    }
    sel.fallbacks.assign(candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end());
    candidates.resize(keep);
    sel.selected = std::move(candidates);
    std::stable_sort(sel.decisions.begin(), sel.decisions.end(), [](const auto &a, const auto &b) {
        if (a.selected != b.selected) return a.selected;
        return a.priority > b.priority;
    });
    for (const auto &s : sel.selected)
        log->info("selected component {} (priority {}) from {}", s.record.full_name(), s.priority,
                  s.record.path);

    if (sel.selected.empty() && info->requires_module) {
        std::string why;
        for (const auto &d : sel.decisions)
            why += "; " + sel.framework + "_" + d.component + ": " + d.reason;
        for (const auto &f : impl_->failures)
            if (f.framework == framework && f.stage != LoadStage::query) why += "; " + f.message;
        if (why.empty()) why = "; no component found";
        fail_selection(
            {McaStatus::no_module, "framework " + sel.framework +
                                       " needs a module and no component is usable; search path: " +
                                       impl_->search_path_text() + why});
    }
    return sel;
}

McaResult<ModuleHandle> ComponentRepository::create_module(const SelectedComponent &component) {
    std::lock_guard lock(impl_->mutex);
    const ComponentRecord &rec = component.record;
    const std::string full = rec.full_name();
    ComponentParameters *cparams = impl_->ensure_registered(rec);
    auto fail = [&](const std::string &what) -> McaError {
        McaError err{McaStatus::create_failed,
                     "component " + full + ": " + what + "; path " + rec.path};
        impl_->record_failure({rec.framework, rec.component, rec.path, LoadStage::create,
                               McaStatus::create_failed, err.message});
        return err;
    };
    if (cparams == nullptr || rec.descriptor == nullptr)
        return fail("cannot create a module of a component whose registration failed");
    pmixpp_mca_query_context_t ctx{};
    ctx.struct_size = sizeof ctx;
    ctx.priority = component.priority;
    ctx.explicitly_requested = component.explicitly_requested ? 1 : 0;
    ctx.params = cparams->handle();
    void *module = nullptr;
    try {
        module = rec.descriptor->create_module(&ctx);
    } catch (...) {
        return fail("create_module threw an " + describe_exception(std::current_exception()));
    }
    if (module == nullptr) return fail("create_module returned no module");
    ModuleHandle handle;
    handle.module_ = module;
    handle.destroy_ = rec.descriptor->destroy_module;
    handle.library_ = rec.library;
    handle.component_ = full;
    return handle;
}

}  // namespace pmixpp::mca
