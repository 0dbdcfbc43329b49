// GroupBootstrap: the bootstrap method of PMIx_Group_construct (the
// standard's PMIX_GROUP_BOOTSTRAP and PMIX_GROUP_ADD_MEMBERS; docs/groups.md,
// "Bootstrap method"). Leaders know only how many leaders there are: each
// calls construct with its own id in `procs`, PMIX_GROUP_BOOTSTRAP = the
// number of leaders and, optionally, PMIX_GROUP_ADD_MEMBERS = the processes
// of its collection; those call construct with no procs. The construct
// completes when that many leaders and every process they named have
// called; the group's membership is everything named, in (nspace, rank)
// order. Participants served by other servers take part through the host:
// each leader's call is announced to the other servers as a consumed event
// (the host's notify_event), every server learns the whole membership, and
// each calls the host's `group` upcall once its own named processes have
// called (docs/groups.md, "Bootstrap across servers"). With PMIX_GROUP_OPTIONAL or _FT_COLLECTIVE a
// participant that ends is left out (PMIX_ERR_PARTIAL_SUCCESS). Part of the Groups service
// (groups.hpp), which hands it its requests, departures and stop. Progress thread only.
#pragma once

#include <pmix.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "event/event.hpp"
#include "server/client_table.hpp"
#include "wire/codec.hpp"

namespace pmixpp::server {

class Groups;
struct GroupMembersRequest;

class GroupBootstrap {
  public:
    explicit GroupBootstrap(Groups &groups) : groups_(groups) {}

    // A construct of `me` (its reply owed to `reply`): false when it is not a
    // bootstrap construct (no PMIX_GROUP_BOOTSTRAP and some procs), else it
    // is taken and answered here.
    bool handle(const GroupMembersRequest &request, const PendingReply &reply, const ProcKey &me);
    // Whether a bootstrap construct of `id` is under way (the id is taken).
    bool busy(const std::string &id) const { return boots_.count(id) != 0; }
    // A participant that ends before the group is complete fails it for all
    // (the standard: an error from the API, without events); an add member
    // nobody named yet is just forgotten.
    void client_departed(const ProcKey &client);
    // Server stop: everything goes, nobody is answered.
    void clear();
    // An event the host notified: true when it was another server's
    // bootstrap message (a leader's announcement, a lost participant, the
    // construct's end), consumed here.
    bool message(const events::Event &ev);
    // A group_decision request: false when it is not about a bootstrap
    // construct waiting for its leaders' decisions (Groups handles it).
    bool decision(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);

  private:
    struct Boot {
        std::size_t leaders_expected = 0;  // PMIX_GROUP_BOOTSTRAP
        std::map<ProcKey, PendingReply> leaders;
        std::map<ProcKey, PendingReply> adds;  // called with no procs
        std::set<ProcKey> named;               // the leaders' procs and add members
        std::map<ProcKey, std::size_t> local_cids;
        bool assign_context_id = false;
        bool notify_termination = false;
        std::uint64_t timer = 0;  // the earliest PMIX_TIMEOUT of the callers
        std::chrono::steady_clock::time_point deadline;
        bool completing = false;  // the host's context id is awaited
        bool lost = false;        // a participant ended meanwhile
        // PMIX_GROUP_OPTIONAL / PMIX_GROUP_FT_COLLECTIVE (any caller): a
        // participant that ends is left out instead of failing the
        // construct (and, optional only, so is one that has not called when
        // the time is up, once every leader came).
        bool optional = false;
        bool ft_collective = false;
        std::set<ProcKey> gone;  // left out
        // Across servers: the leaders served elsewhere (announced through
        // the host), whether any participant is served elsewhere, the
        // earliest PMIX_TIMEOUT (seconds) to pass on, and the host's
        // `group` upcall made (its answer completes the construct).
        std::set<ProcKey> remote_leaders;
        bool across = false;
        std::uint32_t timeout_s = 0;
        std::size_t leader_count() const { return leaders.size() + remote_leaders.size(); }
        // PMIX_GROUP_LEADER: the bootstrap leaders that declared it and are
        // still running, served here and (announced through the host)
        // elsewhere; they decide about a participant that ends
        // (docs/groups.md, "Bootstrap leaders that decide"): the
        // participant -> the leaders, wherever served, whose decision is
        // awaited (a remote leader's comes from its server).
        std::set<ProcKey> declared;
        std::set<ProcKey> remote_declared;
        std::map<ProcKey, std::set<ProcKey>> undecided;
        // Decisions ("go on") of leaders served elsewhere about a
        // participant this server was not asked about yet: with three
        // servers or more, a leader's server may decide (told by the
        // participant's server) before that server's question reaches this
        // one. Applied when the question comes (ask_declared).
        std::map<ProcKey, std::set<ProcKey>> decided_early;
        bool any_declared() const { return !declared.empty() || !remote_declared.empty(); }
        // A named process that has neither called nor been left out.
        bool awaited(const ProcKey &k) const {
            return leaders.count(k) == 0 && adds.count(k) == 0 && gone.count(k) == 0;
        }
    };

    // Refuses one caller with `status` (nothing else changes).
    static void refuse(const PendingReply &reply, pmix_status_t status);
    // Completes `id` when every expected participant has called.
    void check(const std::string &id);
    void complete(const std::string &id, pmix_status_t status, std::optional<std::size_t> cid);
    // Ends `id` with `status` for every caller; named local processes that
    // have not called get it when they do.
    void fail(const std::string &id, pmix_status_t status);
    std::vector<pmix_proc_t> expand(const std::vector<pmix_proc_t> &procs) const;
    // PMIX_TIMEOUT of an optional construct whose leaders all came: the
    // named processes that have not called are left out; false when the
    // construct must fail instead.
    bool complete_without_late(const std::string &id);

    // ---- across servers ----
    // Moves `id` back from elsewhere_ (a named process is served here after
    // all), with what is left of its PMIX_TIMEOUT: false when that is up.
    bool bring_back(const std::string &id);
    // The named processes served here (but `caller`) that ended while `id`
    // was set aside: lost, and the other servers told.
    void lost_while_aside(const std::string &id, const ProcKey &caller);
    // Whether the host can carry a bootstrap across servers (notify_event
    // and group upcalls).
    bool capable() const;
    // The processes this server knows of that it does not serve: the
    // announcement's range (every other server of a job known here).
    std::vector<pmix_proc_t> others(const Boot &b) const;
    // A message to the other servers (consumed there by message()).
    void tell_others(pmix_status_t code, const std::string &id, const Boot &b,
                     const pmix_proc_t *source, std::vector<pmix_info_t> extra = {});
    // The earliest deadline: arms (or moves) the construct's timer.
    void arm_timer(const std::string &id, Boot &b, std::uint32_t seconds);
    // Every local named process called: this server's `group` upcall.
    void call_host_across(const std::string &id);
    // A construct across servers ended here before its upcall: the host
    // still gets this server's part with that status (docs/groups.md).
    void end_host_part(const std::string &id, const Boot &b, pmix_status_t status);
    // A named participant that ended: a local one (departure or found
    // gone; `tell`: the other servers are told), or one served elsewhere
    // (told by its server; `decide`: its server asks the declared leaders).
    void participant_lost(const std::string &id, const ProcKey &who, bool tell,
                          bool decide = false);
    // PMIX_GROUP_MEMBER_FAILED about `who` to the declared leaders served
    // here (not `who`), awaiting the ones served elsewhere too (but those
    // whose decision came first, decided_early): false when none could be
    // asked or awaited.
    bool ask_declared(const std::string &id, Boot &b, const ProcKey &who);
    // Declared leader `leader` decided about `about` (`abort`: it aborts),
    // through its handlers here (`here`: the other servers are told) or at
    // its own server.
    void leader_decided(const std::string &id, Boot &b, const ProcKey &leader, const ProcKey &about,
                        bool abort, bool here);
    // PMIX_GROUP_CONSTRUCT_ABORT from `leader` to this server's other participants.
    void raise_abort(const std::string &id, const Boot &b, const pmix_proc_t &leader);
    // Ends `id` with `status` here and, when `tell`, on the other servers
    // (`source`: the message's, e.g. the leader that aborted).
    void end(const std::string &id, pmix_status_t status, bool tell,
             const pmix_proc_t *source = nullptr);

    // An id whose construct across servers ended: the local processes that
    // were not answered yet get its status when they call (once each); one
    // that was answered and calls again starts a new construct.
    struct Ended {
        pmix_status_t status = PMIX_ERR_TIMEOUT;
        std::set<ProcKey> answered;
    };

    Groups &groups_;
    std::map<std::string, Boot> boots_;
    std::map<std::string, Ended> ended_;
    // Constructs this server found complete without a member of its own
    // (every leader known, no named process served here): kept in case a
    // named process registers here only later (a host that registers its
    // job after another server's leader called); its call brings it back.
    std::map<std::string, Boot> elsewhere_;
};

}  // namespace pmixpp::server
