#include "event/process_events.hpp"

#include "event/chain.hpp"
#include "runtime/progress.hpp"

namespace pmixpp::events {

ProcessEvents &ProcessEvents::instance() {
    static auto *events = new ProcessEvents;  // never destroyed: chains may outlive finalize
    return *events;
}

namespace {
void post_to_progress(std::function<void()> task) {
    runtime::ProgressEngine::instance().post(std::move(task));
}
}  // namespace

void ProcessEvents::deliver(std::shared_ptr<const Event> event, std::optional<std::size_t> target,
                            std::function<void(std::span<const pmix_info_t>)> results) {
    std::shared_ptr<const Handler> one;
    std::vector<std::shared_ptr<const Handler>> chain;
    if (target) {
        auto h = registry_.find(*target);
        if (h && registry_.active(*target) && matches(h->spec, *event, self_)) one = std::move(h);
    } else {
        scratch_.clear();
        registry_.chain_for(*event, self_, scratch_);
        if (scratch_.size() == 1) {
            one = std::move(scratch_.front());
        } else {
            chain.assign(scratch_.begin(), scratch_.end());
        }
        scratch_.clear();
    }
    if (one && !results) {
        // One handler and nobody reading the results (the common case): no
        // chain (docs/events.md, "Latency").
        EventChain::run_one(std::move(one), std::move(event), &post_to_progress,
                            [this](std::size_t id) { return registry_.active(id); });
        return;
    }
    if (one) chain.push_back(std::move(one));
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
        std::move(chain), std::move(event), &post_to_progress,
        [this](std::size_t id) { return registry_.active(id); }, {}, std::move(results));
}

}  // namespace pmixpp::events
