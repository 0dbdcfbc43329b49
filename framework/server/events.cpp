// The server's side of event notification (framework/event/README.md):
// clients' handler registrations, routing of events from clients and from
// the host to the local clients in range, the event cache (evcache) and its
// replay to late registrants, and the host's register_events / notify_event
// upcalls. Progress thread only.
#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include <spdlog/fmt/fmt.h>

#include "event/process_events.hpp"
#include "mca/logging.hpp"
#include "server/event_router.hpp"
#include "server/upcalls.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using events::Event;
using wire::BodyReader;
using wire::Channel;
using wire::Frame;

namespace {

auto log() {
    return mca::framework_logger("server");
}

// The codes of a registration in one order: the key under which the host was
// asked for them (register_events once per set of codes).
std::vector<pmix_status_t> sorted_codes(std::vector<pmix_status_t> codes) {
    std::sort(codes.begin(), codes.end());
    return codes;
}

bool same_nspace(const pmix_proc_t &a, const pmix_proc_t &b) {
    return std::strncmp(a.nspace, b.nspace, PMIX_MAX_NSLEN) == 0;
}

// Whether `proc` is a target of `ev` by the notifier's range.
bool in_range(const Event &ev, const pmix_proc_t &proc) {
    switch (ev.range) {
        case PMIX_RANGE_PROC_LOCAL:
            return events::same_proc(ev.source, proc);
        case PMIX_RANGE_NAMESPACE:
            if (!ev.from_sms()) return same_nspace(ev.source, proc);
            // From the SMS: the jobs of the affected processes (all if none named).
            return ev.affected.empty() ||
                   std::any_of(ev.affected.begin(), ev.affected.end(),
                               [&](const pmix_proc_t &p) { return same_nspace(p, proc); });
        case PMIX_RANGE_CUSTOM:
            return std::any_of(ev.custom_range.begin(), ev.custom_range.end(),
                               [&](const pmix_proc_t &p) { return events::proc_matches(p, proc); });
        case PMIX_RANGE_RM:
            return false;
        default:  // UNDEF, LOCAL, SESSION, GLOBAL
            return true;
    }
}

// The one job an event is aimed at, or "" (cached as an environment event).
std::string job_of(const Event &ev) {
    const std::vector<pmix_proc_t> *targets = nullptr;
    if (ev.range == PMIX_RANGE_NAMESPACE) {
        if (!ev.from_sms())
            return std::string(ev.source.nspace, strnlen(ev.source.nspace, PMIX_MAX_NSLEN));
        targets = &ev.affected;
    } else if (ev.range == PMIX_RANGE_CUSTOM) {
        targets = &ev.custom_range;
    }
    if (targets == nullptr || targets->empty()) return {};
    const pmix_proc_t &first = targets->front();
    for (const auto &p : *targets) {
        if (!same_nspace(p, first)) return {};
    }
    return std::string(first.nspace, strnlen(first.nspace, PMIX_MAX_NSLEN));
}

void put_u64_le(std::uint8_t *at, std::uint64_t x) {
    for (int i = 0; i < 8; ++i) at[i] = static_cast<std::uint8_t>(x >> (8 * i));
}

// An `event` message: whether it is a replay to registration `id` only,
// `id`, the event's sequence number, the event (Event::encode). Written into
// one buffer of its final size (the wire encoding of BodyWriter's boolean
// and u64 fields).
std::vector<std::uint8_t> event_message(bool targeted, std::uint64_t id, std::uint64_t seq,
                                        std::span<const std::uint8_t> payload) {
    std::vector<std::uint8_t> body(1 + 8 + 8 + payload.size());
    body[0] = targeted ? 1 : 0;
    put_u64_le(body.data() + 1, id);
    put_u64_le(body.data() + 9, seq);
    if (!payload.empty()) std::memcpy(body.data() + 17, payload.data(), payload.size());
    return body;
}

// Whether the clients of job `nspace` are in the range of `ev` all alike:
// `all` (true: every one of them is, false: none is), or per client
// (false returned: call in_range for each).
bool job_alike(const Event &ev, const std::string &nspace, bool &all) {
    switch (ev.range) {
        case PMIX_RANGE_NAMESPACE:
            if (!ev.from_sms()) {
                all = std::strncmp(ev.source.nspace, nspace.c_str(), PMIX_MAX_NSLEN) == 0;
            } else {
                all = ev.affected.empty() ||
                      std::any_of(ev.affected.begin(), ev.affected.end(), [&](const auto &p) {
                          return std::strncmp(p.nspace, nspace.c_str(), PMIX_MAX_NSLEN) == 0;
                      });
            }
            return true;
        case PMIX_RANGE_PROC_LOCAL:
        case PMIX_RANGE_CUSTOM:
            return false;
        case PMIX_RANGE_RM:
            all = false;
            return true;
        default:  // UNDEF, LOCAL, SESSION, GLOBAL
            all = true;
            return true;
    }
}

}  // namespace

EventRouter::EventRouter(ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
                         const pmix_proc_t &self)
    : clients_(clients), host_(host), self_(self) {
    requests.add(wire::Command::register_events,
                 [this](Channel &ch, Frame &frame, ClientRecord *client) {
                     handle_register(ch, frame, client);
                 });
    requests.add(wire::Command::deregister_events,
                 [this](Channel &ch, Frame &frame, ClientRecord *client) {
                     handle_deregister(ch, frame, client);
                 });
    requests.add(wire::Command::notify, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_notify(ch, frame, client);
    });
    requests.add(wire::Command::notify_unanswered,
                 [this](Channel &ch, Frame &frame, ClientRecord *client) {
                     handle_notify(ch, frame, client, false);
                 });
}

void EventRouter::set_cache(std::unique_ptr<evcache_base::EventCache> cache) {
    cache_ = std::move(cache);
}

void EventRouter::clear() {
    regs_.clear();
    host_codes_.clear();
    cache_.reset();
}

void EventRouter::client_departed(const ProcKey &client, Departure) {
    forget_client(client);
}

void EventRouter::job_deregistered(const std::string &nspace) {
    if (cache_) cache_->module().forget_job(nspace);
    std::erase_if(regs_, [&](const auto &e) { return e.first.first == nspace; });
}

// ---------------------------------------------------------------------------------------------
// requests from clients

void EventRouter::handle_register(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::uint64_t id = 0;
    std::uint32_t n = 0;
    r.u64(id);
    r.u32(n);
    std::vector<pmix_status_t> codes;
    for (std::uint32_t i = 0; i < n && r.ok() && r.remaining() >= 4; ++i) {
        std::int32_t c = 0;
        r.i32(c);
        codes.push_back(c);
    }
    wire::InfoArray info;
    r.infos(info);
    if (!r.finished() || client == nullptr || codes.size() != n) {
        ch.close("malformed register_events request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    auto spec = events::RegistrationSpec::parse(codes, info.span());
    if (!spec) {
        send_reply(reply, status_body(spec.status().code()));
        return;
    }
    const ProcKey key = key_of(client->proc);
    const bool environment = spec.value().environment_events;
    regs_[key][id] = std::move(spec).value();
    // The matching cached events (seed 000, "PMIx Server Registrations"),
    // then the answer: the client delivers them when the answer comes, with
    // the live events its handler had meanwhile, in this server's order
    // (docs/events.md, "Registration without a round trip").
    auto finish = [this, reply, key, id](pmix_status_t) {
        replay(key, id);
        send_reply(reply, status_body(PMIX_SUCCESS));
    };
    const std::vector<pmix_status_t> sorted = sorted_codes(codes);
    if (!environment || host_->register_events == nullptr || host_codes_.count(sorted) != 0) {
        finish(PMIX_SUCCESS);
        return;
    }
    // Environment events reach the library only when the host was asked for them.
    host_codes_.insert(sorted);
    auto args = std::make_shared<std::pair<std::vector<pmix_status_t>, wire::InfoArray>>(
        std::move(codes), std::move(info));
    call_host_op(
        [this, args](pmix_op_cbfunc_t cb, void *cbdata) {
            return host_->register_events(args->first.empty() ? nullptr : args->first.data(),
                                          args->first.size(), args->second.data(),
                                          args->second.size(), cb, cbdata);
        },
        [finish, args](pmix_status_t s) {
            if (s != PMIX_SUCCESS && s != PMIX_ERR_NOT_SUPPORTED) {
                log()->warn("server: the host's register_events failed: {}", PMIx_Error_string(s));
            }
            finish(s);
        });
}

void EventRouter::handle_deregister(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::uint64_t id = 0;
    r.u64(id);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed deregister_events request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    auto it = regs_.find(key_of(client->proc));
    if (it == regs_.end() || it->second.count(id) == 0) {
        send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
        return;
    }
    auto reg = it->second.find(id);
    const bool environment = reg->second.environment_events;
    const std::vector<pmix_status_t> sorted = sorted_codes(reg->second.codes);
    it->second.erase(reg);
    send_reply(reply, status_body(PMIX_SUCCESS));
    if (environment) release_host_events(sorted);
}

void EventRouter::release_host_events(const std::vector<pmix_status_t> &sorted) {
    if (host_codes_.count(sorted) == 0) return;
    for (const auto &[client, regs] : regs_) {
        for (const auto &[id, spec] : regs) {
            if (spec.environment_events && spec.codes.size() == sorted.size() &&
                sorted_codes(spec.codes) == sorted) {
                return;  // still wanted
            }
        }
    }
    host_codes_.erase(sorted);
    if (host_->deregister_events == nullptr) return;
    auto codes = std::make_shared<std::vector<pmix_status_t>>(sorted);
    call_host_op(
        [this, codes](pmix_op_cbfunc_t cb, void *cbdata) {
            return host_->deregister_events(codes->empty() ? nullptr : codes->data(), codes->size(),
                                            cb, cbdata);
        },
        [codes](pmix_status_t s) {
            if (s != PMIX_SUCCESS && s != PMIX_ERR_NOT_SUPPORTED) {
                log()->warn("server: the host's deregister_events failed: {}",
                            PMIx_Error_string(s));
            }
        });
}

void EventRouter::handle_notify(Channel &ch, Frame &frame, ClientRecord *client, bool answer) {
    BodyReader r(frame.body);
    auto ev = Event::read(r);
    if (!ev || !r.finished() || client == nullptr) {
        ch.close("malformed notify request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    // Route first: the receivers' frames leave before the notifier is woken
    // by its answer (it competes with them for the CPU).
    auto shared = std::make_shared<const Event>(std::move(*ev));
    // The request's body is the event's payload as the receivers get it
    // (Event::encode of what was just read): routed as is, not re-encoded.
    route(shared, false, false, frame.body);
    if (observer_) observer_(key_of(client->proc), *shared);
    if (answer) send_reply(reply, status_body(PMIX_SUCCESS));
}

// ---------------------------------------------------------------------------------------------
// routing

void EventRouter::notify_from_host(std::shared_ptr<const Event> ev) {
    for (const auto &consumed : host_observers_) {
        if (consumed(*ev)) return;  // a message between servers, for a service
    }
    route(std::move(ev), true);
}

void EventRouter::raise_from_library(std::shared_ptr<const Event> ev) {
    route(std::move(ev), false, true);
}

void EventRouter::raise_to_clients(std::shared_ptr<const Event> ev) {
    route(std::move(ev), false, false);
}

void EventRouter::route(std::shared_ptr<const Event> ev, bool from_host, bool to_self,
                        std::span<const std::uint8_t> encoded) {
    std::vector<std::uint8_t> encoded_here;
    if (encoded.empty()) {
        encoded_here = ev->encode();
        encoded = encoded_here;
    }
    const std::span<const std::uint8_t> payload = encoded;
    const std::uint64_t seq = next_seq_++;
    // One frame, header included, for every receiver: each send is a write
    // of the same bytes (docs/events.md, "Latency").
    const wire::SharedFrame message(static_cast<std::uint16_t>(wire::Command::event), 0, 0,
                                    event_message(false, 0, seq, payload));
    const std::string job = job_of(*ev);
    const bool caching = cache_ && !ev->do_not_cache;
    // First the sends, nothing else: each receiver's frame leaves as early
    // as it can (docs/events.md, "Latency"). For the cache, whether each
    // client of the event's job was sent it, in the job's order.
    sent_.clear();
    for (auto &[nspace, rec] : clients_.jobs()) {
        bool all = false;
        const bool alike = job_alike(*ev, nspace, all);
        if (alike && !all) continue;
        const bool record = caching && nspace == job;
        for (auto &[rank, c] : rec.clients) {
            if (c.gone() || (!alike && !in_range(*ev, c.proc))) continue;
            // Sent to every connected client in range, whatever it
            // registered: a handler may be active there before this server
            // has its registration (docs/events.md, "Registration without a
            // round trip"); the client's chain keeps what no handler takes.
            const bool sent =
                c.state == ClientRecord::State::connected && c.channel && c.channel->send(message);
            if (record) sent_.push_back(sent);
        }
    }
    // Which clients of the job did not have it: not sent to them, or sent
    // but taken by no registration this server knows. A job event waits in
    // the cache for them. This job's registrations are walked in step with
    // its clients: both are ordered by rank, so no lookup (and no key
    // string) per client.
    std::vector<pmix_proc_t> awaiting;
    if (const JobRecord *rec = caching && !job.empty() ? clients_.find_job(job) : nullptr) {
        auto regs = regs_.lower_bound(ProcKey{job, 0});
        const auto regs_end =
            regs_.upper_bound(ProcKey{job, std::numeric_limits<pmix_rank_t>::max()});
        std::size_t next = 0;
        for (const auto &[rank, c] : rec->clients) {
            while (regs != regs_end && regs->first.second < rank) ++regs;
            if (c.gone() || !in_range(*ev, c.proc)) continue;
            const bool sent = next < sent_.size() && sent_[next] != 0;
            ++next;
            const bool had =
                sent && regs != regs_end && regs->first.second == rank &&
                std::any_of(regs->second.begin(), regs->second.end(), [&](const auto &reg) {
                    return events::matches(reg.second, *ev, c.proc);
                });
            if (!had) awaiting.push_back(c.proc);
        }
    }
    if (caching) {
        mca::evcache::CachedEvent ce;
        ce.code = ev->status;
        ce.source = ev->source;
        ce.range = ev->range;
        ce.job = job;
        ce.awaiting = std::move(awaiting);
        // The sequence number (a u64 field), then the event (replay() reads both).
        ce.message.resize(8 + payload.size());
        put_u64_le(reinterpret_cast<std::uint8_t *>(ce.message.data()), seq);
        std::memcpy(ce.message.data() + 8, payload.data(), payload.size());
        auto cached = cache_->module().cache(std::move(ce));
        if (!cached) log()->debug("server: event not cached: {}", cached.status().message());
    }

    // The server process's own handlers: events from its host, and client
    // events whose range takes in this node's RM side.
    const bool for_server = from_host || to_self || ev->range == PMIX_RANGE_RM ||
                            ev->range == PMIX_RANGE_LOCAL || ev->range == PMIX_RANGE_SESSION ||
                            ev->range == PMIX_RANGE_GLOBAL || ev->range == PMIX_RANGE_UNDEF ||
                            (ev->range == PMIX_RANGE_CUSTOM && in_range(*ev, self_));
    if (for_server) events::ProcessEvents::instance().deliver(ev);

    if (from_host || host_->notify_event == nullptr) return;  // never echoed to the host
    bool leaves_node = false;
    switch (ev->range) {
        case PMIX_RANGE_SESSION:
        case PMIX_RANGE_GLOBAL:
        case PMIX_RANGE_RM:
            leaves_node = true;
            break;
        case PMIX_RANGE_CUSTOM:
            leaves_node = std::any_of(ev->custom_range.begin(), ev->custom_range.end(),
                                      [&](const pmix_proc_t &p) {
                                          if (events::proc_matches(p, self_)) return false;
                                          const JobRecord *j = clients_.find_job(key_of(p).first);
                                          if (j == nullptr) return true;
                                          if (p.rank == PMIX_RANK_WILDCARD)
                                              return j->job_size > j->clients.size();
                                          return j->clients.count(p.rank) == 0;
                                      });
            break;
        case PMIX_RANGE_NAMESPACE: {
            const JobRecord *j = clients_.find_job(key_of(ev->source).first);
            leaves_node = j != nullptr && j->job_size > j->clients.size();
            break;
        }
        default:
            break;
    }
    if (!leaves_node) return;
    call_host_op(
        [this, ev](pmix_op_cbfunc_t cb, void *cbdata) {
            const auto info = ev->info_span();
            return host_->notify_event(
                ev->status, &ev->source, ev->range,
                info.empty() ? nullptr : const_cast<pmix_info_t *>(info.data()), info.size(), cb,
                cbdata);
        },
        [ev](pmix_status_t s) {
            if (s != PMIX_SUCCESS) {
                log()->info("server: the host's notify_event for status {} answered {}", ev->status,
                            PMIx_Error_string(s));
            }
        });
}

// ---------------------------------------------------------------------------------------------
// the cache

void EventRouter::replay(const ProcKey &client, std::uint64_t id) {
    if (!cache_) return;
    ClientRecord *c = clients_.find_client(client);
    if (c == nullptr || !c->channel) return;
    auto regs = regs_.find(client);
    if (regs == regs_.end()) return;
    auto reg = regs->second.find(id);
    if (reg == regs->second.end()) return;
    const pmix_proc_t proc = c->proc;
    auto channel = c->channel;
    cache_->module().replay(proc, [&](const mca::evcache::CachedEvent &ce) {
        auto bytes = std::span<const std::uint8_t>(
            reinterpret_cast<const std::uint8_t *>(ce.message.data()), ce.message.size());
        BodyReader r(bytes);
        std::uint64_t seq = 0;
        r.u64(seq);
        const auto payload = bytes.subspan(bytes.size() - r.remaining());
        auto ev = Event::read(r);
        if (!ev || !in_range(*ev, proc) || !events::matches(reg->second, *ev, proc)) return false;
        return channel->send(static_cast<std::uint16_t>(wire::Command::event), 0, 0,
                             event_message(true, id, seq, payload));
    });
}

void EventRouter::replay_to_self(std::size_t id) {
    if (!cache_) return;
    auto &events = events::ProcessEvents::instance();
    auto handler = events.registry().find(id);
    if (!handler) return;
    cache_->module().replay(self_, [&](const mca::evcache::CachedEvent &ce) {
        // Job events target clients: they never reach the server's own handlers.
        if (ce.is_job_event()) return false;
        BodyReader r(std::span<const std::uint8_t>(
            reinterpret_cast<const std::uint8_t *>(ce.message.data()), ce.message.size()));
        std::uint64_t seq = 0;
        r.u64(seq);
        auto ev = Event::read(r);
        if (!ev || !events::matches(handler->spec, *ev, self_)) return false;
        events.deliver(std::make_shared<const Event>(std::move(*ev)), id);
        return true;
    });
}

void EventRouter::forget_client(const ProcKey &client) {
    auto regs = regs_.find(client);
    if (regs != regs_.end()) {
        std::set<std::vector<pmix_status_t>> released;
        for (const auto &[id, spec] : regs->second) {
            if (!spec.environment_events) continue;
            released.insert(sorted_codes(spec.codes));
        }
        regs_.erase(regs);
        for (const auto &codes : released) release_host_events(codes);
    }
    if (!cache_) return;
    // Nobody is left there to receive them: job events stop waiting for it.
    cache_->module().replay(proc_of(client),
                            [](const mca::evcache::CachedEvent &ce) { return ce.is_job_event(); });
}

}  // namespace pmixpp::server
