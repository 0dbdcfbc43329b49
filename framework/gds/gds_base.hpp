// The gds framework base: the one datastore module of this process and the
// reader/writer lock around it (framework/gds/README.md).
//
// Readers (fetch, fetch_all, assemble_*) run on any thread under the shared
// lock: this is the PMIx_Get fast path. Writers run on the progress thread
// under the exclusive lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>  // std::shared_lock
#include <string>
#include <string_view>

#include "pmixpp/mca/gds.hpp"
#include "pmixpp/mca/repository.hpp"
#include "runtime/rwlock.hpp"

namespace pmixpp::gds_base {

class Datastore {
  public:
    // The process's datastore, shared by every face holding the pointer.
    static mca::Result<std::shared_ptr<Datastore>> acquire();

    // "hash" for component gds_hash: what PMIX_GDS_MODULE names.
    const std::string &component() const noexcept { return component_; }
    // Whether the module has assemble_modex_pending (interface 1.1): a commit
    // then sends only what changed since the last one.
    bool has_pending_blobs() const noexcept { return interface_minor_ >= 1; }
    // Whether the module has assemble_modex_scope (interface 1.2): a commit
    // then sends its GLOBAL values once, not in both its LOCAL and REMOTE parts.
    bool has_scoped_blobs() const noexcept { return interface_minor_ >= 2; }

    template <class F>
    auto read(F &&f) const {
        std::shared_lock lock(mutex_);
        return f(static_cast<const mca::gds::Module &>(*module_));
    }
    template <class F>
    auto write(F &&f) {
        std::unique_lock lock(mutex_);
        ++generation_;  // whatever f changes, a cached job blob may be stale
        return f(*module_);
    }

    // assemble_job(), made once and reused until the next write: a server
    // sends the same blob to every client of a job in its handshake.
    mca::Result<std::shared_ptr<const mca::gds::Blob>> job_blob(std::string_view nspace) const;

  private:
    mca::ModuleHandle handle_;
    mca::gds::Module *module_ = nullptr;
    std::string component_;
    unsigned interface_minor_ = 0;
    // Writer-preferring: fast-path readers never starve the progress thread.
    mutable runtime::WriterPreferringRwLock mutex_;
    std::uint64_t generation_ = 0;  // writes so far (exclusive lock)
    // Job blobs assembled at generation cached_generation_ (any write empties it).
    mutable std::mutex cache_mutex_;
    mutable std::uint64_t cached_generation_ = 0;
    mutable std::map<std::string, std::shared_ptr<const mca::gds::Blob>, std::less<>> job_blobs_;
};

}  // namespace pmixpp::gds_base
