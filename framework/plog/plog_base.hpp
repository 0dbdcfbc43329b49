// The plog framework base: the usable logging channel modules, highest
// priority first, and the routing of one PMIx_Log call's entries to them
// (framework/plog/README.md).
//
// Threads: open() on the initializing thread; Router::log and every callback
// it makes on the progress thread (module completions that arrive on another
// thread are posted there first).
#pragma once

#include <pmix_common.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mca/select.hpp"
#include "pmixpp/mca/info_array.hpp"
#include "pmixpp/mca/plog.hpp"

namespace pmixpp::plog_base {

using Channels = mca::ModuleSet<mca::plog::Module>;

// Selects the logging channel modules of `repo` (runs on the initializing thread).
// Error no_module ("framework plog: no component found; search path: ...")
// when there is none: then every entry goes to the host's log upcall.
mca::McaResult<Channels> open(mca::ComponentRepository &repo);

// One PMIx_Log call as the base routes it. The caller (the server's Logging
// service) has filled in the source and stamped the timestamp directives.
struct LogCall {
    pmix_proc_t source{};
    mca::InfoArray data;        // the entries, in the caller's order
    mca::InfoArray directives;  // the caller's directives
    bool gateway = false;       // this server was started with PMIX_SERVER_GATEWAY
};

// What became of one entry.
struct EntryOutcome {
    std::string key;
    std::string channel;  // "plog_syslog", "host"; empty when not attempted
    bool attempted = false;
    mca::plog::EntryResult result{PMIX_ERR_NOT_SUPPORTED};
};

struct LogOutcome {
    // PMIX_SUCCESS: every requested entry was delivered (with PMIX_LOG_ONCE:
    // one was); PMIX_ERR_PARTIAL_SUCCESS: some were; else the entries'
    // common error (PMIX_ERROR when they failed differently).
    pmix_status_t status = PMIX_ERROR;
    std::vector<EntryOutcome> entries;
    // The failed entries, each with its channel, status and reason:
    // "pmix.log.email via plog_email: UNREACHABLE (connect to ...)"; empty when none failed.
    std::string failures() const;
};

// The combined status of per-entry outcomes (see LogOutcome::status).
pmix_status_t combine(const std::vector<EntryOutcome> &entries, bool once);

// Hands one entry no module took to the host; `done` exactly once, on the
// progress thread.
using HostLog =
    std::function<void(const pmix_info_t &entry, std::function<void(mca::plog::EntryResult)> done)>;

// A module as the router sees it: its name in failures ("plog_syslog") and
// the module.
struct NamedModule {
    std::string name;
    mca::plog::Module *module = nullptr;
};

class Router {
  public:
    // `channels` may be null: no plog component, every entry goes to `host`.
    explicit Router(std::shared_ptr<Channels> channels);
    // Any modules, highest priority first, kept alive by `keep` (unit tests).
    Router(std::vector<NamedModule> modules, std::shared_ptr<const void> keep)
        : modules_(std::move(modules)), keep_(std::move(keep)) {}

    // Routes each entry of `call` by its key to the modules serving it, in
    // priority order (a module that declines passes it to the next); an
    // entry no module takes goes to `host`. Without PMIX_LOG_ONCE every entry
    // is attempted; with it the entries are tried one after the other in the
    // caller's order until one is delivered. `done` exactly once, on the
    // progress thread, after every attempted entry completed.
    void log(std::shared_ptr<const LogCall> call, HostLog host,
             std::function<void(LogOutcome)> done) const;

    // "plog_syslog", ...: the modules, highest priority first.
    std::vector<std::string> components() const;

  private:
    std::vector<NamedModule> modules_;
    std::shared_ptr<const void> keep_;  // what owns the modules
};

}  // namespace pmixpp::plog_base
