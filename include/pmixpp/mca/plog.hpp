// Framework interface "plog": the channels behind PMIx_Log_nb
// (see framework/plog/README.md for the contract).
//
// Every usable module is active. Each log entry's key names a channel
// (PMIX_LOG_SYSLOG, PMIX_LOG_EMAIL, ...); the framework base routes each entry
// to the modules that serve that channel, in priority order, and combines
// their per-entry results (PMIX_LOG_ONCE: stop at the first success).
#pragma once

#include "pmixpp/mca/sdk_types.hpp"

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pmixpp::mca::plog {

inline constexpr const char *kFrameworkName = "plog";
// Interface version a component of this framework is built against. The major
// must match the core's exactly; a component minor newer than the core's is refused.
// 2.0: a completion carries a reason with each status (EntryResult).
inline constexpr unsigned kInterfaceMajor = 2;
inline constexpr unsigned kInterfaceMinor = 0;

// A bool directive the base adds (true) to the directives a module sees when
// this process is a server started with PMIX_SERVER_GATEWAY: the node whose
// syslog is the "global" one. It never reaches the host.
inline constexpr const char *kGatewayDirective = "pmixpp.log.gateway";

// What became of one entry:
//   PMIX_SUCCESS      the entry was delivered to the channel;
//   kStatusDeclined   the module did not handle this entry (the base tries
//                     the next module serving the channel, then the host);
//   other             the channel failed for this entry, e.g.
//                     PMIX_ERR_BAD_PARAM (an email entry without an address),
//                     PMIX_ERR_UNREACH (mail server unreachable).
// `reason` says why, for the server's log line ("SMTP server answered 550 ...");
// empty when the status says it all.
struct EntryResult {
    pmix_status_t status = PMIX_SUCCESS;
    std::string reason;

    EntryResult(pmix_status_t s = PMIX_SUCCESS,
                std::string why = {})  // NOLINT: implicit on purpose
        : status(s), reason(std::move(why)) {}
    bool operator==(const EntryResult &other) const = default;
};

// Completes one log() call: one result per entry, in the order of the entries.
using LogCompletion = std::function<void(std::vector<EntryResult> per_entry)>;

// The module interface: what a component's create_module() returns.
// Every method runs on the progress thread.
class PMIXPP_SDK_EXPORT Module {
  public:
    // Completes every log() still pending (with an error status for entries
    // not delivered) before returning.
    virtual ~Module() = default;

    // The channel keys this module serves (PMIX_LOG_SYSLOG,
    // PMIX_LOG_LOCAL_SYSLOG, PMIX_LOG_GLOBAL_SYSLOG; PMIX_LOG_EMAIL).
    // Constant for the module's lifetime.
    virtual std::vector<std::string> channels() const = 0;

    // Whether entries with this key are routed to this module. Default: `key`
    // is one of channels().
    virtual bool serves(std::string_view key) const {
        for (const std::string &own : channels()) {
            if (own == key) return true;
        }
        return false;
    }

    // Log `entries` (each with a key this module serves) on behalf of
    // `source`. `directives` are the call's (PMIX_LOG_TIMESTAMP,
    // PMIX_LOG_GENERATE_TIMESTAMP, PMIX_LOG_SYSLOG_PRI, PMIX_LOG_SOURCE ...).
    // Arguments are borrowed for the call: a module that finishes later (SMTP)
    // copies what it needs before returning.
    // `done` must be called exactly once with entries.size() statuses, either
    // before log() returns or later from any thread (the core moves the
    // completion to the progress thread). Blocking work (network I/O) never
    // runs on the calling thread.
    virtual void log(const pmix_proc_t &source, std::span<const pmix_info_t> entries,
                     std::span<const pmix_info_t> directives, LogCompletion done) = 0;
};

}  // namespace pmixpp::mca::plog
