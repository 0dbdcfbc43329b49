#include "ptl/ptl_base.hpp"

#include <algorithm>
#include <mutex>

namespace pmixpp::ptl_base {

mca::Result<std::shared_ptr<Transports>> Transports::acquire() {
    static std::mutex mutex;
    static std::weak_ptr<Transports> current;
    std::lock_guard lock(mutex);
    if (auto existing = current.lock()) return existing;
    auto opened = open(mca::ComponentRepository::process_wide());
    if (opened) current = opened.value();
    return opened;
}

mca::Result<std::shared_ptr<Transports>> Transports::open(mca::ComponentRepository &repo) {
    auto selected = mca::select_all<mca::ptl::Module>(repo, mca::ptl::kFrameworkName);
    if (!selected) return mca::to_status(selected.error());
    auto transports = std::make_shared<Transports>();
    transports->selected_ = std::move(selected).value();
    // Selection ranks by the components' answers; modules may refine priority().
    std::stable_sort(
        transports->selected_.begin(), transports->selected_.end(),
        [](const auto &a, const auto &b) { return a.module->priority() > b.module->priority(); });
    for (const auto &s : transports->selected_) {
        transports->modules_.push_back(s.module);
        transports->names_.push_back(s.handle.component());
    }
    return transports;
}

bool Transports::serves_local_clients(const mca::ptl::Module &module) const {
    for (std::size_t i = 0; i < selected_.size(); ++i) {
        if (selected_[i].module == &module) return i == 0 || selected_[i].explicitly_requested;
    }
    return false;
}

mca::Result<std::vector<std::unique_ptr<mca::ptl::Listener>>> Transports::listen(
    mca::ptl::Module &module, std::span<const pmix_info_t> server_info) const {
    return module.listen({server_info, serves_local_clients(module)});
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
