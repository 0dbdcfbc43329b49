// The client's side of event notification: registrations and notifications
// sent to the server, events received from it, and the event raised when the
// server is lost (framework/event/README.md). Progress thread only.
#include <algorithm>
#include <cstring>

#include "client/client.hpp"
#include "client/groups.hpp"
#include "event/process_events.hpp"
#include "mca/logging.hpp"
#include "pmixpp/mca/info.hpp"
#include "runtime/progress.hpp"

namespace pmixpp::client {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Command;

namespace {
auto log() {
    return mca::framework_logger("client");
}
}  // namespace

void Client::register_events(std::size_t id, const events::RegistrationSpec &spec,
                             std::function<void(pmix_status_t)> done, bool early) {
    auto filters = spec.filter_info();
    BodyWriter w;
    w.u64(id).u32(static_cast<std::uint32_t>(spec.codes.size()));
    for (pmix_status_t c : spec.codes) w.i32(c);
    w.infos(filters.data(), filters.size());
    for (auto &i : filters) PMIx_Value_destruct(&i.value);
    pending_regs_[id].early = early;
    request(Command::register_events, w.take(),
            [this, id, early, done = std::move(done)](pmix_status_t s, BodyReader &) {
                if (early && s != PMIX_SUCCESS && s != PMIX_ERR_LOST_CONNECTION) {
                    log()->warn(
                        "client: the server refused event registration {} ({}) after "
                        "it completed here",
                        id, PMIx_Error_string(s));
                }
                auto pending = pending_regs_.extract(id);
                done(s);  // activates a handler that was not yet
                // The server's replays (sent before its answer), delivered
                // with the live events held meanwhile.
                if (!pending.empty()) {
                    for (auto &[seq, ev] : pending.mapped().events)
                        held_replays_.emplace(seq, std::make_pair(id, std::move(ev)));
                }
                deliver_held();
            });
}

bool Client::early_pending() const {
    return std::any_of(pending_regs_.begin(), pending_regs_.end(),
                       [](const auto &p) { return p.second.early; });
}

void Client::deliver_held() {
    if (early_pending()) return;  // the last early registration's answer delivers them
    auto live = std::move(held_live_);
    auto replays = std::move(held_replays_);
    held_live_.clear();
    held_replays_.clear();
    auto &process = events::ProcessEvents::instance();
    auto l = live.begin();
    auto r = replays.begin();
    // In the server's order. A replay whose event is also held live is not
    // delivered: the live one goes through the whole chain, this handler
    // included (it matched, or the server would not have replayed it).
    while (l != live.end() || r != replays.end()) {
        if (r != replays.end() && (l == live.end() || r->first < l->first)) {
            process.deliver(r->second.second, r->second.first);
            ++r;
        } else if (r != replays.end() && r->first == l->first) {
            ++r;  // the live event of the same number follows
        } else {
            process.deliver(l->second);
            ++l;
        }
    }
}

bool Client::register_events_early(std::size_t id, const events::RegistrationSpec &spec) {
    {
        // A client's own connection only (a tool's server changes), and
        // still open.
        std::lock_guard lock(direct_mutex_);
        if (!direct_channel_ || direct_channel_ != channel_ || !channel_->is_open()) return false;
    }
    register_events(
        id, spec, [](pmix_status_t) {}, true);
    return true;
}

void Client::deregister_events(std::size_t id, std::function<void(pmix_status_t)> done) {
    pending_regs_.erase(id);
    deliver_held();  // it may have been the last early registration unanswered
    request(Command::deregister_events, BodyWriter().u64(id).take(),
            [done = std::move(done)](pmix_status_t s, BodyReader &) { done(s); });
}

void Client::notify_event(const events::Event &ev, std::function<void(pmix_status_t)> done) {
    request(Command::notify, ev.encode(),
            [done = std::move(done)](pmix_status_t s, BodyReader &) { done(s); });
}

bool Client::notify_event_direct(const events::Event &ev, std::function<void(pmix_status_t)> done) {
    // Only when every closure posted so far has run (send_direct): a request
    // this thread posted just before (a group construct, say) must reach the
    // server first (integration.group_construct_aborted_by_a_participants_event).
    return send_direct(Command::notify, ev.encode(),
                       [done = std::move(done)](pmix_status_t s, BodyReader &) { done(s); });
}

pmix_status_t Client::notify_event_unanswered(const events::Event &ev) {
    flush_held_on_thread();
    const auto body = ev.encode();
    if (!channel_ || !channel_->is_open() ||
        !channel_->send(static_cast<std::uint16_t>(Command::notify_unanswered), next_tag_++, 0,
                        body)) {
        return PMIX_ERR_LOST_CONNECTION;
    }
    return PMIX_SUCCESS;
}

bool Client::notify_event_unanswered_direct(const events::Event &ev) {
    return send_direct(Command::notify_unanswered, ev.encode(), ReplyHandler());
}

void Client::handle_event(wire::Frame &frame) {
    BodyReader r(frame.body);
    bool targeted = false;
    std::uint64_t id = 0, seq = 0;
    r.boolean(targeted);
    r.u64(id);
    r.u64(seq);
    auto ev = events::Event::read(r);
    if (!ev || !r.finished()) {
        log()->warn("client: malformed event message from the server");
        return;
    }
    // The group goes on without a member that left or failed (groups.hpp).
    if (ev->status == PMIX_GROUP_LEFT || ev->status == PMIX_GROUP_MEMBER_FAILED) {
        const auto *id = mca::find_info(ev->info_span(), PMIX_GROUP_ID);
        if (id != nullptr && id->value.type == PMIX_STRING && id->value.data.string != nullptr) {
            if (ev->status == PMIX_GROUP_LEFT) {
                GroupTable::instance().remove_member(id->value.data.string, ev->source);
            } else {
                for (const auto &p : ev->affected)
                    GroupTable::instance().remove_member(id->value.data.string, p);
            }
        }
    }
    auto shared = std::make_shared<const events::Event>(std::move(*ev));
    auto &process = events::ProcessEvents::instance();
    if (targeted) {
        // A replay to a registration the server has not answered yet (it
        // replays before it answers): kept for the answer.
        if (auto p = pending_regs_.find(id); p != pending_regs_.end()) {
            p->second.events.emplace(seq, std::move(shared));
            return;
        }
        process.deliver(std::move(shared), id);
        return;
    }
    // While a registration completed here is unanswered, every live event
    // waits for that answer: then it runs through its whole chain, the new
    // handler in its place, in the server's order with the replays.
    if (early_pending()) {
        held_live_.emplace(seq, std::move(shared));
        return;
    }
    process.deliver(std::move(shared));
}

void Client::raise_lost_connection(const pmix_proc_t &server, bool current) {
    // Internal to this process (seed 000, "Client-Based Notifications"): the
    // 4.2 headers name it PMIX_ERR_LOST_CONNECTION (docs/events.md).
    auto ev = std::make_shared<const events::Event>(
        events::Event::make(PMIX_ERR_LOST_CONNECTION, &server, PMIX_RANGE_PROC_LOCAL, nullptr, 0));
    // Kept after the delivery: the handlers active now have it once.
    if (current) lost_event_ = ev;
    events::ProcessEvents::instance().deliver(std::move(ev));
}

}  // namespace pmixpp::client
