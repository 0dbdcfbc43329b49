// The untyped part of select_one/select_all (select.hpp).
#include "mca/select.hpp"

#include "mca/logging.hpp"

namespace pmixpp::mca::detail {

bool Attempt::select(ComponentRepository &repo, std::string_view framework) {
    selection = repo.select_components(framework);
    if (!selection.error) return true;
    error = *selection.error;  // already logged by the repository
    return false;
}

ModuleHandle Attempt::create(ComponentRepository &repo, const SelectedComponent &candidate) {
    auto handle = repo.create_module(candidate);
    if (handle) return std::move(handle).value();
    framework_logger(selection.framework)->warn("{}; skipping it", handle.error().message);
    create_failures.push_back(handle.error());
    return {};
}

void Attempt::log_using(const SelectedComponent &candidate) const {
    framework_logger(selection.framework)
        ->info("using component {} (priority {})", candidate.record.full_name(),
               candidate.priority);
}

McaError Attempt::none_left(const ComponentRepository &repo) const {
    std::string path;
    for (const auto &dir : repo.search_path()) path += (path.empty() ? "" : ":") + dir;
    if (path.empty()) path = "(empty)";
    std::string message = "framework " + selection.framework + ": no component";
    if (selection.decisions.empty()) {
        message += " found; search path: " + path;
        return {McaStatus::no_module, message};
    }
    message += " left to use";
    for (const auto &d : selection.decisions) {
        if (!d.selected)
            message += "; " + selection.framework + "_" + d.component + ": " + d.reason;
    }
    for (const auto &f : create_failures) message += "; " + f.message;
    message += "; search path: " + path;
    return {McaStatus::no_module, message};
}

}  // namespace pmixpp::mca::detail
