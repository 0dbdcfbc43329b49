// The evcache framework base: selects the server's event cache module
// (framework/evcache/README.md). Optional: a server without one still works.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "pmixpp/mca/evcache.hpp"
#include "pmixpp/mca/repository.hpp"

namespace pmixpp::evcache_base {

class EventCache {
  public:
    // The highest-priority usable module, or nullptr when there is none (the
    // reason is logged once). `size` (from PMIx_server_init's
    // "pmix.evcache.size") becomes the default of every evcache component's
    // `evcache_<comp>_size` parameter, so it applies unless the user set that
    // parameter. Runs on the initializing thread.
    static std::unique_ptr<EventCache> open(std::optional<std::size_t> size);

    mca::evcache::Module &module() noexcept { return *module_; }
    // "evcache_ring"
    const std::string &component() const noexcept { return handle_.component(); }

  private:
    mca::ModuleHandle handle_;
    mca::evcache::Module *module_ = nullptr;
};

}  // namespace pmixpp::evcache_base
