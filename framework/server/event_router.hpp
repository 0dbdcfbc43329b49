// EventRouter: event notification on the server side
// (framework/event/README.md). Owns the clients' handler registrations, the
// code sets the host was asked for (register_events upcall) and the event
// cache (evcache); handles register_events / deregister_events / notify;
// routes events from clients and from the host to the local clients in range,
// the cache, the server process's own handlers and (leaving the node) the
// host's notify_event. A departed client's registrations go and cached job
// events stop waiting for it. Progress thread only.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "evcache/evcache_base.hpp"
#include "event/event.hpp"
#include "event/registry.hpp"
#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"

namespace pmixpp::server {

// Events the server library raises itself (monitor alerts): the narrow
// interface through which the Monitoring service reaches the EventRouter.
class LibraryEvents {
  public:
    virtual ~LibraryEvents() = default;
    // Routed as a client's event of its source (local clients in range, the
    // cache, the host's notify_event when the range leaves the node) and
    // always to the server process's own handlers: the host is the SMS that
    // acts on it.
    virtual void raise_from_library(std::shared_ptr<const events::Event> ev) = 0;
    // To the local clients in range (and the cache) only: not to the server
    // process's handlers nor to the host (a monitor alert's copy for its
    // requestor, who the first event's range did not reach).
    virtual void raise_to_clients(std::shared_ptr<const events::Event> ev) = 0;
};

class EventRouter final : public DepartureListener, public LibraryEvents {
  public:
    // `self`: the server process's identity (set at start, read at each event).
    EventRouter(ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
                const pmix_proc_t &self);
    // The event cache chosen at PMIx_server_init (nullptr: none).
    void set_cache(std::unique_ptr<evcache_base::EventCache> cache);
    // PMIx_Notify_event called by the host: to the local clients in range,
    // the cache and the server process's own handlers; never back to the host.
    void notify_from_host(std::shared_ptr<const events::Event> ev);
    void raise_from_library(std::shared_ptr<const events::Event> ev) override;
    void raise_to_clients(std::shared_ptr<const events::Event> ev) override;
    // A handler of the server process itself was registered: replay the
    // matching cached events to it.
    void replay_to_self(std::size_t id);
    // Told of each event a client notifies, once it is routed (the Groups
    // service: a participant's PMIX_GROUP_CONSTRUCT_ABORT).
    using ClientEventFn = std::function<void(const ProcKey &source, const events::Event &ev)>;
    void observe_client_events(ClientEventFn fn) { observer_ = std::move(fn); }
    // Asked of each event the host notifies, before it is routed, in the
    // order they were added (the Groups service: PMIX_GROUP_LEFT of a member
    // served elsewhere, the invitation protocol and a construct's vote across
    // servers). True: the event was a message between servers for that
    // service; it is not routed to any client and no later one is asked.
    using HostEventFn = std::function<bool(const events::Event &ev)>;
    void observe_host_events(HostEventFn fn) { host_observers_.push_back(std::move(fn)); }
    void client_departed(const ProcKey &client, Departure why) override;
    void job_deregistered(const std::string &nspace) override;
    void clear();

  private:
    void handle_register(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_deregister(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    // `answer`: false for Command::notify_unanswered (no reply is sent).
    void handle_notify(wire::Channel &ch, wire::Frame &frame, ClientRecord *client,
                       bool answer = true);
    // Routes one event to the local clients in its range, caches it, runs
    // the server process's handlers and, for an event from a client whose
    // range leaves this node, calls the host's notify_event.
    // `to_self`: to the server process's handlers whatever the range.
    // `encoded`: the event's payload (Event::encode) when the caller has it.
    void route(std::shared_ptr<const events::Event> ev, bool from_host, bool to_self = false,
               std::span<const std::uint8_t> encoded = {});
    // Sends matching cached events to registration `id` of `client`.
    void replay(const ProcKey &client, std::uint64_t id);
    // Its registrations go, and cached job events stop waiting for it.
    void forget_client(const ProcKey &client);
    // After a registration for environment events with these (sorted) codes
    // went away: when no other registration wants them, the host's
    // deregister_events upcall, the counterpart of register_events.
    void release_host_events(const std::vector<pmix_status_t> &sorted);

    ClientTable &clients_;
    const HostUpcalls &host_;
    const pmix_proc_t &self_;
    std::map<ProcKey, std::map<std::uint64_t, events::RegistrationSpec>> regs_;
    std::set<std::vector<pmix_status_t>> host_codes_;
    // The sequence number of the next routed event: sent with it to clients
    // and kept with it in the cache, so that a client orders and merges the
    // replays and the live events of a registration it completed before this
    // server answered it (docs/events.md, "Registration without a round
    // trip").
    std::uint64_t next_seq_ = 1;
    std::unique_ptr<evcache_base::EventCache> cache_;
    // route(): whether each client of the event's job was sent it, kept
    // between events for its storage.
    std::vector<std::uint8_t> sent_;
    ClientEventFn observer_;
    std::vector<HostEventFn> host_observers_;
};

}  // namespace pmixpp::server
