// Support for the evcache_ring tests: load the component the real way (the
// component repository opening build/lib/pmix/pmix_mca_evcache_ring.so, or the
// copy compiled into libpmix), with evcache_ring_size set as a user would, and
// build events.
#pragma once

#include <pmix_common.h>

#include "pmixpp/mca/evcache.hpp"
#include "pmixpp/mca/repository.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace evcache_ring_test {

namespace mca = pmixpp::mca;
namespace evcache = pmixpp::mca::evcache;
using evcache::CachedEvent;
using evcache::EventId;
using evcache::EvictionReason;

// One repository with its own parameters: evcache_ring_size comes from the
// "environment" source, exactly as PMIX_MCA_evcache_ring_size would.
// `host_size` does what the evcache base does with PMIx_server_init's
// "pmix.evcache.size": register evcache_ring_size before the component does,
// with that size as its default.
class LoadedRing {
  public:
    explicit LoadedRing(std::optional<std::string> size,
                        std::optional<std::string> host_size = std::nullopt)
        : params_(config(std::move(size))), repo_(params_, options()) {
        repo_.set_log_problems(false);
        params_.set_log_problems(false);
        if (host_size) {
            mca::ParamSpec spec;
            spec.name = mca::param_name(evcache::kFrameworkName, "ring", "size");
            spec.framework = evcache::kFrameworkName;
            spec.component = "ring";
            spec.type = mca::ParamType::integer;
            spec.description = "size given to PMIx_server_init";
            spec.default_value = *host_size;
            const auto preset = params_.register_param(spec);
            EXPECT_TRUE(preset.ok()) << preset.error().message;
        }
        selection = repo_.select_components(evcache::kFrameworkName);
        if (selection.selected.empty()) return;
        auto handle = repo_.create_module(selection.selected.front());
        if (handle) {
            handle_ = std::move(handle).value();
        } else {
            ADD_FAILURE() << "create_module failed: " << handle.error().message;
        }
    }

    // The module, or nullptr when nothing was selected.
    evcache::Module *module() const { return handle_.as<evcache::Module>(); }
    mca::ComponentRepository &repository() { return repo_; }
    mca::ParameterRegistry &parameters() { return params_; }

    mca::FrameworkSelection selection;

  private:
    static mca::ParamSourceConfig config(std::optional<std::string> size) {
        mca::ParamSourceConfig c;  // no files, no process environment
        if (size) c.environment.emplace("evcache_ring_size", std::move(*size));
        return c;
    }
    static mca::RepositoryOptions options() {
        mca::RepositoryOptions o;
        o.search_path = {EVCACHE_RING_COMPONENT_DIR};
        o.frameworks.clear();
        for (const auto &fw : mca::builtin_frameworks()) {
            if (fw.name == evcache::kFrameworkName) o.frameworks.push_back(fw);
        }
        o.include_static = true;  // also works when built with PMIXPP_COMPONENTS_STATIC
        return o;
    }

    mca::ParameterRegistry params_;
    mca::ComponentRepository repo_;
    mca::ModuleHandle handle_;
};

inline pmix_proc_t proc(std::string_view nspace, pmix_rank_t rank) {
    pmix_proc_t p{};
    std::memcpy(p.nspace, nspace.data(), std::min(nspace.size(), sizeof(p.nspace) - 1));
    p.rank = rank;
    return p;
}

inline CachedEvent environment_event(pmix_status_t code) {
    CachedEvent event;
    event.code = code;
    event.range = PMIX_RANGE_SESSION;
    return event;
}

inline CachedEvent job_event(pmix_status_t code, std::string job,
                             std::vector<pmix_proc_t> awaiting) {
    CachedEvent event;
    event.code = code;
    event.range = PMIX_RANGE_NAMESPACE;
    event.job = std::move(job);
    event.awaiting = std::move(awaiting);
    return event;
}

// Codes of the events replay() offers `peer`, in the order offered; `accept`
// is what deliver answers.
inline std::vector<pmix_status_t> replay_codes(evcache::Module &cache, const pmix_proc_t &peer,
                                               bool accept = true) {
    std::vector<pmix_status_t> codes;
    cache.replay(peer, [&](const CachedEvent &event) {
        codes.push_back(event.code);
        return accept;
    });
    return codes;
}

inline EventId cache_ok(evcache::Module &cache, CachedEvent event) {
    auto id = cache.cache(std::move(event));
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? id.value() : 0;
}

// Records every eviction the module reports.
struct EvictionLog {
    std::vector<std::pair<pmix_status_t, EvictionReason>> entries;

    void attach(evcache::Module &cache) {
        cache.set_eviction_listener([this](const CachedEvent &event, EvictionReason reason) {
            entries.emplace_back(event.code, reason);
        });
    }
};

using Codes = std::vector<pmix_status_t>;
using Evictions = std::vector<std::pair<pmix_status_t, EvictionReason>>;

}  // namespace evcache_ring_test
