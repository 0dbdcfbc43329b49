// The Monitoring service (monitoring.hpp, docs/monitoring.md).
//
// Without PMIX_SERVER_ENABLE_MONITORING every request goes to the host's
// monitor upcall (requestor = the client, its PMIX_USERID / PMIX_GRPID added);
// no upcall: PMIX_ERR_NOT_SUPPORTED. With it, a heartbeat or file monitor is
// offered to the psensor modules in priority order; a kind no module takes
// goes to the host as well, never to a silent success. Alerts are events:
// status = the caller's `error`, source = the monitored process, range
// PMIX_RANGE_NAMESPACE unless the request's PMIX_RANGE says otherwise, info:
// PMIX_MONITOR_ID, PMIX_MONITOR_APP_CONTROL (always: it tells the host whether
// to act), the kind (PMIX_MONITOR_HEARTBEAT, or PMIX_MONITOR_FILE = the file),
// PMIX_EVENT_TEXT_MESSAGE, PMIX_EVENT_AFFECTED_PROC.
#include "server/monitoring.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <set>
#include <utility>

#include "event/event.hpp"
#include "mca/logging.hpp"
#include "pmixpp/mca/info.hpp"
#include "pmixpp/mca/repository.hpp"
#include "runtime/progress.hpp"
#include "server/upcall_results.hpp"
#include "wire/codec.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using psensor_base::MonitorKind;
using runtime::ProgressEngine;
using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;

namespace {

auto log() {
    return mca::framework_logger("psensor");
}

void answer(const PendingReply &reply, pmix_status_t status, const HostArgs *results = nullptr) {
    BodyWriter w;
    w.i32(status);
    if (results != nullptr && results->info_size() > 0) {
        w.infos(results->info.data(), results->info.size());
    } else {
        w.infos(nullptr, 0);
    }
    send_reply(reply, w.take());
}

void refuse(const PendingReply &reply, pmix_status_t status, const std::string &why) {
    log()->info("server: {}", why);
    HostArgs results;
    results.add_string(PMIX_EVENT_TEXT_MESSAGE, why);
    answer(reply, status, &results);
}

pmix_data_range_t range_of(std::span<const pmix_info_t> directives) {
    const pmix_info_t *r = mca::find_info(directives, PMIX_RANGE);
    if (r == nullptr) return PMIX_RANGE_NAMESPACE;
    if (r->value.type == PMIX_DATA_RANGE) return r->value.data.range;
    if (auto v = mca::as_u32(r->value); v && *v <= PMIX_RANGE_PROC_LOCAL) {
        return static_cast<pmix_data_range_t>(*v);
    }
    return PMIX_RANGE_NAMESPACE;
}

}  // namespace

// The psensor modules' timers, on the progress thread's one-shot timers.
class Monitoring::Timers final : public mca::ProgressTimers {
  public:
    ~Timers() override {
        for (auto &[id, t] : timers_) ProgressEngine::instance().cancel(t.pending);
    }
    TimerId every(std::chrono::milliseconds period, std::function<void()> tick) override {
        const TimerId id = next_++;
        timers_[id] = Timer{period, std::move(tick), 0};
        arm(id);
        return id;
    }
    void cancel(TimerId id) override {
        auto it = timers_.find(id);
        if (it == timers_.end()) return;
        ProgressEngine::instance().cancel(it->second.pending);
        timers_.erase(it);
    }

  private:
    struct Timer {
        std::chrono::milliseconds period;
        std::function<void()> tick;
        std::uint64_t pending = 0;
    };
    void arm(TimerId id) {
        auto &t = timers_.at(id);
        t.pending = ProgressEngine::instance().after(t.period, [this, id] {
            auto it = timers_.find(id);
            if (it == timers_.end()) return;
            arm(id);  // first: the tick may cancel it
            auto tick = it->second.tick;
            tick();
        });
    }
    std::map<TimerId, Timer> timers_;
    TimerId next_ = 1;
};

Monitoring::Monitoring(ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
                       LibraryEvents &events)
    : clients_(clients), host_(host), events_(events) {
    requests.add(wire::Command::monitor,
                 [this](Channel &ch, Frame &f, ClientRecord *c) { handle_monitor(ch, f, c); });
    requests.add(wire::Command::heartbeat,
                 [this](Channel &ch, Frame &f, ClientRecord *c) { handle_heartbeat(ch, f, c); });
}

Monitoring::~Monitoring() = default;

void Monitoring::configure(std::span<const pmix_info_t> info) {
    clear();
    enabled_ = mca::info_flag(info, PMIX_SERVER_ENABLE_MONITORING).value_or(false);
    if (!enabled_) {
        log()->debug("server: monitoring requests go to the host (no {})",
                     PMIX_SERVER_ENABLE_MONITORING);
        return;
    }
    timers_ = std::make_unique<Timers>();
    auto opened = psensor_base::open(mca::ComponentRepository::process_wide());
    if (!opened) {
        log()->info("server: internal monitoring enabled but {}; requests go to the host",
                    opened.error().message);
        return;
    }
    sensors_ = std::make_unique<psensor_base::Sensors>(std::move(opened).value());
}

void Monitoring::clear() {
    monitors_.clear();
    sensors_.reset();  // the modules stop their monitors and cancel their timers
    timers_.reset();
    enabled_ = false;
}

void Monitoring::client_departed(const ProcKey &client, Departure why) {
    auto it = monitors_.find(client);
    if (it == monitors_.end()) return;
    log()->debug("server: {} {}: its {} monitor(s) stop", describe(client), to_string(why),
                 it->second.size());
    stop_internal(client, it->second);
    monitors_.erase(it);
}

void Monitoring::stop_internal(const ProcKey &proc, Monitors &mine) {
    std::set<mca::psensor::Module *> owners;
    for (const auto &[id, m] : mine) {
        if (m.owner != nullptr) owners.insert(m.owner);
    }
    const pmix_proc_t p = proc_of(proc);
    for (auto *owner : owners) (void)owner->stop(p, "");
}

// ---------------------------------------------------------------------------------------------
// requests

void Monitoring::handle_monitor(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    wire::InfoArray monitor, directives;
    std::int32_t code = 0;
    r.infos(monitor);
    r.i32(code);
    r.infos(directives);
    if (!r.finished() || client == nullptr || monitor.size() != 1) {
        ch.close("malformed monitor request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    const pmix_info_t &mon = monitor.data()[0];
    auto kind = psensor_base::check_request(&mon, directives.span());
    if (!kind) {
        refuse(reply, kind.status().code(), kind.status().message());
        return;
    }
    switch (kind.value()) {
        case MonitorKind::send_heartbeat:  // sent as a heartbeat message; accepted as a request too
            handle_heartbeat(ch, frame, client);
            answer(reply, PMIX_SUCCESS);
            return;
        case MonitorKind::cancel:
            cancel(reply, *client, mon, directives.span());
            return;
        default:
            start(reply, *client, mon, kind.value(), code, directives.span());
            return;
    }
}

void Monitoring::start(const PendingReply &reply, const ClientRecord &client,
                       const pmix_info_t &monitor, MonitorKind kind, pmix_status_t code,
                       std::span<const pmix_info_t> directives) {
    const ProcKey me = key_of(client.proc);
    const auto given = psensor_base::monitor_id(directives);
    Monitors &mine = monitors_[me];
    if (given && mine.count(*given) != 0) {
        refuse(reply, PMIX_ERR_EXISTS,
               fmt::format("PMIx_Process_monitor: {} already has a monitor with id '{}'",
                           describe(me), *given));
        return;
    }
    std::string id = given.value_or("");
    while (id.empty() || mine.count(id) != 0) id = fmt::format("pmixpp.monitor.{}", next_id_++);

    Monitor m;
    m.kind = kind;
    m.host_named = given.has_value();
    m.code = code;
    m.range = range_of(directives);
    m.app_control = mca::info_flag(directives, PMIX_MONITOR_APP_CONTROL).value_or(false);
    m.key = std::string(mca::info_key(monitor));

    if (enabled_ && sensors_ && kind != MonitorKind::resource_usage) {
        const mca::psensor::MonitorRequest request{client.proc, id, monitor, code, directives};
        for (auto *module : sensors_->modules()) {
            if (!module->accepts(request)) continue;
            mca::Status st = module->start(
                request, *timers_, [this](const mca::psensor::Violation &v) { on_violation(v); });
            if (st.code() == mca::kStatusDeclined) continue;
            if (!st.ok()) {
                refuse(reply, st.code(), st.message());
                return;
            }
            m.owner = module;
            mine.emplace(id, m);
            log()->info("server: {} monitors {} ({}, id '{}')", describe(me), m.key,
                        psensor_base::to_string(kind), id);
            HostArgs results;
            results.add_string(PMIX_MONITOR_ID, id);
            answer(reply, PMIX_SUCCESS, &results);
            return;
        }
    }
    // The host's: internal monitoring is off, or no module takes this kind.
    if (host_->monitor == nullptr) {
        refuse(reply, PMIX_ERR_NOT_SUPPORTED,
               fmt::format("PMIx_Process_monitor: no {} monitor here ({}; the host has no "
                           "monitor upcall)",
                           psensor_base::to_string(kind),
                           enabled_ ? "no psensor module takes it" : "internal monitoring off"));
        return;
    }
    // Held while the host decides, so that a second request with the same id
    // is refused meanwhile; forgotten if the host refuses (or the client left).
    mine.emplace(id, m);
    to_host(client, monitor, code, directives,
            [this, reply, me, id](pmix_status_t s, wire::InfoArray results) {
                if (s != PMIX_SUCCESS) {
                    if (auto it = monitors_.find(me); it != monitors_.end()) {
                        it->second.erase(id);
                        if (it->second.empty()) monitors_.erase(it);
                    }
                }
                send_reply(reply, BodyWriter().i32(s).infos(results.data(), results.size()).take());
            });
}

void Monitoring::cancel(const PendingReply &reply, const ClientRecord &client,
                        const pmix_info_t &monitor, std::span<const pmix_info_t> directives) {
    const ProcKey me = key_of(client.proc);
    const std::string id = psensor_base::cancel_id(monitor);
    // To the host; on its success `forget` updates our bookkeeping.
    auto forward = [&](std::function<void(pmix_status_t)> forget) {
        to_host(client, monitor, PMIX_SUCCESS, directives,
                [reply, forget](pmix_status_t s, wire::InfoArray results) {
                    if (s == PMIX_SUCCESS) forget(s);
                    send_reply(reply,
                               BodyWriter().i32(s).infos(results.data(), results.size()).take());
                });
    };
    if (!enabled_) {
        // Every request is the host's, cancels too.
        if (host_->monitor == nullptr) {
            refuse(reply, PMIX_ERR_NOT_SUPPORTED,
                   "PMIx_Process_monitor: cancel: internal monitoring off and the host has no "
                   "monitor upcall");
            return;
        }
        forward([this, me, id](pmix_status_t) {
            auto it = monitors_.find(me);
            if (it == monitors_.end()) return;
            if (id.empty()) {
                monitors_.erase(it);
            } else {
                it->second.erase(id);
            }
        });
        return;
    }
    auto it = monitors_.find(me);
    if (!id.empty()) {
        if (it == monitors_.end() || it->second.count(id) == 0) {
            refuse(reply, PMIX_ERR_NOT_FOUND,
                   fmt::format("PMIx_Process_monitor: cancel: {} has no monitor with id '{}'",
                               describe(me), id));
            return;
        }
        Monitor &m = it->second.at(id);
        if (m.owner == nullptr) {
            if (!m.host_named || host_->monitor == nullptr) {
                // The host never heard this id: it cannot cancel by it.
                refuse(reply, PMIX_ERR_NOT_SUPPORTED,
                       fmt::format("PMIx_Process_monitor: cancel: monitor '{}' is the host's "
                                   "and has no id the host knows; cancel all instead",
                                   id));
                return;
            }
            forward([this, me, id](pmix_status_t) {
                if (auto i = monitors_.find(me); i != monitors_.end()) i->second.erase(id);
            });
            return;
        }
        (void)m.owner->stop(client.proc, id);
        it->second.erase(id);
        log()->info("server: {} cancelled monitor '{}'", describe(me), id);
        answer(reply, PMIX_SUCCESS);
        return;
    }
    // All of the requestor's.
    bool host_has_some = false;
    if (it != monitors_.end()) {
        stop_internal(me, it->second);
        std::erase_if(it->second, [&](const auto &entry) {
            if (entry.second.owner == nullptr) {
                host_has_some = true;
                return false;
            }
            return true;
        });
    }
    log()->info("server: {} cancelled all its monitors", describe(me));
    if (host_has_some && host_->monitor != nullptr) {
        forward([this, me](pmix_status_t) { monitors_.erase(me); });
        return;
    }
    if (it != monitors_.end() && it->second.empty()) monitors_.erase(it);
    answer(reply, PMIX_SUCCESS);
}

void Monitoring::handle_heartbeat(Channel &, Frame &, ClientRecord *client) {
    if (client == nullptr) return;
    auto it = monitors_.find(key_of(client->proc));
    if (it == monitors_.end()) return;  // nothing monitors it: dropped
    bool internal = false, host = false;
    for (const auto &[id, m] : it->second) {
        if (m.kind != MonitorKind::heartbeat) continue;
        (m.owner != nullptr ? internal : host) = true;
    }
    if (internal && sensors_) {
        for (auto *module : sensors_->modules()) module->heartbeat(client->proc);
    }
    if (host && host_->monitor != nullptr) {
        pmix_info_t beat{};  // a bare key, as the standard's PMIx_Heartbeat() sends it
        PMIX_LOAD_KEY(beat.key, PMIX_SEND_HEARTBEAT);
        to_host(*client, beat, PMIX_SUCCESS, {}, [](pmix_status_t s, wire::InfoArray) {
            if (s != PMIX_SUCCESS) {
                log()->debug("server: the host's monitor upcall refused a heartbeat: {}",
                             PMIx_Error_string(s));
            }
        });
    }
}

void Monitoring::to_host(const ClientRecord &client, const pmix_info_t &monitor, pmix_status_t code,
                         std::span<const pmix_info_t> directives,
                         std::function<void(pmix_status_t, wire::InfoArray)> done) {
    auto mon = std::make_shared<HostInfo>();
    mon->add_copies(std::span<const pmix_info_t>(&monitor, 1), {});
    auto args = std::make_shared<HostInfo>();
    args->add_copies_as(directives, static_cast<std::uint32_t>(client.uid),
                        static_cast<std::uint32_t>(client.gid));
    const pmix_proc_t requestor = client.proc;
    call_host_info(
        [this, requestor, mon, args, code](pmix_info_cbfunc_t cb, void *cbdata) {
            return host_->monitor(&requestor, mon->data(), code, args->data(), args->size(), cb,
                                  cbdata);
        },
        [mon, args, done = std::move(done)](pmix_status_t s, wire::InfoArray results) {
            done(s, std::move(results));
        });
}

// ---------------------------------------------------------------------------------------------
// alerts

void Monitoring::on_violation(const mca::psensor::Violation &v) {
    const ProcKey who = key_of(v.requestor);
    auto it = monitors_.find(who);
    if (it == monitors_.end()) return;
    auto m = it->second.find(v.id);
    if (m == it->second.end() || m->second.owner == nullptr) return;  // stopped meanwhile
    const Monitor &mon = m->second;
    HostArgs info;
    info.add_string(PMIX_MONITOR_ID, v.id);
    info.add_bool(PMIX_MONITOR_APP_CONTROL, mon.app_control);
    if (mon.kind == MonitorKind::heartbeat) info.add_bool(PMIX_MONITOR_HEARTBEAT, true);
    if (!v.file.empty()) info.add_string(PMIX_MONITOR_FILE, v.file);
    info.add_string(PMIX_EVENT_TEXT_MESSAGE, v.reason);
    info.load(PMIX_EVENT_AFFECTED_PROC, &v.requestor, PMIX_PROC);
    log()->info("server: monitor '{}' of {}: {}", v.id, describe(who), v.reason);
    auto ev = std::make_shared<const events::Event>(
        events::Event::make(mon.code, &v.requestor, mon.range, info.info_data(), info.info_size()));
    events_.raise_from_library(std::move(ev));
}

}  // namespace pmixpp::server
