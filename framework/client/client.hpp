// The client face (pmix.h): the connection to the local server, the requests
// in flight and the local view of the datastore. See README.md in this folder.
//
// Threads: init/finalize run on the caller's thread under the face's init
// mutex. The connection and the pending-request table live on the progress
// thread. The view (datastore + own identity) is read by any thread under
// view_mutex_ (shared): the PMIx_Get fast path.
#pragma once

#include <pmix.h>
#include <pmix_tool.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "client/connector.hpp"
#include "gds/lazy_modex.hpp"
#include "event/event.hpp"
#include "event/registry.hpp"
#include "gds/gds_base.hpp"
#include "ptl/ptl_base.hpp"
#include "wire/channel.hpp"
#include "wire/message.hpp"
#include "wire/protocol.hpp"
#include "wire/shm_fence.hpp"

namespace pmixpp::client {

// What a reply handler receives: the status that starts every reply, then a
// reader positioned after it (empty when the connection was lost).
using ReplyHandler = std::function<void(pmix_status_t status, wire::BodyReader &rest)>;
using ValueDone = std::function<void(pmix_status_t status, pmix_value_t *owned)>;

struct GetDirectives {
    bool optional = false;
    bool immediate = false;
    bool static_values = false;
    std::uint32_t timeout_s = 0;
    static GetDirectives from(const pmix_info_t *info, std::size_t ninfo);
};

// PMIX_DEBUG_STOP_IN_INIT: waits in PMIx_Init for PMIX_DEBUGGER_RELEASE (debug.cpp).
void stop_in_init_if_asked(const pmix_proc_t &me);

class Client {
  public:
    static Client &instance();

    // --- lifecycle (caller's thread, init mutex held by the API layer) ---
    pmix_status_t init(std::span<const pmix_info_t> info, pmix_proc_t *proc);
    pmix_status_t finalize(std::span<const pmix_info_t> info);
    // The server face makes the server process a client of itself: Get, Put,
    // Store_internal on its own datastore, no connection. `pending`: the
    // server's clients' commits not decoded yet (a Get decodes the process
    // it asks for), also when a client face's view is kept.
    void attach_server_view(std::shared_ptr<gds_base::Datastore> store, const pmix_proc_t &self,
                            std::shared_ptr<gds_base::LazyModex> pending = nullptr);
    void detach_server_view();
    std::mutex &init_mutex() { return init_mutex_; }
    // The tool face (tool.cpp): PMIx_tool_init's connection to a server
    // found by the tool attributes (or none: PMIX_TOOL_DO_NOT_CONNECT), and
    // its end. Caller's thread, init mutex held.
    pmix_status_t tool_init(std::span<const pmix_info_t> info, pmix_proc_t *proc);
    pmix_status_t tool_finalize();
    // More than one server (tool.cpp; docs/tools.md, "Several servers"):
    // connect to another server (it becomes the current one when the tool
    // had none, or with PMIX_PRIMARY_SERVER), list them, pick the one
    // requests go to, drop one.
    pmix_status_t tool_attach(std::span<const pmix_info_t> info, pmix_proc_t *myproc,
                              pmix_proc_t *server);
    std::vector<pmix_proc_t> tool_servers();
    pmix_status_t tool_set_server(const pmix_proc_t &server);
    pmix_status_t tool_disconnect(const pmix_proc_t &server);

    // --- operations ---
    // Whether a datastore is available (a client or server face is up).
    bool has_view() const;
    pmix_proc_t self() const;
    bool connected() const;

    // Fast path: any thread; PMIX_ERR_NOT_FOUND on a miss.
    pmix_status_t lookup(const pmix_proc_t &target, const char *key,
                         std::span<const pmix_info_t> qualifiers, pmix_value_t **out) const;
    // Whether a miss for this target/key may be answered by the server.
    bool should_ask_server(const pmix_proc_t &target, const char *key,
                           const GetDirectives &d) const;
    // Full Get on the progress thread: lookup, then the server. `done` runs
    // exactly once on the progress thread; the value is freed after it returns.
    void get_async(const pmix_proc_t &target, std::string key, GetDirectives d,
                   std::shared_ptr<wire::InfoArray> info, ValueDone done);

    pmix_status_t put(pmix_scope_t scope, const char *key, const pmix_value_t &value);
    pmix_status_t store_internal(const pmix_proc_t &proc, const char *key,
                                 const pmix_value_t &value);
    pmix_status_t commit();
    // Progress thread: send a fence; done(status) exactly once.
    void fence_async(std::vector<pmix_proc_t> procs, bool collect, std::uint32_t timeout_s,
                     std::shared_ptr<wire::InfoArray> info,
                     std::function<void(pmix_status_t)> done);
    // Caller's thread (not the progress thread): a blocking fence over the
    // caller's whole namespace without data, in the job's shared-memory
    // barrier (fence_shm.cpp, wire/shm_fence.hpp). nullopt: this fence does
    // not qualify, send it to the server.
    std::optional<pmix_status_t> fence_in_shm(const std::vector<pmix_proc_t> &procs, bool collect,
                                              std::uint32_t timeout_s);
    // Progress thread: PMIx_Spawn (spawn.cpp). `apps` is the codec encoding
    // (u64 count + elements); done(status, nspace) runs exactly once.
    void spawn_async(std::shared_ptr<wire::InfoArray> job_info, std::vector<std::uint8_t> apps,
                     std::function<void(pmix_status_t, std::string)> done);
    // Progress thread: PMIx_Connect / PMIx_Disconnect (connect.cpp); done
    // exactly once.
    void connect_async(wire::Command command, std::vector<pmix_proc_t> procs,
                       std::uint32_t timeout_s, std::shared_ptr<wire::InfoArray> info,
                       std::function<void(pmix_status_t)> done);
    pmix_status_t store_connect_reply(wire::BodyReader &reply);
    // Progress thread: send a request; `handler` runs exactly once.
    void request(wire::Command command, std::vector<std::uint8_t> body, ReplyHandler handler);
    // Progress thread: send a message the server does not answer (a heartbeat:
    // monitor.cpp). False when the connection is gone.
    bool send_oneway(wire::Command command, std::span<const std::uint8_t> body);
    // Whether a heartbeat monitor of this process was granted (PMIx_Heartbeat
    // sends nothing until then: api/monitor_api.cpp); any thread.
    bool heartbeats_wanted() const noexcept {
        return heartbeats_wanted_.load(std::memory_order_relaxed);
    }
    void set_heartbeats_wanted(bool wanted) noexcept { heartbeats_wanted_ = wanted; }
    // Progress thread: events (events.cpp). Tell the server about handler
    // registration `id` (its codes and filters) / its removal, and send an
    // event for the server to route; done(status) exactly once.
    void register_events(std::size_t id, const events::RegistrationSpec &spec,
                         std::function<void(pmix_status_t)> done, bool early = false);
    void deregister_events(std::size_t id, std::function<void(pmix_status_t)> done);
    // Progress thread: sends registration `id` like register_events, but for
    // a registration the caller completes at once (docs/events.md,
    // "Registration without a round trip"): the server sends every event in
    // range to its connected clients, so the handler misses nothing while the
    // server does not know it yet. Until the server's answer the server's
    // events for it wait here (the process's own reach it at once); then it
    // gets them and the server's replays in the server's order, each once.
    // False (nothing sent) when that does not hold: a tool (its server
    // changes) or no open connection.
    bool register_events_early(std::size_t id, const events::RegistrationSpec &spec);
    void notify_event(const events::Event &ev, std::function<void(pmix_status_t)> done);
    // Any thread: the same, written to the server from the caller's thread
    // (a client's connection with nothing queued on it), so that the event
    // does not wait for the progress thread to wake. False when it was not
    // sent (done is not called): the caller posts notify_event instead.
    bool notify_event_direct(const events::Event &ev, std::function<void(pmix_status_t)> done);
    // The blocking PMIx_Notify_event's forms (Command::notify_unanswered: the
    // server sends no answer). Progress thread: queues the event on the
    // connection; PMIX_SUCCESS, or PMIX_ERR_LOST_CONNECTION when there is
    // none. Any thread: writes it from the caller's thread, under
    // send_direct's rule; false when it was not written.
    pmix_status_t notify_event_unanswered(const events::Event &ev);
    bool notify_event_unanswered_direct(const events::Event &ev);
    // Progress thread: the PMIX_ERR_LOST_CONNECTION raised when the current
    // server went, kept until the next connection (null while connected):
    // replayed to a handler registered after the loss (docs/events.md,
    // "A handler registered after the loss").
    std::shared_ptr<const events::Event> lost_event() const { return lost_event_; }
    // Progress thread: IO forwarding (iof.cpp, docs/iof.md). iof_pull asks the
    // server for the output of `procs` on `channels`; on success `cbfunc`
    // (nullptr: write to our own stdout/stderr) is kept under a new reference
    // and done(PMIX_SUCCESS, ref) runs, else done(error, 0). iof_deregister
    // forgets `ref` at once (PMIX_ERR_NOT_FOUND when unknown), then tells the
    // server. Each `done` runs exactly once.
    void iof_pull(std::vector<pmix_proc_t> procs, pmix_iof_channel_t channels,
                  std::shared_ptr<wire::InfoArray> directives, pmix_iof_cbfunc_t cbfunc,
                  std::function<void(pmix_status_t, std::size_t)> done);
    void iof_deregister(std::size_t ref, std::shared_ptr<wire::InfoArray> directives,
                        std::function<void(pmix_status_t)> done);

  private:
    Client();
    // The progress thread takes over a connection the connector handshook
    // (connector.hpp): its channel opens there, the early frames are handled,
    // then what the server sends next. Posted; the caller does not wait (every
    // later request is posted after it). `role`: a client's connection may also
    // be written from the caller's thread (notify_event_direct); a tool's
    // changes with the server it talks to. `who` names the init for log messages.
    void adopt(Handshaken &&connected, std::shared_ptr<ptl_base::Transports> transports,
               wire::Role role, const char *who);
    void on_frame(wire::Channel &ch, wire::Frame &&frame);
    void on_close(wire::Channel &ch, const std::string &reason);
    void store_stream(std::span<const std::uint8_t> stream);
    // Unsolicited `event` message: runs the chain (events.cpp).
    void handle_event(wire::Frame &frame);
    // The connection to the server is gone (not by finalize): raise
    // PMIX_ERR_LOST_CONNECTION to this process's handlers, `server` as its
    // source (events.cpp). `current`: it was the current server, so the
    // event is kept for later registrations (lost_event()).
    void raise_lost_connection(const pmix_proc_t &server, bool current = true);
    // Unsolicited `iof` message: the payload to its registration's handler (iof.cpp).
    void handle_iof(wire::Frame &frame);
    // Unsolicited `group_ask` message: the event's chain, then the
    // handlers' decision back to the server (groups.cpp).
    void handle_group_ask(wire::Frame &frame);
    void handle_commit_flush(wire::Frame &frame);
    // The job's fence segment, mapped at first use (nullptr: none); forget it.
    std::shared_ptr<wire::ShmFence> fence_segment();
    // The job's fence data segment (wire/shm_fence.hpp, ShmData), mapped
    // with fence_segment(); nullptr: collecting fences' data comes through
    // the socket.
    std::shared_ptr<wire::ShmData> fence_data_segment();
    // Progress thread: the records of a collecting fence's reply: `inline_stream`,
    // or, when the reply names fence data in the segment, those.
    // A proxied collecting fence through the barrier gets the peers' areas
    // (store_fence_areas); the ranks whose data must be asked of the server
    // go to `refetch`.
    pmix_status_t store_fence_data(std::vector<std::uint8_t> &inline_stream, wire::BodyReader &r,
                                   std::vector<pmix_rank_t> &refetch);
    pmix_status_t store_fence_areas(wire::BodyReader &r, std::vector<pmix_rank_t> &refetch);
    void drop_fence_segment();
    // Wake this process's callers sleeping in the barrier (they see lost_).
    void wake_fence_waiters();
    // Job info of another nspace (spawn, connect replies): connect.cpp.
    pmix_status_t store_job_blob(std::string_view nspace, std::span<const std::uint8_t> blob);

    std::mutex init_mutex_;
    mutable std::mutex shm_mutex_;             // never taken under view_mutex_
    std::shared_ptr<wire::ShmFence> shm_;      // under shm_mutex_
    bool shm_probed_ = false;                  // under shm_mutex_
    std::shared_ptr<wire::ShmData> shm_data_;  // under shm_mutex_
    // The job's fence areas (wire/shm_fence.hpp, ShmArea), one per rank,
    // mapped with shm_ when the server offered them: a blocking collecting
    // fence then writes this rank's commits into its own area, meets the
    // others in the barrier and reads theirs (fence_shm.cpp).
    std::vector<std::unique_ptr<wire::ShmArea>> areas_;  // under shm_mutex_ (set), then fixed
    // What this process committed since it last published it in its area
    // (LOCAL blobs, concatenated; `whole`: everything it committed), and
    // per rank the last commit of that rank this process read (a gap:
    // its data is asked of the server). Under pub_mutex_.
    mutable std::mutex pub_mutex_;  // taken after shm_mutex_ when both are
    // Concurrent Commits go out one at a time, in the order they were taken
    // from the datastore: the decision to send one `whole`, its place in the
    // fence area's bytes and its frame's place on the socket. Otherwise a
    // later commit's changes could reach the server (or the area) before
    // the earlier `whole` one that then replaced them (the changes lost).
    // Taken before the datastore's writer lock and pub_mutex_.
    std::mutex commit_order_mutex_;
    // Commits held back (README.md, "Commits held back"): while this process
    // fences through its fence area and the server has not asked for its
    // commits, a `whole` commit is kept here, replacing the one held before
    // (`count`: the commits it stands for), and sent before the next frame
    // to the server, or when the server asks (Command::commit_flush).
    // Its blobs are kept, not encoded: a held commit that the next one
    // replaces is never encoded at all (held_frame encodes the one that goes).
    struct HeldCommit {
        mca::gds::Blob local, remote, global;
        std::uint8_t flags = 0;  // with kCommitCount; kCommitGlobal: `global` goes too
        std::uint32_t count = 0;
    };
    std::mutex held_commit_mutex_;  // after commit_order_mutex_, before direct_mutex_
    std::optional<HeldCommit> held_commit_;
    // Sends what is held (caller holds held_commit_mutex_): from the caller's
    // thread when it can, else posted. False: the connection is gone.
    bool flush_held_locked();
    // Progress thread: sends what is held before another frame.
    void flush_held_on_thread();
    // The frame's body: bytes local, bytes remote, u8 flags[, bytes global],
    // u32 count.
    static std::vector<std::uint8_t> held_frame(const HeldCommit &h);
    // send_direct without the held commit's flush (held_commit_mutex_ held).
    bool send_direct_now(wire::Command command, std::span<const std::uint8_t> body,
                         ReplyHandler handler);
    // Under the datastore's writer lock (commit): the size of the last commit
    // sent `whole` (both parts) and of the changes sent since (Client::commit).
    std::size_t sent_whole_ = 0;
    std::size_t sent_changes_ = 0;
    // What the values Put since the last commit weigh, about (put_weight):
    // whether the next commit goes `whole` is decided on it, so that only
    // the blobs that go are assembled (Client::commit).
    std::atomic<std::size_t> put_weight_{0};
    // The scopes this process ever Put a value with (bit 1 << scope): a
    // commit does not assemble a scope it never used (it would be empty).
    std::atomic<unsigned> scopes_put_{0};
    std::vector<std::uint8_t> pub_bytes_;
    std::uint64_t pub_from_ = 0;
    bool pub_whole_ = false;
    std::uint64_t pub_epoch_ = 0;  // bumped when pub_bytes_ is replaced
    bool pub_on_ = false;          // this process writes its own area
    std::size_t pub_total_ = 0;    // the size of the last whole it published (0: none yet)
    mutable std::vector<std::uint64_t> have_;
    // Caller's thread: a blocking collecting fence over the whole job
    // through the barrier and the areas.
    pmix_status_t fence_collect_in_shm(const std::shared_ptr<wire::ShmFence> &seg,
                                       std::uint32_t timeout_s);
    // Reads generation `gen`'s areas (or the server's copy of them, for a
    // proxied fence) into the lazy modex; the ranks whose data must be
    // asked of the server in `refetch`.
    struct AreaView {
        std::uint32_t rank = 0;
        std::uint64_t from = 0, to = 0;
        std::uint32_t flags = 0;
        std::span<const std::uint8_t> data;
        // Read in the peer's area (not the server's copy of it): the bytes
        // are held there, not copied (Held).
        std::uint32_t gen = 0;
        std::optional<wire::ShmArea::View::Where> where;
    };
    void take_areas(const std::vector<AreaView> &views, std::vector<pmix_rank_t> &refetch);
    // A peer's bytes read in its area and not copied yet: they stay there
    // until this process arrives in generation gen + 2 (wire/shm_fence.hpp,
    // ShmArea). Copied into lazy_ when a Get asks for the peer, or before
    // that arrival; dropped unread when the peer publishes its whole data
    // again. In arrival order per rank. Under shm_mutex_.
    struct Held {
        pmix_rank_t rank;
        std::uint32_t gen;
        bool whole;
        wire::ShmArea::View::Where where;
    };
    mutable std::vector<Held> held_;
    mutable std::atomic<std::size_t> held_count_{0};  // held_.size(): the Get fast path's test
    // Copies into lazy_ (before what comes next for those ranks) the held
    // bytes that `which` selects; a publication replaced meanwhile (a
    // generation that never completed) is dropped and its rank's data asked
    // of the server at the next fence. Takes shm_mutex_.
    void settle_held(const std::function<bool(const Held &)> &which, const char *why) const;
    // Before a Get of `target` (or a Store_internal) decodes it: its held bytes.
    void settle_held_for(const pmix_proc_t &target) const;
    // Before an arrival in generation `gen`: settles what would not stay intact.
    void settle_before_arrival(std::uint32_t gen);
    // Progress thread: asks the server for each rank's whole data, then `then`.
    void refetch_peers(std::vector<pmix_rank_t> ranks, std::function<void()> then);
    // The client face's server connection is gone (set by on_close and a
    // failed adopt, cleared by finalize). Read outside the progress thread,
    // where channel_ may not be touched: PMIx_Commit fails with
    // PMIX_ERR_LOST_CONNECTION, and a shared-memory fence neither arrives nor
    // keeps waiting (its arrival must not complete the others' barrier).
    // A tool cannot commit or fence: its requests fail through channel_.
    std::atomic<bool> lost_{false};
    mutable std::shared_mutex view_mutex_;
    std::shared_ptr<gds_base::Datastore> store_;  // the view
    // Peers' data received and not decoded yet (gds/lazy_modex.hpp):
    // store_stream adds, lookup decodes the process it asks for.
    mutable gds_base::LazyModex lazy_;
    // In a server process: its clients' commits not decoded yet (the
    // server's Modex adds them); lookup decodes them too.
    std::shared_ptr<gds_base::LazyModex> server_lazy_;
    pmix_proc_t self_{};
    bool self_hosted_ = false;  // server process as its own client
    // False in a tool initialized without PMIX_LAUNCHER: PMIx_Spawn is refused (tool.cpp).
    std::atomic<bool> tool_launcher_{true};

    // Progress thread only.
    std::shared_ptr<ptl_base::Transports> transports_;
    std::shared_ptr<wire::Channel> channel_;
    std::map<std::uint32_t, ReplyHandler> pending_;
    std::map<std::uint32_t, wire::Channel *> pending_on_;  // the channel each was sent on
    // A tool's other servers (not the current one: channel_/server_).
    std::vector<std::pair<pmix_proc_t, std::shared_ptr<wire::Channel>>> others_;
    std::atomic<std::uint32_t> next_tag_{1};  // any thread (notify_event_direct)
    std::atomic<bool> finalizing_{false};     // set by finalize's caller (send_direct)
    // A client's connection to its server, for requests written from the
    // caller's thread (notify_event_direct), and their reply handlers until
    // on_frame takes them. Set by adopt (a client's init, not a tool's),
    // cleared by on_close and finalize.
    std::mutex direct_mutex_;
    std::shared_ptr<wire::Channel> direct_channel_;         // under direct_mutex_
    std::map<std::uint32_t, ReplyHandler> direct_pending_;  // under direct_mutex_
    // Fails the direct requests sent on `ch` (all if null); progress thread.
    void fail_direct(const wire::Channel *ch);
    // Any thread: writes a request from the caller's thread when every closure
    // posted to the progress thread has run (a request posted before it
    // reaches the server first) and the connection has nothing queued; the
    // reply goes to `handler` on the progress thread (none expected when
    // `handler` is empty). False when not sent (`handler` is dropped): the
    // caller posts the request instead.
    bool send_direct(wire::Command command, std::span<const std::uint8_t> body,
                     ReplyHandler handler);
    // Progress thread: closes the connections (finalize). Idempotent.
    void close_connections();
    pmix_proc_t server_{};
    std::shared_ptr<const events::Event> lost_event_;  // lost_event()
    // Progress thread (events.cpp): the registrations sent to the server and
    // not answered yet, with the server's replays to each (by its sequence
    // number). While one completed before its answer (register_events_early,
    // `early`) is unanswered, every live event from the server waits too
    // (held_live_), and the answered registrations' replays with them
    // (held_replays_); at the last such answer they are delivered in the
    // server's order: a live event through its whole chain, a replay to its
    // handler unless the live event of the same number is among them (docs/
    // events.md, "Registration without a round trip").
    struct PendingRegistration {
        bool early = false;
        std::map<std::uint64_t, std::shared_ptr<const events::Event>> events;
    };
    std::map<std::size_t, PendingRegistration> pending_regs_;
    std::map<std::uint64_t, std::shared_ptr<const events::Event>> held_live_;
    std::multimap<std::uint64_t, std::pair<std::size_t, std::shared_ptr<const events::Event>>>
        held_replays_;
    bool early_pending() const;
    void deliver_held();
    // monitor.cpp: heartbeat_wanted from the server.
    void handle_heartbeat_wanted(wire::Frame &frame);
    std::atomic<bool> heartbeats_wanted_{false};  // monitor.cpp
    using Handler = void (Client::*)(wire::Frame &);
    std::map<std::uint16_t, Handler> unsolicited_;  // server-initiated messages (events, ...)

    // IOF registrations by reference (iof.cpp); the first is 0, as in
    // OpenPMIx, whose blocking pull returns the reference.
    std::map<std::size_t, pmix_iof_cbfunc_t> iof_pulls_;
    std::size_t next_iof_ = 0;
};

}  // namespace pmixpp::client
