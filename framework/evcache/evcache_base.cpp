#include "evcache/evcache_base.hpp"

#include <spdlog/fmt/fmt.h>

#include "mca/logging.hpp"
#include "mca/select.hpp"
#include "pmixpp/mca/parameters.hpp"

namespace pmixpp::evcache_base {

namespace {
auto log() {
    return mca::framework_logger(mca::evcache::kFrameworkName);
}

// A component's capacity parameter is "<comp>_size" (README.md): registered
// here first, with the size the host gave as its default.
void preset_sizes(mca::ComponentRepository &repo, std::size_t size) {
    for (const auto &rec : repo.components(mca::evcache::kFrameworkName)) {
        mca::ParamSpec spec;
        spec.name = mca::param_name(mca::evcache::kFrameworkName, rec.component, "size");
        spec.framework = mca::evcache::kFrameworkName;
        spec.component = rec.component;
        spec.type = mca::ParamType::integer;
        spec.description = fmt::format(
            "Number of events the server caches for late registrants (default given to "
            "PMIx_server_init as pmix.evcache.size: {})",
            size);
        spec.default_value = std::to_string(size);
        auto r = repo.parameters().register_param(spec);
        if (!r) log()->warn("evcache: cannot preset {}: {}", spec.name, r.error().message);
    }
}
}  // namespace

std::unique_ptr<EventCache> EventCache::open(std::optional<std::size_t> size) {
    auto &repo = mca::ComponentRepository::process_wide();
    if (size) preset_sizes(repo, *size);
    auto selected = mca::select_one<mca::evcache::Module>(repo, mca::evcache::kFrameworkName);
    if (!selected) {
        log()->info(
            "evcache: no event cache module ({}); handlers registered after an event will not "
            "receive it",
            selected.error().message);
        return nullptr;
    }
    auto cache = std::unique_ptr<EventCache>(new EventCache);
    cache->module_ = selected.value().module;
    cache->handle_ = std::move(selected.value().handle);
    cache->module_->set_eviction_listener(
        [](const mca::evcache::CachedEvent &ev, mca::evcache::EvictionReason why) {
            if (why == mca::evcache::EvictionReason::kFlood) {
                log()->warn(
                    "evcache: the cache is full of job events; event {} (status {}) of job {} "
                    "left before every local client had it",
                    ev.id, ev.code, ev.job);
            } else {
                log()->debug("evcache: event {} (status {}) evicted to make room", ev.id, ev.code);
            }
        });
    log()->debug("evcache: using {} (capacity {})", cache->component(), cache->module_->capacity());
    return cache;
}

}  // namespace pmixpp::evcache_base
