// The server face (PMIx_server_*): the state the host registers, the clients'
// connections and the collectives among them. See README.md in this folder.
//
// Threads: every member is touched only on the progress thread. The C entry
// points (server_api.cpp) copy their arguments and post closures here; host
// completion callbacks (any thread, any time, or inline) are thread-shifted
// with ProgressEngine::post() before they touch anything.
#pragma once

#include <pmix_server.h>

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "event/event.hpp"
#include "event/registry.hpp"
#include "evcache/evcache_base.hpp"
#include "gds/gds_base.hpp"
#include "server/client_table.hpp"
#include "ptl/ptl_base.hpp"
#include "wire/channel.hpp"
#include "wire/message.hpp"
#include "wire/shm_fence.hpp"

struct event;

namespace pmixpp::server {

class HostInfo;  // upcall_results.hpp

// The collectives gathered among local clients: fence, and connect /
// disconnect (connect.cpp), which share the tracker and its completion.
enum class Collective : std::uint8_t { fence, connect, disconnect };

struct FenceTracker {
    std::uint64_t id = 0;
    Collective kind = Collective::fence;
    std::shared_ptr<wire::InfoArray> info;  // the first contributor's (connect/disconnect)
    std::string signature;
    std::vector<pmix_proc_t> procs;    // as requested
    std::set<ProcKey> expected_local;  // local participants
    std::map<ProcKey, PendingReply> contributed;
    bool collect = false;
    bool host_called = false;
    std::uint32_t timeout_s = 0;
    std::uint64_t timer = 0;
};

class Server : private DepartureListener {
  public:
    static Server &instance();

    // --- lifecycle (progress thread) ---
    mca::Status start(const pmix_server_module_t *module, std::span<const pmix_info_t> info,
                      std::shared_ptr<ptl_base::Transports> transports,
                      std::shared_ptr<gds_base::Datastore> store);
    void stop();
    bool active() const noexcept { return active_; }

    // --- host calls (progress thread) ---
    pmix_status_t register_nspace(const std::string &nspace, int nlocalprocs,
                                  std::span<const pmix_info_t> info);
    void deregister_nspace(const std::string &nspace);
    pmix_status_t register_client(const pmix_proc_t &proc, uid_t uid, gid_t gid,
                                  void *server_object);
    void deregister_client(const pmix_proc_t &proc);
    // The variables a child needs (PMIx_server_setup_fork).
    mca::Result<mca::Environment> fork_environment(const pmix_proc_t &proc);
    void dmodex_request(const pmix_proc_t &proc, pmix_dmodex_response_fn_t cbfunc, void *cbdata);
    // PMIx_server_setup_application / _setup_local_support (setup.cpp).
    mca::Result<wire::InfoArray> setup_application(const std::string &nspace,
                                                   std::span<const pmix_info_t> info);
    pmix_status_t setup_local_support(const std::string &nspace, wire::InfoArray info);

    const pmix_proc_t &self() const noexcept { return self_; }
    gds_base::Datastore &store() { return *store_; }

    // --- events (events.cpp; progress thread) ---
    // The event cache chosen at PMIx_server_init (nullptr: none). Set before start().
    void set_event_cache(std::unique_ptr<evcache_base::EventCache> cache);
    // PMIx_Notify_event called by the host: to the local clients in range,
    // the cache and the server process's own handlers; never back to the host.
    void notify_from_host(std::shared_ptr<const events::Event> ev);
    // A handler of the server process itself was registered: replay the
    // matching cached events to it.
    void replay_to_self(std::size_t id);

    // --- IO forwarding (iof.cpp; progress thread) ---
    // PMIx_server_IOF_deliver: to every registration matching the source and
    // channel, else into the cache (docs/iof.md).
    void deliver_iof(const pmix_proc_t &source, pmix_iof_channel_t channel,
                     std::vector<std::uint8_t> bytes, std::shared_ptr<wire::InfoArray> info);

  private:
    Server();
    // The one departure path's notices (ClientTable::depart): every waiter on
    // the client is released, every registration of it goes.
    void client_departed(const ProcKey &client, Departure why) override;
    void job_deregistered(const std::string &nspace) override;
    using Handler = void (Server::*)(wire::Channel &, wire::Frame &);

    struct Peer {
        bool authenticated = false;
        ProcKey proc;
    };
    struct ListenerRecord {
        std::unique_ptr<mca::ptl::Listener> listener;
        event *ev = nullptr;
        Server *server = nullptr;
    };

    static void on_accept(int fd, short what, void *arg);
    void accept_all(ListenerRecord &rec);
    void on_frame(wire::Channel &ch, wire::Frame &&frame);
    void on_close(wire::Channel &ch, const std::string &reason);

    // Request handlers: the dispatch table (README.md, "Adding a request").
    void handle_handshake(wire::Channel &ch, wire::Frame &frame);
    void handle_finalize(wire::Channel &ch, wire::Frame &frame);
    void handle_abort(wire::Channel &ch, wire::Frame &frame);
    void handle_commit(wire::Channel &ch, wire::Frame &frame);
    void handle_fence(wire::Channel &ch, wire::Frame &frame);
    void handle_get(wire::Channel &ch, wire::Frame &frame);
    void handle_spawn(wire::Channel &ch, wire::Frame &frame);              // spawn.cpp
    void handle_connect(wire::Channel &ch, wire::Frame &frame);            // connect.cpp
    void handle_disconnect(wire::Channel &ch, wire::Frame &frame);         // connect.cpp
    void handle_publish(wire::Channel &ch, wire::Frame &frame);            // publish.cpp
    void handle_lookup(wire::Channel &ch, wire::Frame &frame);             // publish.cpp
    void handle_unpublish(wire::Channel &ch, wire::Frame &frame);          // publish.cpp
    void handle_query(wire::Channel &ch, wire::Frame &frame);              // query.cpp
    void handle_job_control(wire::Channel &ch, wire::Frame &frame);        // job_control.cpp
    void handle_log(wire::Channel &ch, wire::Frame &frame);                // job_control.cpp
    void handle_register_events(wire::Channel &ch, wire::Frame &frame);    // events.cpp
    void handle_deregister_events(wire::Channel &ch, wire::Frame &frame);  // events.cpp
    void handle_notify(wire::Channel &ch, wire::Frame &frame);             // events.cpp
    void handle_iof_pull(wire::Channel &ch, wire::Frame &frame);           // iof.cpp
    void handle_iof_deregister(wire::Channel &ch, wire::Frame &frame);     // iof.cpp
    void handle_iof_push(wire::Channel &ch, wire::Frame &frame);           // iof.cpp
    // Tools (tool.cpp): PMIX_SERVER_TOOL_SUPPORT from the init info; the
    // handshake of a Role::tool peer (approved by the host's tool_connected);
    // a tool's finalize and its end (records and event registrations go).
    void configure_tools(std::span<const pmix_info_t> info);
    void handle_tool_handshake(wire::Channel &ch, wire::Frame &frame, const pmix_proc_t &requested,
                               std::uint32_t uid, std::uint32_t gid, std::uint32_t pid,
                               wire::InfoArray info);
    bool is_tool(const ProcKey &key) const;
    // A departed tool: its record (and its nspace's, when empty) goes.
    void drop_tool(const ProcKey &key);
    // Events (events.cpp): route one event to the local clients in its range,
    // cache it, run the server process's handlers and, for an event from a
    // client whose range leaves this node, call the host's notify_event.
    void route_event(std::shared_ptr<const events::Event> ev, bool from_host);
    // Sends matching cached events to registration `id` of `client`.
    void replay_events(const ProcKey &client, std::uint64_t id);
    // A client ended (finalized, lost, deregistered): its registrations go,
    // and cached job events stop waiting for it.
    void forget_event_client(const ProcKey &client);
    // After a registration for environment events with these (sorted) codes
    // went away: when no other registration wants them, the host's
    // deregister_events upcall, the counterpart of register_events.
    void release_host_events(const std::vector<pmix_status_t> &sorted);
    // IOF (iof.cpp): a client ended (finalized, lost, deregistered, tool
    // gone): its pulls go. Cached output is sent to a new pull, oldest first.
    void forget_iof_client(const ProcKey &client);
    void replay_iof(const ProcKey &client, std::uint64_t id);
    // Runs (and forgets) the cleanup directives a client registered through
    // PMIx_Job_control (job_control.cpp): at its finalize, loss or deregistration.
    void run_cleanup(const ProcKey &proc);
    // One query key the library answers from its own state (query.cpp); false: not known here.
    bool answer_query_key(std::span<const pmix_info_t> qualifiers, const std::string &key,
                          const std::string &caller_nspace, HostInfo &out);

    void refuse(wire::Channel &ch, const wire::Frame &frame, pmix_status_t status,
                const std::string &reason);
    void finish_handshake(std::weak_ptr<wire::Channel> ch, wire::Frame request, ProcKey key,
                          pmix_status_t status);
    ClientRecord *find_client(const ProcKey &key) { return clients_.find_client(key); }
    JobRecord *find_job(const std::string &nspace) { return clients_.find_job(nspace); }
    ClientRecord *client_of(wire::Channel &ch);

    // Fence machinery, shared by every Collective. join_collective() adds a
    // local participant's contribution (nullptr: refused, already answered).
    FenceTracker *join_collective(Collective kind, std::vector<pmix_proc_t> procs,
                                  const ProcKey &me, const PendingReply &reply,
                                  std::uint32_t timeout_s, bool collect,
                                  std::shared_ptr<wire::InfoArray> info);
    void check_fence(std::uint64_t id);
    void complete_fence(std::uint64_t id, pmix_status_t status,
                        const std::vector<std::uint8_t> &host_stream);
    bool all_local(const std::vector<pmix_proc_t> &procs);
    // Completes with PMIX_ERR_LOST_CONNECTION the collectives not yet handed
    // to the host that expect `gone` (fail_fences_of; with `contributed_too`
    // false only those it has not contributed to) or that name a process of
    // `nspace` (fail_fences_naming): they can no longer complete.
    void fail_fences_of(const ProcKey &gone, bool contributed_too);
    void fail_fences_naming(const std::string &nspace);
    void fail_fences_if(const std::function<bool(const FenceTracker &)> &doomed);
    // Shared-memory fences (wire/shm_fence.hpp): join the job's barrier for
    // a socket fence if it qualifies (true: handled), answer the joined
    // fences whose generation completed, and break the barrier when a
    // participant is gone.
    void offer_shm_fence(JobRecord &job);
    bool join_shm_fence(JobRecord &job, const ProcKey &me, const std::vector<pmix_proc_t> &procs,
                        bool collect, std::uint32_t timeout, const PendingReply &reply);
    void answer_shm_waiters(JobRecord &job);
    void break_shm_fence(const std::string &nspace, pmix_status_t status);
    void handle_fence_shm_done(wire::Channel &ch, wire::Frame &frame);
    // Whether a commit of `c` counted in its job's segment has not arrived yet.
    bool commit_in_flight(const ClientRecord &c);
    // Connect / disconnect (connect.cpp): the host's upcall, and the answer
    // to the local participants once the collective completed.
    void call_host_connect(FenceTracker &t);
    void finish_connect(const FenceTracker &t, pmix_status_t status);
    bool may_disconnect(const ProcKey &me, const std::vector<pmix_proc_t> &procs) const;
    // Local support environment of a job's children (setup.cpp).
    void apply_local_support(const std::string &nspace, mca::Environment &env) const;

    // Direct modex.
    void reply_get_local(const PendingReply &reply, const ProcKey &target, bool wait,
                         std::uint32_t timeout_s);
    std::vector<std::uint8_t> job_blob(const std::string &nspace);

    static void send_reply(const PendingReply &reply, std::span<const std::uint8_t> body);
    static std::vector<std::uint8_t> status_body(pmix_status_t status);

    bool active_ = false;
    pmix_server_module_t host_{};
    pmix_proc_t self_{};
    std::shared_ptr<ptl_base::Transports> transports_;
    std::shared_ptr<gds_base::Datastore> store_;
    std::vector<std::unique_ptr<ListenerRecord>> listeners_;
    std::vector<std::pair<int, std::string>> uris_;  // (priority, uri), best first
    std::unordered_map<std::uint16_t, Handler> handlers_;
    std::map<wire::Channel *, std::pair<std::shared_ptr<wire::Channel>, Peer>> channels_;
    ClientTable clients_;  // jobs and client records; departures
    std::map<std::uint64_t, FenceTracker> fences_;
    std::uint64_t next_fence_ = 1;
    std::map<ProcKey, std::vector<std::uint8_t>> remote_blobs_;  // from host fences / dmodex
    // PMIx_server_dmodex_request for a job our host has not registered yet, by
    // nspace: answered when it does (register_nspace), or NOT_FOUND at stop().
    struct DeferredDmodex {
        pmix_proc_t proc;
        pmix_dmodex_response_fn_t cbfunc;
        void *cbdata;
    };
    std::map<std::string, std::vector<DeferredDmodex>> deferred_dmodex_;
    // Connect state (connect.cpp, spawn.cpp): the nspaces each local client is
    // connected to (by PMIx_Connect or as the parent of a spawned job), and
    // the parent nspace of each job spawned through this server.
    std::map<ProcKey, std::set<std::string>> connected_;
    std::map<std::string, std::string> spawned_by_;
    // What PMIx_server_setup_local_support was given, per nspace (setup.cpp).
    std::map<std::string, wire::InfoArray> local_support_;
    // Files and directories to remove when a client ends (job_control.cpp).
    struct CleanupRequest {
        std::vector<std::string> files, dirs, ignore;
        bool recursive = false, empty_only = false, leave_top = false;
    };
    std::map<ProcKey, std::vector<CleanupRequest>> cleanups_;
    // Events (events.cpp): each client's handler registrations by its id, the
    // code sets the host was asked to register (register_events upcall), the
    // event cache.
    std::map<ProcKey, std::map<std::uint64_t, events::RegistrationSpec>> event_regs_;
    std::set<std::vector<pmix_status_t>> host_event_codes_;
    std::unique_ptr<evcache_base::EventCache> event_cache_;
    // IOF (iof.cpp): each client's pulls by its registration id; output no
    // pull wanted, oldest first, with its bytes per channel; the cache limit
    // and drop policy per channel (the last pull that named the channel set it).
    struct IofPull {
        std::vector<pmix_proc_t> procs;
        pmix_iof_channel_t channels = 0;
    };
    struct IofChunk {
        pmix_proc_t source{};
        pmix_iof_channel_t channel = 0;
        std::vector<std::uint8_t> bytes;
        std::shared_ptr<wire::InfoArray> info;
    };
    struct IofCachePolicy {
        std::uint64_t size = 0;
        bool drop_oldest = false;
    };
    std::map<ProcKey, std::map<std::uint64_t, IofPull>> iof_pulls_;
    std::deque<IofChunk> iof_cache_;
    std::map<pmix_iof_channel_t, std::uint64_t> iof_cached_bytes_;
    std::map<pmix_iof_channel_t, IofCachePolicy> iof_policy_;
    IofCachePolicy iof_policy(pmix_iof_channel_t channel) const;
    void trim_iof_cache(pmix_iof_channel_t channel);
    // Tools (tool.cpp): whether the host accepts them, the connected tools
    // (each a ClientRecord of its nspace) and the nspaces created for them.
    bool tool_support_ = false;
    std::set<ProcKey> tools_;
    std::set<std::string> tool_jobs_;
};

}  // namespace pmixpp::server
