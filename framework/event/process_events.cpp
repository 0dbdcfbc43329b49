#include "event/process_events.hpp"

#include "event/chain.hpp"
#include "runtime/progress.hpp"

namespace pmixpp::events {

ProcessEvents &ProcessEvents::instance() {
    static auto *events = new ProcessEvents;  // never destroyed: chains may outlive finalize
    return *events;
}

void ProcessEvents::deliver(std::shared_ptr<const Event> event, std::optional<std::size_t> target,
                            std::function<void(std::span<const pmix_info_t>)> results) {
    std::vector<std::shared_ptr<const Handler>> chain;
    if (target) {
        auto h = registry_.find(*target);
        if (h && registry_.active(*target) && matches(h->spec, *event, self_)) chain.push_back(h);
    } else {
        chain = registry_.chain_for(*event, self_);
    }
    run(std::move(chain), std::move(event), std::move(results));
}

void ProcessEvents::run(std::vector<std::shared_ptr<const Handler>> chain,
                        std::shared_ptr<const Event> event,
                        std::function<void(std::span<const pmix_info_t>)> results) {
    if (chain.empty()) {
        if (results) results({});
        return;
    }
    EventChain::run(
        std::move(chain), std::move(event),
        [](std::function<void()> task) {
            runtime::ProgressEngine::instance().post(std::move(task));
        },
        [this](std::size_t id) { return registry_.active(id); }, {}, std::move(results));
}

}  // namespace pmixpp::events
