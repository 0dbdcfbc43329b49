// Collectives: the operations gathered among the local clients, fence
// (over the socket and in the job's shared-memory segment), connect and
// disconnect (connect.cpp), and the collectives other services build on the
// same tracker (CollectiveTracker: the groups' construct and destruct).
//
// Owns the trackers, the shared-memory fence waiters' handling and the
// connect state (who is connected to which nspace, who spawned which job).
// A departed participant fails the collectives that still wait for it
// (README.md, "Departures"). Progress thread only.
#pragma once

#include <pmix_server.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gds/gds_base.hpp"
#include "server/client_table.hpp"
#include "server/modex.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"
#include "wire/message.hpp"

namespace pmixpp::server {

// The collectives gathered among local clients: fence, connect / disconnect
// (connect.cpp), and `custom` ones another service completes itself
// (CollectiveTracker).
enum class Collective : std::uint8_t { fence, connect, disconnect, custom };

struct FenceTracker;

// What a service supplies for a collective of its own (Collective::custom).
struct CollectiveHooks {
    // Every local participant contributed: the service completes the
    // collective (CollectiveTracker::complete), at once or after an upcall.
    // From here on a departure no longer fails it (as after a host call).
    std::function<void(const FenceTracker &)> ready;
    // Completed (by the service, a timeout or a departed participant): the
    // service answers the contributors (their replies are in the tracker).
    std::function<void(const FenceTracker &, pmix_status_t)> finished;
    // Optional: local participant `gone` departed (or was gone when the
    // collective opened) before the collective was handed to the service.
    // True: the service goes on without it (it leaves the expected
    // participants); false or unset: the collective fails, as a fence does.
    std::function<bool(const FenceTracker &, const ProcKey &gone)> departed;
};

struct FenceTracker {
    std::uint64_t id = 0;
    Collective kind = Collective::fence;
    std::shared_ptr<wire::InfoArray> info;  // the first contributor's (connect/disconnect/custom)
    std::string signature;
    std::vector<pmix_proc_t> procs;    // as requested
    std::set<ProcKey> expected_local;  // local participants
    std::map<ProcKey, PendingReply> contributed;
    bool collect = false;
    bool host_called = false;
    std::uint32_t timeout_s = 0;
    std::uint64_t timer = 0;
    std::shared_ptr<CollectiveHooks> hooks;  // custom
    // Contributors that map their job's fence data segment (they asked with
    // wire::PMIXPP_FENCE_DATA_KEY): a collecting fence may answer them there.
    std::set<ProcKey> shm_readers;
    // A fence with PMIX_GROUP_FT_COLLECTIVE (its own or its procs' group's).
    bool ft = false;
    // Local participants that ended before the hand-over and that the
    // collective goes on without (CollectiveHooks::departed): a fault-tolerant
    // fence passes them to the host (PMIXPP_FENCE_ENDED, pmix_server.h).
    std::set<ProcKey> ended;
};

// The narrow interface other services (groups) build their collectives on:
// the same gathering of local participants, timeout and departure handling
// as fence and connect, under a signature of their own so that they never
// mix with a fence or with each other.
class CollectiveTracker {
  public:
    virtual ~CollectiveTracker() = default;
    // Adds local participant `me` to the collective `tag` over `procs`
    // (opened when new). 0: refused, `reply` already answered (`me` is not
    // among the procs, or a participant is gone). The hooks of the opener
    // are kept.
    virtual std::uint64_t join(const std::string &tag, std::vector<pmix_proc_t> procs,
                               const ProcKey &me, const PendingReply &reply,
                               std::uint32_t timeout_s, std::shared_ptr<wire::InfoArray> info,
                               std::shared_ptr<CollectiveHooks> hooks) = 0;
    // Completes `id` (nothing when it already completed): its finished hook runs.
    virtual void complete(std::uint64_t id, pmix_status_t status) = 0;
    // Whether every one of `procs` is a client of this server.
    virtual bool all_local(const std::vector<pmix_proc_t> &procs) const = 0;
};

class Collectives final : public DepartureListener, public CollectiveTracker {
  public:
    // `job_blob`: the job-level blob of a registered nspace (empty: none).
    using JobBlobFn = std::function<std::vector<std::uint8_t>(const std::string &nspace)>;
    Collectives(ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
                RemoteBlobs &remote, JobBlobFn job_blob);
    // The datastore host fence data and the fence segment's name go to (set at start).
    void set_store(std::shared_ptr<gds_base::Datastore> store) { store_ = std::move(store); }

    // --- from the host calls (server.cpp) ---
    // A job registered: its shared-memory fence when it runs entirely here.
    void job_registered(JobRecord &job);
    // A client of `job` registered with `uid`/`gid` (a root server gives the
    // job's segment to its user).
    void client_registered(JobRecord &job, uid_t uid, gid_t gid);
    // A client of `nspace` connected (again): the job's barrier may mend.
    void client_connected(const std::string &nspace);
    // `nspace` was spawned by `parent` (spawn.cpp): they are connected.
    void spawned(const ProcKey &parent, const std::string &nspace);
    // Server stop: every waiter and tracker goes, nobody is answered.
    void clear();
    // PMIX_GROUP_FT_COLLECTIVE for fences: whether a fence over `procs` goes
    // on without a participant that ends (the Groups service: they are
    // members of a group built with it). A fence's own directive counts too.
    using FtFenceFn = std::function<bool(const std::vector<pmix_proc_t> &procs)>;
    void set_ft_fence(FtFenceFn fn) { ft_fence_ = std::move(fn); }

    // --- CollectiveTracker ---
    std::uint64_t join(const std::string &tag, std::vector<pmix_proc_t> procs, const ProcKey &me,
                       const PendingReply &reply, std::uint32_t timeout_s,
                       std::shared_ptr<wire::InfoArray> info,
                       std::shared_ptr<CollectiveHooks> hooks) override;
    void complete(std::uint64_t id, pmix_status_t status) override {
        complete_fence(id, status, {});
    }
    bool all_local(const std::vector<pmix_proc_t> &procs) const override;

    void client_departed(const ProcKey &client, Departure why) override;
    void job_deregistered(const std::string &nspace) override;

    // The open trackers (tests).
    const std::map<std::uint64_t, FenceTracker> &trackers() const { return fences_; }

  private:
    void handle_fence(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_fence_shm_done(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_connect(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_disconnect(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);

    // Fence machinery, shared by every Collective. join_collective() adds a
    // local participant's contribution (nullptr: refused, already answered).
    FenceTracker *join_collective(Collective kind, std::vector<pmix_proc_t> procs,
                                  const ProcKey &me, const PendingReply &reply,
                                  std::uint32_t timeout_s, bool collect,
                                  std::shared_ptr<wire::InfoArray> info,
                                  const std::string &tag = {},
                                  std::shared_ptr<CollectiveHooks> hooks = nullptr);
    void check_fence(std::uint64_t id);
    void complete_fence(std::uint64_t id, pmix_status_t status,
                        const std::vector<std::uint8_t> &host_stream);
    // Completes with PMIX_ERR_LOST_CONNECTION the collectives not yet handed
    // to the host that expect `gone` (fail_fences_of; with `contributed_too`
    // false only those it has not contributed to) or that name a process of
    // `nspace` (fail_fences_naming): they can no longer complete.
    void fail_fences_of(const ProcKey &gone, bool contributed_too);
    void fail_fences_naming(const std::string &nspace);
    // The readers of t's job's data segment answered there (returns them),
    // when it has some and the segment is free: collecting fences over a
    // whole job (README "Fence data in shared memory").
    std::set<ProcKey> answer_in_shm(FenceTracker &t, const std::vector<std::uint8_t> &host_records);
    // `tell_host`: a fence spanning servers is handed over as failed
    // (tell_host_failed).
    void fail_fences_if(const std::function<bool(const FenceTracker &)> &doomed, bool tell_host);
    // Shared-memory fences (wire/shm_fence.hpp): join the job's barrier for
    // a socket fence if it qualifies (true: handled), answer the joined
    // fences whose generation completed, and break the barrier when a
    // participant is gone.
    void offer_shm_fence(JobRecord &job);
    bool join_shm_fence(JobRecord &job, const ProcKey &me, const std::vector<pmix_proc_t> &procs,
                        bool collect, std::uint32_t timeout, const PendingReply &reply);
    void answer_shm_waiters(JobRecord &job);
    // Collecting fences through the barrier (wire::ShmArea): the areas at
    // job registration; a proxied participant's area written for it; the
    // reply that hands a proxied participant the generation's areas.
    void offer_fence_areas(JobRecord &job);
    void publish_for(JobRecord &job, const ProcKey &proc, std::uint32_t gen);
    std::vector<std::uint8_t> areas_body(JobRecord &job, std::uint32_t gen, std::uint32_t receiver);
    void break_shm_fence(const std::string &nspace, pmix_status_t status);
    void mend_shm_fence(const std::string &nspace);
    // Connect / disconnect (connect.cpp): the host's upcall, and the answer
    // to the local participants once the collective completed.
    void call_host_connect(FenceTracker &t);
    void finish_connect(const FenceTracker &t, pmix_status_t status);
    bool may_disconnect(const ProcKey &me, const std::vector<pmix_proc_t> &procs) const;

    ClientRecord *find_client(const ProcKey &key) { return clients_.find_client(key); }
    JobRecord *find_job(const std::string &nspace) { return clients_.find_job(nspace); }

    ClientTable &clients_;
    const HostUpcalls &host_;
    RemoteBlobs &remote_;
    JobBlobFn job_blob_;
    std::shared_ptr<gds_base::Datastore> store_;
    std::map<std::uint64_t, FenceTracker> fences_;
    std::uint64_t next_fence_ = 1;
    // Connect state (connect.cpp, spawn.cpp): the nspaces each local client is
    // connected to (by PMIx_Connect or as the parent of a spawned job), and
    // the parent nspace of each job spawned through this server.
    std::map<ProcKey, std::set<std::string>> connected_;
    std::map<std::string, std::string> spawned_by_;
    FtFenceFn ft_fence_;
    // Fences spanning servers that failed here before their hand-over (the
    // host was told, PMIX_LOCAL_COLLECTIVE_STATUS), by signature: the local
    // participants that had not arrived get the same status when they do,
    // without another hand-over (the host counts one per server and fence).
    struct FailedFence {
        pmix_status_t status = PMIX_ERROR;
        std::set<ProcKey> latecomers;
    };
    std::map<std::string, FailedFence> failed_;
    // Tells the host that fence `t` (spanning servers, not handed over)
    // ends here with `status`; the answer is for nobody. Records its
    // latecomers (the local participants neither arrived nor gone).
    void tell_host_failed(const FenceTracker &t, pmix_status_t status);
    // The host's arguments for fence `t`: its directives, and `local_status`
    // when it is not PMIX_SUCCESS.
    std::shared_ptr<HostArgs> fence_args(const FenceTracker &t, pmix_status_t local_status) const;
};

}  // namespace pmixpp::server
