// Framework interface "gds": the datastore of everything a process knows about
// jobs, applications, nodes and processes (see framework/gds/README.md).
//
// One module per process: the highest-priority usable one. The core keeps a
// reader/writer lock around it: PMIx_Get of data already held is answered in
// the caller's thread under the reader lock, without a hop through the
// progress thread.
#pragma once

#include "pmixpp/mca/sdk_types.hpp"

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace pmixpp::mca::gds {

inline constexpr const char *kFrameworkName = "gds";
// Interface version a component of this framework is built against. The major
// must match the core's exactly; a component minor newer than the core's is refused.
inline constexpr unsigned kInterfaceMajor = 1;
inline constexpr unsigned kInterfaceMinor = 2;  // 1.1: assemble_modex_pending; 1.2: _scope

// Receives one value found by fetch(). Borrowed: valid only during the call;
// the receiver deep-copies it (PMIx_Get returns a copy the caller frees).
using ValueSink = std::function<void(const pmix_value_t &value)>;

// A blob: the module's own serialization of some of its data. Opaque to the
// core, which only ships it (to the server, to the host's fence upcall, to a
// client at connect) and hands it back to a module of the same kind. It is
// self-describing: it names its format (module and version) so that a store_*
// call can refuse a blob it cannot read.
using Blob = std::vector<std::byte>;

// The module interface: what a component's create_module() returns.
//
// Threads and locking:
// - Non-const methods (the writers) run on the progress thread while the core
//   holds its writer lock: no other method of the module runs at the same time.
// - Const methods (the readers) may run on any thread, concurrently with each
//   other, while the core holds its reader lock. They must not change state
//   (no unguarded caches in `mutable` members).
// - Sinks are called inline, before the method returns, still under the lock:
//   they copy the value and never call back into the module.
//
// Ownership: every pointer, span and pmix_value_t handed to a method is
// borrowed for the call; a module that keeps data deep-copies it.
//
// Processes: `proc.rank == PMIX_RANK_WILDCARD` designates the job itself
// (job-level keys). Scopes are PMIx's: PMIX_LOCAL and PMIX_REMOTE limit who may
// see a value, PMIX_GLOBAL is for everyone, PMIX_INTERNAL never leaves this
// process.
class PMIXPP_SDK_EXPORT Module {
  public:
    virtual ~Module() = default;

    // --- writers ---------------------------------------------------------

    // Store what the host registered for a job (PMIx_server_register_nspace):
    // job-level keys, and the PMIX_SESSION_INFO_ARRAY, PMIX_JOB_INFO_ARRAY,
    // PMIX_APP_INFO_ARRAY, PMIX_NODE_INFO_ARRAY and PMIX_PROC_INFO_ARRAY
    // entries with their members (rank first in a proc array). Registering a
    // job again adds to and replaces keys of the earlier registration.
    // Errors: PMIX_ERR_BAD_PARAM with a message naming the malformed key.
    virtual Status register_job(std::string_view nspace, std::span<const pmix_info_t> info) = 0;

    // Store one value for `proc` in `scope`: PMIx_Put of this process,
    // PMIx_Store_internal (PMIX_INTERNAL), values the server learns later. A
    // value for an existing key replaces it (scope included). Visible to
    // fetch() at once; it joins the modex at the next commit().
    virtual Status store(const pmix_proc_t &proc, pmix_scope_t scope, std::string_view key,
                         const pmix_value_t &value) = 0;

    // Mark everything stored for `proc` so far as committed (PMIx_Commit):
    // assemble_modex() includes only committed values.
    virtual Status commit(const pmix_proc_t &proc) = 0;

    // Store a blob made by assemble_modex() for `proc` (from the local
    // client's commit, a fence, or a direct modex). Its values replace those
    // already held for the same keys and keep the scopes they were put with.
    // Errors: PMIX_ERR_UNPACK_FAILURE (truncated, corrupt or foreign blob), in
    // which case nothing of the blob is stored.
    virtual Status store_modex(const pmix_proc_t &proc, std::span<const std::byte> blob) = 0;

    // Store a blob made by assemble_job() (a client receiving its job's info
    // at connect). Same rules as store_modex().
    virtual Status store_job(std::string_view nspace, std::span<const std::byte> blob) = 0;

    // Forget a job and all its processes' data (PMIx_server_deregister_nspace,
    // a client leaving a job it connected to). Unknown nspace: success.
    virtual Status delete_job(std::string_view nspace) = 0;

    // --- readers ---------------------------------------------------------

    // Find `key` for `proc`. `qualifiers` (PMIx 4 Get qualifiers) select among
    // several values of one key: PMIX_HOSTNAME / PMIX_NODEID for node-level
    // keys, PMIX_APPNUM for app-level keys, PMIX_SESSION_ID.
    // On success calls `found` exactly once with the value, of exactly the
    // type it was registered or put with. Errors: PMIX_ERR_NOT_FOUND (the
    // store has nothing for this key: the core may ask the server or host).
    virtual Status fetch(const pmix_proc_t &proc, std::string_view key,
                         std::span<const pmix_info_t> qualifiers, const ValueSink &found) const = 0;

    // Call `each` once per key held for `proc` (PMIx_Get with a NULL key),
    // PMIX_INTERNAL (Store_internal) values included. Errors: PMIX_ERR_NOT_FOUND (nothing held
    // for `proc`).
    virtual Status fetch_all(const pmix_proc_t &proc, const KeyValueSink &each) const = 0;

    // Serialize the committed values of `proc` that `audience` may see:
    // PMIX_LOCAL -> PMIX_LOCAL and PMIX_GLOBAL values (for peers on this
    // node); PMIX_REMOTE -> PMIX_REMOTE and PMIX_GLOBAL values (for other
    // nodes). Never PMIX_INTERNAL values. A process with nothing committed
    // gives a valid, empty blob. Errors: PMIX_ERR_BAD_PARAM (other audience).
    virtual Result<Blob> assemble_modex(const pmix_proc_t &proc, pmix_scope_t audience) const = 0;

    // Serialize everything a client of job `nspace` needs at connect: job,
    // app, node and proc info registered for the job. Errors:
    // PMIX_ERR_NOT_FOUND (job not registered).
    virtual Result<Blob> assemble_job(std::string_view nspace) const = 0;

    // --- interface 1.1 (the core calls these only on a module built against 1.1 or later) ---

    // Like assemble_modex(), but only the values stored for `proc` since its
    // last commit(): what the next commit adds. The core calls it just before
    // commit() under the same writer lock, and sends the result instead of the
    // whole history (a blob stored with store_modex() merges into what the
    // receiver holds). Nothing stored since: a valid, empty blob.
    virtual Result<Blob> assemble_modex_pending(const pmix_proc_t &proc,
                                                pmix_scope_t audience) const = 0;

    // --- interface 1.2 (the core calls it only on a module built against 1.2 or later) ---

    // The values of `proc` put with exactly `scope` (PMIX_LOCAL, PMIX_REMOTE
    // or PMIX_GLOBAL): the committed ones, or with `pending` only those
    // stored since its last commit() (as assemble_modex_pending). A commit
    // sends each value once: the GLOBAL blob joins the LOCAL one for peers on
    // this node and the REMOTE one for other nodes (blobs stored one after
    // the other with store_modex() merge). Errors: PMIX_ERR_BAD_PARAM
    // (another scope).
    virtual Result<Blob> assemble_modex_scope(const pmix_proc_t &proc, pmix_scope_t scope,
                                              bool pending) const = 0;
};

}  // namespace pmixpp::mca::gds
