// The evcache_ring component: descriptor, parameter, query and module factory.
//
// Usable whenever evcache_ring_size is positive. Size 0 means "no event
// cache": the component then says it is not available, so the server runs
// without an evcache module (late registrants miss earlier events, which the
// evcache base logs once) instead of holding a module that refuses every event.
#include "ring_cache.hpp"

#include "pmixpp/mca/component.hpp"
#include "pmixpp/mca/evcache.hpp"

#include <cstdint>
#include <new>
#include <optional>
#include <string>

namespace {

using pmixpp::mca::ComponentParameters;

constexpr int kDefaultPriority = 50;
// Events held at most; the default the PMIx event RFC gives for the server's
// ring (512 as of PMIx 2.0).
constexpr std::int64_t kDefaultSize = 512;

int register_params(pmixpp_mca_params_t *handle) {
    auto &params = ComponentParameters::from(handle);
    params.add_int("size",
                   "Number of events the server caches for late registrants; when full, the "
                   "oldest environment event is dropped first (0: no event cache)",
                   kDefaultSize);
    return 0;
}

// evcache_ring_size, or nothing (with the reason in `why`) if it is unusable.
std::optional<std::size_t> configured_size(pmixpp_mca_params_t *handle, std::string *why) {
    const auto size = ComponentParameters::from(handle).get("size");
    if (!size) return static_cast<std::size_t>(kDefaultSize);  // registration failed: default
    if (size->int_value < 0) {
        *why = "evcache_ring: evcache_ring_size = " + size->value + " (from " +
               size->source_detail + ") is negative; give a number of events, 0 for no cache";
        return std::nullopt;
    }
    return static_cast<std::size_t>(size->int_value);
}

void query(const pmixpp_mca_query_context_t *ctx, pmixpp_mca_query_result_t *result) {
    std::string why;
    const auto size = configured_size(ctx->params, &why);
    if (!size) {
        if (ctx->explicitly_requested != 0) {
            pmixpp::mca::report_fatal(result, why);
        } else {
            pmixpp::mca::report_error(result, why);
        }
        return;
    }
    if (*size == 0) {
        pmixpp::mca::report_not_available(result,
                                          "evcache_ring: evcache_ring_size is 0 (no event cache)");
        return;
    }
    pmixpp::mca::report_usable(result, ctx->priority);
}

void *create_module(const pmixpp_mca_query_context_t *ctx) {
    std::string why;
    const auto size = configured_size(ctx->params, &why);
    if (!size) return nullptr;  // query refused already; recorded as create_failed
    auto *module = new (std::nothrow) pmixpp::evcache_ring::RingCache(*size);
    return static_cast<pmixpp::mca::evcache::Module *>(module);
}

void destroy_module(void *module) {
    delete static_cast<pmixpp::mca::evcache::Module *>(module);
}

}  // namespace

// Version 1.0.0, default priority 50, parameter evcache_ring_size.
PMIXPP_MCA_COMPONENT(evcache, ring, 1, 0, 0, kDefaultPriority, register_params, query,
                     create_module, destroy_module);
