// Routing one PMIx_Log call's entries to the plog modules and the host
// (plog_base.hpp, README.md).
#include <spdlog/fmt/fmt.h>

#include <cstring>

#include "plog/plog_base.hpp"
#include "pmixpp/mca/info.hpp"
#include "runtime/progress.hpp"

namespace pmixpp::plog_base {

using mca::plog::EntryResult;
using runtime::ProgressEngine;

std::string LogOutcome::failures() const {
    std::string out;
    for (const auto &e : entries) {
        if (!e.attempted || e.result.status == PMIX_SUCCESS) continue;
        if (!out.empty()) out += "; ";
        out += fmt::format("{} via {}: {}", e.key, e.channel, PMIx_Error_string(e.result.status));
        if (!e.result.reason.empty()) out += " (" + e.result.reason + ")";
    }
    return out;
}

pmix_status_t combine(const std::vector<EntryOutcome> &entries, bool once) {
    std::size_t delivered = 0, requested = 0;
    pmix_status_t common = PMIX_SUCCESS;
    bool differ = false;
    for (const auto &e : entries) {
        if (!e.attempted) continue;  // PMIX_LOG_ONCE: the ones after the delivered one
        ++requested;
        if (e.result.status == PMIX_SUCCESS) {
            ++delivered;
            continue;
        }
        if (common == PMIX_SUCCESS) {
            common = e.result.status;
        } else if (common != e.result.status) {
            differ = true;
        }
    }
    if (requested == 0) return PMIX_ERR_BAD_PARAM;  // nothing to log
    if (delivered > 0 && (once || delivered == requested)) return PMIX_SUCCESS;
    if (delivered > 0) return PMIX_ERR_PARTIAL_SUCCESS;
    return differ ? PMIX_ERROR : common;
}

namespace {

// The state of one routed call, shared by the attempts' continuations.
struct Routing {
    std::shared_ptr<const LogCall> call;
    std::vector<NamedModule> modules;
    std::shared_ptr<const void> keep;  // the modules stay alive until done
    HostLog host;
    std::function<void(LogOutcome)> done;
    mca::InfoArray module_directives;  // the caller's + kGatewayDirective
    std::vector<EntryOutcome> outcomes;
    std::size_t pending = 0;
    bool once = false;
};

void attempt(const std::shared_ptr<Routing> &r, std::size_t entry, std::size_t first_module);

void finish(const std::shared_ptr<Routing> &r) {
    LogOutcome out;
    out.entries = std::move(r->outcomes);
    out.status = combine(out.entries, r->once);
    auto done = std::move(r->done);
    done(std::move(out));
}

// One entry's result is in (progress thread).
void settle(const std::shared_ptr<Routing> &r, std::size_t entry, EntryResult result) {
    r->outcomes[entry].result = std::move(result);
    if (r->once) {
        if (r->outcomes[entry].result.status == PMIX_SUCCESS || entry + 1 == r->outcomes.size()) {
            finish(r);
        } else {
            attempt(r, entry + 1, 0);
        }
        return;
    }
    if (--r->pending == 0) finish(r);
}

void attempt(const std::shared_ptr<Routing> &r, std::size_t entry, std::size_t first_module) {
    const pmix_info_t &info = r->call->data.data()[entry];
    EntryOutcome &out = r->outcomes[entry];
    out.attempted = true;
    for (std::size_t m = first_module; m < r->modules.size(); ++m) {
        mca::plog::Module *module = r->modules[m].module;
        if (!module->serves(out.key)) continue;
        out.channel = r->modules[m].name;
        // A module completes inline or from any thread: its result is always
        // taken up on the progress thread, after log() returned.
        module->log(r->call->source, std::span<const pmix_info_t>(&info, 1),
                    r->module_directives.span(), [r, entry, m](std::vector<EntryResult> per_entry) {
                        EntryResult result =
                            per_entry.size() == 1
                                ? std::move(per_entry.front())
                                : EntryResult(PMIX_ERROR, "the module answered " +
                                                              std::to_string(per_entry.size()) +
                                                              " results for one entry");
                        ProgressEngine::instance().post([r, entry, m, result = std::move(result)] {
                            if (result.status == mca::kStatusDeclined) {
                                attempt(r, entry, m + 1);
                            } else {
                                settle(r, entry, result);
                            }
                        });
                    });
        return;
    }
    out.channel = "host";
    r->host(info, [r, entry](EntryResult result) { settle(r, entry, std::move(result)); });
}

}  // namespace

void Router::log(std::shared_ptr<const LogCall> call, HostLog host,
                 std::function<void(LogOutcome)> done) const {
    auto r = std::make_shared<Routing>();
    r->call = std::move(call);
    r->modules = modules_;
    r->keep = keep_;
    r->host = std::move(host);
    r->done = std::move(done);
    r->module_directives = mca::InfoArray::copy_of(r->call->directives.span());
    if (r->call->gateway) {
        pmix_info_t gw{};
        bool yes = true;
        PMIx_Info_load(&gw, mca::plog::kGatewayDirective, &yes, PMIX_BOOL);
        r->module_directives.adopt(gw);
    }
    r->once = mca::info_flag(r->call->directives.span(), PMIX_LOG_ONCE).value_or(false);
    const std::size_t n = r->call->data.size();
    r->outcomes.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        r->outcomes[i].key = std::string(mca::info_key(r->call->data.data()[i]));
    }
    if (n == 0) {
        finish(r);
        return;
    }
    if (r->once) {
        attempt(r, 0, 0);
        return;
    }
    r->pending = n;
    for (std::size_t i = 0; i < n; ++i) attempt(r, i, 0);
}

Router::Router(std::shared_ptr<Channels> channels) {
    if (!channels) return;
    for (const auto &s : channels->selected())
        modules_.push_back({"plog_" + s.component, s.module});
    keep_ = std::move(channels);
}

std::vector<std::string> Router::components() const {
    std::vector<std::string> out;
    for (const auto &m : modules_) out.push_back(m.name);
    return out;
}

}  // namespace pmixpp::plog_base
