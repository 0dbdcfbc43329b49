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

#include <unistd.h>

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

// The standard's (v5, provisional) target directives, which PMIx 4.2's
// headers do not define.
constexpr const char *kTargetProcs = "pmix.monitor.tgtproc";
constexpr const char *kTargetPids = "pmix.monitor.tgtpid";
constexpr const char *kTargetNodes = "pmix.monitor.tgtnode";
constexpr const char *kTargetNodeIds = "pmix.monitor.tgtndids";
constexpr const char *kTargetDisks = "pmix.monitor.tgtdks";
constexpr const char *kTargetNets = "pmix.monitor.tgtnets";
constexpr const char *kLocalOnly = "pmix.monitor.local";

// The module's id of one watch: unique per (requestor, id), so that two
// requestors' monitors of one process never meet in a module.
std::string watch_id(const ProcKey &requestor, const std::string &id) {
    const std::string who = describe(requestor);
    return fmt::format("{}:{}/{}", who.size(), who, id);
}

// A PMIX_STRING, or a PMIX_DATA_ARRAY of PMIX_STRING; nullopt if neither or
// an entry is empty.
std::optional<std::vector<std::string>> strings_of(const pmix_value_t &v) {
    std::vector<std::string> out;
    if (v.type == PMIX_STRING && v.data.string != nullptr && v.data.string[0] != '\0') {
        out.emplace_back(v.data.string);
        return out;
    }
    if (v.type != PMIX_DATA_ARRAY || v.data.darray == nullptr ||
        v.data.darray->type != PMIX_STRING || v.data.darray->size == 0 ||
        v.data.darray->array == nullptr) {
        return std::nullopt;
    }
    auto **names = static_cast<char **>(v.data.darray->array);
    for (std::size_t i = 0; i < v.data.darray->size; ++i) {
        if (names[i] == nullptr || names[i][0] == '\0') return std::nullopt;
        out.emplace_back(names[i]);
    }
    return out;
}

// A PMIX_UINT32 (or another integer), or a PMIX_DATA_ARRAY of PMIX_UINT32.
std::optional<std::vector<std::uint32_t>> u32s_of(const pmix_value_t &v) {
    std::vector<std::uint32_t> out;
    if (auto one = mca::as_u32(v)) {
        out.push_back(*one);
        return out;
    }
    if (v.type != PMIX_DATA_ARRAY || v.data.darray == nullptr ||
        v.data.darray->type != PMIX_UINT32 || v.data.darray->size == 0 ||
        v.data.darray->array == nullptr) {
        return std::nullopt;
    }
    const auto *ids = static_cast<const std::uint32_t *>(v.data.darray->array);
    out.assign(ids, ids + v.data.darray->size);
    return out;
}

// Whether an event of `source` with `range` reaches `proc` (the requestor
// of the monitor): otherwise the alert is also sent to it alone.
bool range_reaches(pmix_data_range_t range, const ProcKey &source, const ProcKey &proc) {
    switch (range) {
        case PMIX_RANGE_PROC_LOCAL:
            return source == proc;
        case PMIX_RANGE_NAMESPACE:
            return source.first == proc.first;
        case PMIX_RANGE_CUSTOM:  // the request cannot name the custom range
        case PMIX_RANGE_RM:
            return false;
        default:  // UNDEF, LOCAL, SESSION, GLOBAL: every local process
            return true;
    }
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

// What resolve_targets found.
struct Monitoring::Targets {
    std::vector<ProcKey> procs;  // to watch here (the requestor when no target is named)
    // Named targets beyond this node (other nodes, processes not known here),
    // for the refusal's reason; empty: none. Such a request is the host's.
    std::string elsewhere;
    pmix_status_t elsewhere_status = PMIX_ERR_NOT_SUPPORTED;  // when no host takes it
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
    // This node, for PMIX_MONITOR_TARGET_NODES / _NODEIDS.
    hostname_ = mca::info_string(info, PMIX_HOSTNAME).value_or("");
    if (hostname_.empty()) {
        char host[256] = {};
        if (gethostname(host, sizeof host - 1) == 0) hostname_ = host;
    }
    nodeid_.reset();
    if (const pmix_info_t *n = mca::find_info(info, PMIX_NODEID)) nodeid_ = mca::as_u32(n->value);
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
    watching_.clear();
    sensors_.reset();  // the modules stop their monitors and cancel their timers
    timers_.reset();
    enabled_ = false;
}

void Monitoring::client_departed(const ProcKey &client, Departure why) {
    // Its own monitors stop.
    if (auto it = monitors_.find(client); it != monitors_.end()) {
        log()->debug("server: {} {}: its {} monitor(s) stop", describe(client), to_string(why),
                     it->second.size());
        for (auto &[id, m] : it->second) stop_monitor(client, id, m);
        monitors_.erase(it);
    }
    // Others' monitors stop watching it (its end is the host's to report);
    // a monitor left watching nothing ends.
    auto w = watching_.find(client);
    if (w == watching_.end()) return;
    const auto refs = std::move(w->second);
    watching_.erase(w);
    for (const auto &[wid, ref] : refs) {
        auto owner = monitors_.find(ref.first);
        if (owner == monitors_.end()) continue;
        auto m = owner->second.find(ref.second);
        if (m == owner->second.end() || m->second.owner == nullptr) continue;
        (void)m->second.owner->stop(proc_of(client), wid);
        std::erase(m->second.watched, client);
        log()->debug("server: monitor '{}' of {} no longer watches {} ({})", ref.second,
                     describe(ref.first), describe(client), to_string(why));
        if (m->second.watched.empty()) {
            owner->second.erase(m);
            if (owner->second.empty()) monitors_.erase(owner);
        }
    }
}

void Monitoring::stop_monitor(const ProcKey &requestor, const std::string &id, Monitor &m) {
    if (m.owner == nullptr) return;
    const std::string wid = watch_id(requestor, id);
    for (const ProcKey &w : m.watched) {
        (void)m.owner->stop(proc_of(w), wid);
        if (auto it = watching_.find(w); it != watching_.end()) {
            it->second.erase(wid);
            if (it->second.empty()) watching_.erase(it);
        }
    }
    const auto watched = std::move(m.watched);
    m.watched.clear();
    if (m.kind != MonitorKind::heartbeat) return;
    for (const ProcKey &w : watched) {
        if (w != requestor) send_heartbeats_wanted(w);
    }
}

bool Monitoring::heartbeats_wanted(const ProcKey &proc) const {
    if (auto it = watching_.find(proc); it != watching_.end()) {
        for (const auto &[wid, ref] : it->second) {
            auto owner = monitors_.find(ref.first);
            if (owner == monitors_.end()) continue;
            auto m = owner->second.find(ref.second);
            if (m != owner->second.end() && m->second.kind == MonitorKind::heartbeat) return true;
        }
    }
    if (auto it = monitors_.find(proc); it != monitors_.end()) {
        for (const auto &[id, m] : it->second) {
            if (m.owner == nullptr && m.kind == MonitorKind::heartbeat) return true;
        }
    }
    return false;
}

void Monitoring::send_heartbeats_wanted(const ProcKey &proc) {
    ClientRecord *c = clients_.find_client(proc);
    if (c == nullptr || !c->running() || !c->channel) return;
    const auto body = BodyWriter().u8(heartbeats_wanted(proc) ? 1 : 0).take();
    (void)c->channel->send(static_cast<std::uint16_t>(wire::Command::heartbeat_wanted), 0, 0, body);
}

// PMIX_MONITOR_TARGET_PROCS (heartbeat monitors: each process, or every rank
// of a namespace for PMIX_RANK_WILDCARD), PMIX_MONITOR_TARGET_NODES /
// _NODEIDS (heartbeat: every process of this node the requestor may watch;
// file: where the files are watched), PMIX_MONITOR_LOCAL_ONLY (what lies
// beyond this node is dropped). A process the requestor may watch: its own
// user's, or any for root.
pmix_status_t Monitoring::resolve_targets(const ClientRecord &client, MonitorKind kind,
                                          std::span<const pmix_info_t> directives, Targets &out,
                                          std::string &why) {
    const ProcKey me = key_of(client.proc);
    const bool local_only = mca::info_flag(directives, kLocalOnly).value_or(false);
    std::vector<pmix_proc_t> procs;
    bool procs_given = false, nodes_given = false, here = false;
    std::vector<std::string> away;
    for (const pmix_info_t &d : directives) {
        const std::string_view key = mca::info_key(d);
        if (key == kTargetProcs) {
            procs_given = true;
            auto p = events::procs_of(d.value);
            if (p.empty()) {
                why =
                    "PMIx_Process_monitor: PMIX_MONITOR_TARGET_PROCS needs a pmix_proc_t or a "
                    "data array of them";
                return PMIX_ERR_BAD_PARAM;
            }
            procs.insert(procs.end(), p.begin(), p.end());
        } else if (key == kTargetNodes) {
            nodes_given = true;
            auto names = strings_of(d.value);
            if (!names) {
                why =
                    "PMIx_Process_monitor: PMIX_MONITOR_TARGET_NODES needs host names (a "
                    "string or a data array of strings)";
                return PMIX_ERR_BAD_PARAM;
            }
            for (const auto &n : *names) {
                if (n == hostname_) {
                    here = true;
                } else {
                    away.push_back("node " + n);
                }
            }
        } else if (key == kTargetNodeIds) {
            nodes_given = true;
            auto ids = u32s_of(d.value);
            if (!ids) {
                why =
                    "PMIx_Process_monitor: PMIX_MONITOR_TARGET_NODEIDS needs node ids (a "
                    "uint32 or a data array of them)";
                return PMIX_ERR_BAD_PARAM;
            }
            for (std::uint32_t n : *ids) {
                if (nodeid_ && n == *nodeid_) {
                    here = true;
                } else {
                    away.push_back(fmt::format("node id {}", n));
                }
            }
        } else if (key == kTargetPids || key == kTargetDisks || key == kTargetNets) {
            why = fmt::format(
                "PMIx_Process_monitor: {} applies to resource-usage monitors, which this server "
                "does not serve",
                key);
            return PMIX_ERR_NOT_SUPPORTED;
        }
    }
    if (procs_given && kind != MonitorKind::heartbeat) {
        why = fmt::format(
            "PMIx_Process_monitor: PMIX_MONITOR_TARGET_PROCS does not apply to a {} monitor "
            "(heartbeat monitors and resource usage only)",
            psensor_base::to_string(kind));
        return PMIX_ERR_BAD_PARAM;
    }
    if (local_only) here = true;
    auto may_watch = [&](const ClientRecord &c) { return client.uid == 0 || c.uid == client.uid; };
    auto add = [&](const ProcKey &k) {
        if (std::find(out.procs.begin(), out.procs.end(), k) == out.procs.end())
            out.procs.push_back(k);
    };
    if (kind != MonitorKind::heartbeat || (!procs_given && !nodes_given)) {
        add(me);
    }
    if (kind == MonitorKind::heartbeat) {
        for (const pmix_proc_t &p : procs) {
            const ProcKey k = key_of(p);
            std::vector<const ClientRecord *> found;
            if (p.rank == PMIX_RANK_WILDCARD) {
                if (const JobRecord *job = clients_.find_job(k.first)) {
                    for (const auto &[rank, c] : job->clients) {
                        if (!c.gone()) found.push_back(&c);
                    }
                }
            } else if (ClientRecord *c = clients_.find_client(k); c != nullptr && !c->gone()) {
                found.push_back(c);
            }
            if (found.empty()) {
                away.push_back("process " + describe(k));
                out.elsewhere_status = PMIX_ERR_NOT_FOUND;
                continue;
            }
            for (const ClientRecord *c : found) {
                if (!may_watch(*c)) {
                    why = fmt::format("PMIx_Process_monitor: {} (uid {}) may not watch {} (uid {})",
                                      describe(me), client.uid, describe(key_of(c->proc)), c->uid);
                    return PMIX_ERR_NO_PERMISSIONS;
                }
                add(key_of(c->proc));
            }
        }
        if (nodes_given && here) {
            for (const auto &[ns, job] : clients_.jobs()) {
                for (const auto &[rank, c] : job.clients) {
                    if (c.running() && may_watch(c)) add(key_of(c.proc));
                }
            }
        }
    }
    if (!away.empty() && !local_only) {
        std::string list;
        for (const auto &a : away) list += (list.empty() ? "" : ", ") + a;
        out.elsewhere = list;
        return PMIX_SUCCESS;
    }
    if (out.procs.empty()) {
        why = "PMIx_Process_monitor: the targets name no process of this node to watch";
        return PMIX_ERR_NOT_FOUND;
    }
    return PMIX_SUCCESS;
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

    // The library's kinds: where the targets are. Targets beyond this node
    // make the request the host's (the standard: the library passes on what
    // involves other nodes). Everything else is the host's as it came.
    const bool internal = enabled_ && sensors_ && kind != MonitorKind::resource_usage;
    Targets targets;
    if (internal) {
        std::string why;
        if (pmix_status_t rc = resolve_targets(client, kind, directives, targets, why);
            rc != PMIX_SUCCESS) {
            refuse(reply, rc, why);
            return;
        }
    }
    const bool beyond = !targets.elsewhere.empty();
    if (internal && !beyond) {
        const std::string wid = watch_id(me, id);
        auto raise = [this](const mca::psensor::Violation &v) { on_violation(v); };
        for (auto *module : sensors_->modules()) {
            std::vector<ProcKey> started;
            mca::Status st = mca::Status::success();
            bool declined = false;
            for (const ProcKey &w : targets.procs) {
                const pmix_proc_t wp = proc_of(w);
                const mca::psensor::MonitorRequest request{wp, wid, monitor, code, directives};
                if (!module->accepts(request)) {
                    declined = true;
                    break;
                }
                st = module->start(request, *timers_, raise);
                if (st.code() == mca::kStatusDeclined) declined = true;
                if (declined || !st.ok()) break;
                started.push_back(w);
            }
            if (declined || !st.ok()) {
                for (const ProcKey &w : started) (void)module->stop(proc_of(w), wid);
                if (declined) continue;
                refuse(reply, st.code(), st.message());
                return;
            }
            m.owner = module;
            m.watched = targets.procs;
            for (const ProcKey &w : m.watched) watching_[w][wid] = {me, id};
            mine.emplace(id, m);
            log()->info("server: {} monitors {} ({}, id '{}', {} process(es))", describe(me), m.key,
                        psensor_base::to_string(kind), id, m.watched.size());
            HostArgs results;
            results.add_string(PMIX_MONITOR_ID, id);
            answer(reply, PMIX_SUCCESS, &results);
            if (kind == MonitorKind::heartbeat) {
                for (const ProcKey &w : m.watched) {
                    if (w != me) send_heartbeats_wanted(w);  // after the reply
                }
            }
            return;
        }
    }
    if (beyond && host_->monitor == nullptr) {
        refuse(reply, targets.elsewhere_status,
               fmt::format("PMIx_Process_monitor: the targets name {}, beyond this node ({}), "
                           "and the host has no monitor upcall to reach them (add {} to watch "
                           "this node's part only)",
                           targets.elsewhere, hostname_, "PMIX_MONITOR_LOCAL_ONLY"));
        return;
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
        stop_monitor(me, id, m);
        it->second.erase(id);
        log()->info("server: {} cancelled monitor '{}'", describe(me), id);
        answer(reply, PMIX_SUCCESS);
        return;
    }
    // All of the requestor's.
    bool host_has_some = false;
    if (it != monitors_.end()) {
        for (auto &[mid, m] : it->second) stop_monitor(me, mid, m);
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
    // The client stops beating after cancelling all of its own; others' monitors
    // may still watch it.
    if (heartbeats_wanted(me)) send_heartbeats_wanted(me);
}

void Monitoring::handle_heartbeat(Channel &, Frame &, ClientRecord *client) {
    if (client == nullptr) return;
    const ProcKey from = key_of(client->proc);
    bool internal = false, host = false;
    if (auto w = watching_.find(from); w != watching_.end()) {
        for (const auto &[wid, ref] : w->second) {
            auto owner = monitors_.find(ref.first);
            if (owner == monitors_.end()) continue;
            auto m = owner->second.find(ref.second);
            if (m != owner->second.end() && m->second.kind == MonitorKind::heartbeat)
                internal = true;
        }
    }
    if (auto it = monitors_.find(from); it != monitors_.end()) {
        for (const auto &[id, m] : it->second) {
            if (m.kind == MonitorKind::heartbeat && m.owner == nullptr) host = true;
        }
    }
    if (!internal && !host) return;  // nothing monitors it: dropped
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
    const ProcKey watched = key_of(v.requestor);
    auto w = watching_.find(watched);
    if (w == watching_.end()) return;
    auto ref = w->second.find(v.id);
    if (ref == w->second.end()) return;  // stopped meanwhile
    const auto [requestor, id] = ref->second;
    auto owner = monitors_.find(requestor);
    if (owner == monitors_.end()) return;
    auto m = owner->second.find(id);
    if (m == owner->second.end() || m->second.owner == nullptr) return;
    const Monitor &mon = m->second;
    HostArgs info;
    info.add_string(PMIX_MONITOR_ID, id);
    info.add_bool(PMIX_MONITOR_APP_CONTROL, mon.app_control);
    if (mon.kind == MonitorKind::heartbeat) info.add_bool(PMIX_MONITOR_HEARTBEAT, true);
    if (!v.file.empty()) info.add_string(PMIX_MONITOR_FILE, v.file);
    info.add_string(PMIX_EVENT_TEXT_MESSAGE, v.reason);
    info.load(PMIX_EVENT_AFFECTED_PROC, &v.requestor, PMIX_PROC);
    log()->info("server: monitor '{}' of {}: {}", id, describe(requestor), v.reason);
    auto ev = std::make_shared<const events::Event>(
        events::Event::make(mon.code, &v.requestor, mon.range, info.info_data(), info.info_size()));
    events_.raise_from_library(std::move(ev));
    if (range_reaches(mon.range, watched, requestor)) return;
    // The requestor always hears of its monitor's alert: to it alone too.
    const pmix_proc_t to = proc_of(requestor);
    info.load(PMIX_EVENT_CUSTOM_RANGE, &to, PMIX_PROC);
    auto direct = std::make_shared<const events::Event>(events::Event::make(
        mon.code, &v.requestor, PMIX_RANGE_CUSTOM, info.info_data(), info.info_size()));
    events_.raise_to_clients(std::move(direct));
}

}  // namespace pmixpp::server
