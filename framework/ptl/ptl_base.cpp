#include "ptl/ptl_base.hpp"

#include <algorithm>
#include <mutex>

#include "pmixpp/mca/parameters.hpp"

namespace pmixpp::ptl_base {

mca::Status selection_error(const mca::FrameworkSelection &selection) {
    std::string message = selection.error ? selection.error->message
                                          : "framework " + selection.framework + ": no module";
    return mca::Status(PMIX_ERR_NOT_AVAILABLE, message);
}

mca::Result<std::shared_ptr<Transports>> Transports::acquire() {
    static std::mutex mutex;
    static std::weak_ptr<Transports> current;
    std::lock_guard lock(mutex);
    if (auto existing = current.lock()) return existing;

    auto &repo = mca::ComponentRepository::process_wide();
    mca::FrameworkSelection selection = repo.select_components(mca::ptl::kFrameworkName);
    if (selection.error || selection.selected.empty()) return selection_error(selection);
    auto transports = std::make_shared<Transports>();
    std::vector<std::pair<int, std::size_t>> order;
    for (const auto &component : selection.selected) {
        auto handle = repo.create_module(component);
        if (!handle) continue;  // recorded in the repository's failures
        transports->names_.push_back(component.record.full_name());
        transports->handles_.push_back(std::move(handle.value()));
    }
    for (auto &h : transports->handles_) transports->modules_.push_back(h.as<mca::ptl::Module>());
    if (transports->modules_.empty()) {
        return mca::Status(PMIX_ERR_NOT_AVAILABLE,
                           "framework ptl: no transport module could be created");
    }
    // selection.selected is highest priority first; modules may refine priority().
    std::vector<std::size_t> idx(transports->modules_.size());
    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        return transports->modules_[a]->priority() > transports->modules_[b]->priority();
    });
    std::vector<mca::ptl::Module *> modules;
    std::vector<std::string> names;
    for (auto i : idx) {
        modules.push_back(transports->modules_[i]);
        names.push_back(transports->names_[i]);
    }
    transports->modules_ = std::move(modules);
    transports->names_ = std::move(names);
    current = transports;
    return transports;
}

std::vector<Transports::Target> Transports::order(const std::vector<std::string> &uris) const {
    std::vector<std::pair<std::size_t, Target>> ranked;
    for (const auto &uri : uris) {
        for (std::size_t m = 0; m < modules_.size(); ++m) {
            if (modules_[m]->handles_uri(uri)) {
                ranked.push_back({m, Target{uri, modules_[m]}});
                break;
            }
        }
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    std::vector<Target> out;
    for (auto &r : ranked) out.push_back(std::move(r.second));
    return out;
}

}  // namespace pmixpp::ptl_base
