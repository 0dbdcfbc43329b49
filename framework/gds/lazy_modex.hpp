// Modex data received and kept as blobs, decoded into the datastore only
// when a Get asks for that process. A client's: the peers' data of a
// collecting fence, a connect, a direct modex (issue 17 item 1: decoding
// every peer's data at every fence was ~75 % of a data fence's time). A
// server's: its clients' commits (server/modex.hpp), read by the server
// process's own PMIx_Get and by the rare service that needs their values;
// the blobs a server forwards (Get, fences, dmodex) are not decoded at all.
//
// Each blob is a private copy (wire::parse_records copies it out of the
// stream): nothing here points into the fence data segment, which the server
// rewrites at the next fence and a client remaps when it grows, so a Get
// never reads a stale or unmapped page.
//
// Per process the blobs are decoded in arrival order, so a later commit's
// value wins as it would have eagerly. A `whole` record (the process's whole
// committed data, wire/message.hpp) replaces what is pending for it. A
// process with kMaxBlocks pending blobs, or more than kMaxBytes pending in
// all, is decoded at once: the memory stays bounded when a job fences often
// and never reads some peers.
//
// Threads: add() on the progress thread, materialize() on any thread in
// PMIx_Get; one mutex, held while decoding so that a Get never sees a
// process half decoded by another thread. Lock order: this mutex, then the
// datastore's.
#pragma once

#include <pmix_common.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gds/gds_base.hpp"
#include "wire/message.hpp"

namespace pmixpp::gds_base {

class LazyModex {
  public:
    // `face` names the owner in the debug lines ("client", "server").
    explicit LazyModex(const char *face = "client") : face_(face) {}
    static constexpr std::size_t kMaxBlocks = 32;
    static constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

    // Keeps the records of processes other than `self` for `store`
    // (forgetting what was pending for another datastore).
    void add(std::vector<wire::ModexRecord> &&records, const pmix_proc_t &self,
             const std::shared_ptr<gds_base::Datastore> &store);
    // Decodes into `store` what is pending for `target`: its own records and
    // its namespace's job-level ones (rank WILDCARD/UNDEF); for a WILDCARD or
    // UNDEF target, the job-level ones only. Cheap when nothing is pending.
    void materialize(const pmix_proc_t &target, const std::shared_ptr<gds_base::Datastore> &store);
    // As add(), for blobs read in place (fence areas, client/fence_shm.cpp):
    // each is copied into a buffer that an earlier blob left (decoded or
    // replaced by a `whole` one), so that a job re-publishing large values
    // every fence does not fault in fresh heap pages every time.
    struct Copy {
        pmix_proc_t proc{};
        std::span<const std::uint8_t> data;
        bool whole = false;
    };
    void add_copies(std::span<const Copy> copies, const pmix_proc_t &self,
                    const std::shared_ptr<gds_base::Datastore> &store);
    void clear();
    // Forgets what is pending for the processes of `nspace` (its job is gone).
    void forget(std::string_view nspace);
    // Blobs decoded since the process started (the debug lines say the same).
    std::uint64_t decoded() const noexcept { return decoded_.load(); }
    // Blobs pending (not decoded yet).
    std::size_t pending() const noexcept { return pending_count_.load(); }

  private:
    using Key = std::pair<std::string, pmix_rank_t>;
    struct Blob {
        pmix_proc_t proc{};
        std::vector<std::uint8_t> bytes;
    };
    // Under mutex_: decodes `key`'s blobs and forgets them.
    void decode(const Key &key, gds_base::Datastore &store, const char *why);
    // Under mutex_: the common part of add() and add_copies().
    void reset_for(const std::shared_ptr<gds_base::Datastore> &store);
    std::vector<Blob> &slot_for(const Key &key, bool whole, gds_base::Datastore &store);
    void bound(gds_base::Datastore &store);
    // Under mutex_: buffers kept for add_copies (at most kMaxSpare, kMaxSpareBytes).
    void recycle(std::vector<std::uint8_t> &&buffer);
    std::vector<std::uint8_t> take_buffer(std::size_t size);
    static constexpr std::size_t kMaxSpare = 256;
    static constexpr std::size_t kMaxSpareBytes = std::size_t{32} << 20;
    std::vector<std::vector<std::uint8_t>> spare_;  // under mutex_
    std::size_t spare_bytes_ = 0;                   // under mutex_: their capacities

    std::mutex mutex_;
    std::atomic<std::size_t> pending_count_{0};   // blobs pending: the Get fast path's test
    std::map<Key, std::vector<Blob>> pending_;    // under mutex_
    std::size_t pending_bytes_ = 0;               // under mutex_
    const gds_base::Datastore *store_ = nullptr;  // under mutex_: the datastore they belong to
    std::atomic<std::uint64_t> decoded_{0};
    const char *face_;
};

}  // namespace pmixpp::gds_base
