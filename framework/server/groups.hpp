// Groups: PMIx process groups on the server side (docs/groups.md). Owns the
// groups this server's clients belong to (id, members in group-rank order,
// context id) and the constructs under way; handles group_construct,
// group_destruct and group_leave. Construct and destruct are collectives on
// the Collectives service's tracker (CollectiveTracker), under a tag of their
// own ("group-construct|<id>"), so they never mix with a fence or with each
// other; the host's `group` upcall runs once per server when every local
// participant arrived and a member is served elsewhere (or a context id is
// wanted from the host). A departed member fails the collectives waiting for
// it; a group whose local members are all gone is forgotten. Progress thread only.
#pragma once

#include <pmix_server.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "event/event.hpp"
#include "server/group_bootstrap.hpp"
#include "server/client_table.hpp"
#include "server/collectives.hpp"
#include "server/modex.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"

namespace pmixpp::server {

class HostInfo;  // upcall_results.hpp

struct GroupRecord {
    std::string id;
    std::vector<pmix_proc_t> members;  // group rank = index
    std::optional<std::size_t> context_id;
    // PMIX_GROUP_NOTIFY_TERMINATION: a member that ends without leaving is
    // announced (PMIX_GROUP_MEMBER_FAILED) and destruct goes on without it.
    bool notify_termination = false;
    // PMIX_GROUP_FT_COLLECTIVE: a fence over its members goes on without a
    // member that ends (Collectives' FtFenceFn).
    bool ft_collective = false;
    // Its leaders (PMIX_GROUP_LEADER, elected ones, an invitation's leader):
    // their results carry PMIX_GROUP_LEADER.
    std::set<ProcKey> leaders;
};

// The body of a group_construct and of a group_invite request: the group's
// id, the processes named, the timeout and the caller's directives.
struct GroupMembersRequest {
    std::string id;
    std::vector<pmix_proc_t> procs;
    std::uint32_t timeout = 0;
    wire::InfoArray info;
};
// False when the body is malformed (groups.cpp).
bool read_group_members_request(const wire::Frame &frame, GroupMembersRequest &out);

// An invitee's answer in an invite-construct (group_invite.cpp).
enum class GroupInvitationAnswer { pending, accepted, declined, failed };

class Groups final : public DepartureListener {
    friend class GroupBootstrap;  // the bootstrap method (group_bootstrap.cpp)

  public:
    using JobBlobFn = std::function<std::vector<std::uint8_t>(const std::string &nspace)>;
    // Raises an event from the server library to the local clients in its range.
    using RaiseFn = std::function<void(std::shared_ptr<const events::Event>)>;
    Groups(ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
           CollectiveTracker &collectives, RemoteBlobs &remote, JobBlobFn job_blob, RaiseFn raise);

    // PMIX_QUERY_NUM_GROUPS, _GROUP_NAMES, _GROUP_MEMBERSHIP (query.cpp); false: not a group key.
    bool answer_query(std::span<const pmix_info_t> qualifiers, const std::string &key,
                      HostInfo &out) const;
    // Server stop: everything goes, nobody is answered.
    void clear();

    void client_departed(const ProcKey &client, Departure why) override;
    void job_deregistered(const std::string &nspace) override;

    // The live groups (tests, queries).
    const std::map<std::string, GroupRecord> &groups() const { return groups_; }
    // PMIX_ERR_BAD_PARAM when `id` cannot name a new group here: empty,
    // longer than PMIX_MAX_NSLEN, a registered nspace or a live group.
    pmix_status_t check_new_id(const std::string &id) const;
    // A client's own event (PMIx_Notify_event, before it is routed):
    // PMIX_GROUP_CONSTRUCT_ABORT from a participant aborts the constructs
    // and invitations it takes part in (PMIX_GROUP_ID: that one only).
    void client_event(const ProcKey &source, const events::Event &ev);
    // Whether every one of `procs` is a member of one live group built with
    // PMIX_GROUP_FT_COLLECTIVE (a fence over them is fault tolerant).
    bool ft_covers(const std::vector<pmix_proc_t> &procs) const;
    // An event the host notified, before it is routed: PMIX_GROUP_LEFT of a
    // member served elsewhere takes it out of the group here too. True when
    // it was another server's vote in an election (not routed to clients).
    bool host_event(const events::Event &ev);
    // Raises an event that may leave this node (the host's notify_event when
    // its range names processes served elsewhere): PMIX_GROUP_LEFT.
    void set_raise_out(RaiseFn fn) { raise_out_ = std::move(fn); }
    // An event the host notified, before anything else: true when it was a
    // message of the invitation protocol between servers, consumed here
    // (group_invite.cpp; docs/groups.md, "Invitations across servers").
    bool invitation_message(const events::Event &ev);
    // An event the host notified: true when it was a message of the
    // bootstrap method across servers, consumed here (group_bootstrap.cpp).
    bool bootstrap_message(const events::Event &ev) { return bootstrap_.message(ev); }

  private:
    // A construct under way, by group id.
    struct Pending {
        std::uint64_t tracker = 0;
        std::vector<pmix_proc_t> canonical;  // sorted, wildcards of known jobs expanded
        std::vector<pmix_proc_t> order;      // the first local caller's, expanded
        bool orders_differ = false;
        bool assign_context_id = false;
        bool optional = false;            // PMIX_GROUP_OPTIONAL
        bool ft_collective = false;       // PMIX_GROUP_FT_COLLECTIVE
        bool notify_termination = false;  // PMIX_GROUP_NOTIFY_TERMINATION
        std::set<ProcKey> missing;        // optional members that departed or never came
        std::uint32_t timeout_s = 0;
        std::map<ProcKey, std::size_t> local_cids;    // PMIX_GROUP_LOCAL_CID per caller
        std::shared_ptr<wire::InfoArray> directives;  // the first caller's
        // PMIX_GROUP_LEADER: the callers that declared themselves leaders
        // (then elected ones), who decide about a member's failure.
        std::vector<ProcKey> leaders;
        // A failed member -> the leaders whose decision is awaited (empty:
        // to be asked of the next leader, once elected).
        std::map<ProcKey, std::set<ProcKey>> undecided;
        std::set<ProcKey> voters;         // a leader failed: votes awaited
        std::vector<ProcKey> volunteers;  // returned PMIX_GROUP_LEADER
        bool abort_vote = false;          // a voter returned PMIX_GROUP_CONSTRUCT_ABORT
        std::optional<ProcKey> failed_leader;
        // Every local participant arrived while a decision was awaited: the
        // construct goes on (construct_proceed) once it is in.
        bool ready = false;
        bool any_contributed = false;
        std::set<ProcKey> expected_local;
        // Across servers (groups.cpp, "optional members across servers"):
        // handed to the host's group upcall; with PMIX_GROUP_OPTIONAL or
        // _FT_COLLECTIVE the host bounds it (PMIX_TIMEOUT was passed on),
        // and a local timeout meanwhile parks the finished tracker here
        // until the host's answer comes.
        bool host_called = false;
        // Participants (of any server) that ended after their server handed
        // the construct to the host: absent from the group the host's answer
        // forms (groups.cpp, "a member lost after the host was called").
        std::set<ProcKey> lost_after_host;
        std::shared_ptr<FenceTracker> parked;
        // Leaders across servers (groups.cpp): after the host's answer named
        // failed members (PMIX_GROUP_NOTIFY_TERMINATION), every leader of
        // every server decides before the construct completes.
        bool deciding = false;
        bool decided = false;
        bool announced = false;             // this server's leaders' "go on" sent out
        std::set<ProcKey> leaders_awaited;  // every server's leaders
        std::set<ProcKey> decided_leaders;  // went on (local, or told by the host)
        std::set<ProcKey> absent_all;       // every server's absent members
        wire::InfoArray decision_results;   // the host's answer, kept meanwhile
        // Leaders that failed before the host was called, with no leader
        // left here: reported to the host with the leaders (no election
        // across servers yet: PMIX_ERR_NOT_SUPPORTED when none is left).
        std::set<ProcKey> failed_leaders;
        std::uint64_t decision_timer = 0;  // PMIX_TIMEOUT while the leaders decide
        // An election across servers (every leader failed; groups.cpp,
        // "electing a leader across servers"): this server's participants
        // vote, the other servers' votes come through the host.
        bool electing = false;
        bool local_voted = false;                // this server's vote is complete (and sent)
        std::optional<ProcKey> aborter;          // a voter that returned PMIX_GROUP_CONSTRUCT_ABORT
        std::set<ProcKey> lost_leaders;          // the failed leaders (no decision about them)
        std::set<ProcKey> remote_voted;          // participants served elsewhere whose votes are in
        std::vector<ProcKey> remote_volunteers;  // of those, the ones that volunteered
    };

    void handle_construct(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_destruct(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_leave(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);

    // ---- invite method (group_invite.cpp) ----
    // An invite-construct under way, by group id; every participant is a
    // client of this server.
    struct Invitation {
        using Answer = GroupInvitationAnswer;
        ProcKey leader;
        std::vector<pmix_proc_t> order;  // the leader, then the invitees as invited
        std::map<ProcKey, Answer> answers;
        // Answered, the leader's decision (group_decision) not in yet: the
        // event code it was asked about.
        std::map<ProcKey, pmix_status_t> undecided;
        std::vector<PendingReply> leader_replies;  // the leader's invite calls
        std::map<ProcKey, PendingReply> joined;    // the accepted invitees' join calls
        std::set<ProcKey> voters;                  // leader failed: votes awaited
        std::vector<ProcKey> volunteers;           // returned PMIX_GROUP_LEADER
        bool abort_vote = false;
        bool completing = false;  // the host's context id is awaited
        bool optional = false;
        bool notify_termination = false;
        bool assign_context_id = false;
        std::uint64_t timer = 0;
        // When the invite's PMIX_TIMEOUT expires (kept through an election
        // across servers, which carries what is left of it).
        std::optional<std::chrono::steady_clock::time_point> deadline;
    };
    void handle_invite(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_join(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_decision(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    // Sends `code` about `about` to the leader for its decision (group_ask).
    void ask_leader(Invitation &inv, const std::string &id, pmix_status_t code,
                    const ProcKey &about);
    // A group_ask message with `ev` to `to` (false: not connected).
    bool send_ask(const ProcKey &to, const std::string &id, const events::Event &ev);
    void ask_vote(const std::string &id, std::set<ProcKey> &voters,
                  const std::vector<pmix_proc_t> &participants, const pmix_proc_t &leader);
    void invitee_failed(const std::string &id, const ProcKey &who);
    void leader_failed(const std::string &id);
    void finish_vote(const std::string &id);
    // Completes the invitation when nothing is awaited any more.
    void check_invitation(const std::string &id);
    void complete_invitation(const std::string &id, std::optional<std::size_t> context_id);
    // Ends the invitation with `status` for every caller; PMIX_GROUP_CONSTRUCT_ABORT
    // is announced to the invitees by that event (unless `announce` is false:
    // the aborting participant raised it itself).
    void end_invitation(const std::string &id, pmix_status_t status, bool announce = true);
    void invitation_timed_out(const std::string &id);
    // `extra` (loaded infos) is owned by the call and released. `out`: also
    // to the processes of `to` served elsewhere (the host's notify_event).
    void raise_group_event(pmix_status_t code, const std::string &id, const pmix_proc_t *source,
                           const std::vector<pmix_proc_t> &to, std::vector<pmix_info_t> extra = {},
                           bool out = false);
    // ---- invitations across servers (group_invite.cpp) ----
    // At the invitees' server: an invitation led by a process served
    // elsewhere, with this server's invitees.
    struct RemoteInvitation {
        using Answer = GroupInvitationAnswer;
        ProcKey leader;
        std::map<ProcKey, Answer> answers;       // this server's invitees
        std::map<ProcKey, PendingReply> joined;  // their accepted join calls
    };
    std::map<std::string, RemoteInvitation> remote_invitations_;
    // ---- an invitation's leader fails with participants served elsewhere
    // (group_invite.cpp, "electing an invitation's leader across servers") ----
    // Every server of a participant asks its own (ask_vote) and sends its
    // vote to the others (send_vote); each picks the same leader (elect) from
    // the votes alone, then keeps the Invitation if the leader is served
    // here, else a RemoteInvitation naming it.
    struct InviteElection {
        ProcKey failed;                   // the failed leader
        std::vector<pmix_proc_t> order;   // the invitation's order without it
        bool assign_context_id = false;   // the invitation's directives, carried
        bool notify_termination = false;  // to the new leader's server
        bool optional = false;
        std::set<ProcKey> voters;         // asked here, answer awaited
        std::set<ProcKey> voted;          // answered here
        std::vector<ProcKey> volunteers;  // every server's
        std::optional<ProcKey> aborter;   // a voter here returned PMIX_GROUP_CONSTRUCT_ABORT
        bool local_voted = false;         // this server's vote is sent
        std::set<ProcKey> covered;        // processes of `order` whose server voted
        std::set<ProcKey> eligible;       // voted (every server's)
        std::set<ProcKey> accepted;       // had accepted (their servers' word)
        std::set<ProcKey> decided;        // the old leader decided about (its server's word)
        // The invitation's PMIX_TIMEOUT still runs: every server that votes
        // ends the election with PMIX_ERR_TIMEOUT when it expires.
        std::optional<std::chrono::steady_clock::time_point> deadline;
        std::uint64_t timer = 0;
    };
    std::map<std::string, InviteElection> invite_elections_;
    // Elections that ended here by an abort: a vote still on its way is
    // ignored (it must not start the election again). Cleared when a new
    // invitation under the id begins.
    std::set<std::string> invite_elections_ended_;
    void invite_election_start(const std::string &id, InviteElection e);
    void invite_vote_answer(const std::string &id, const ProcKey &from, pmix_status_t decision,
                            bool volunteer);
    void invite_local_done(const std::string &id);
    void invite_vote_in(const std::string &id, const events::Event &ev);
    void invite_election_check(const std::string &id);
    void invite_new_leader(const std::string &id, const InviteElection &e, const ProcKey &leader);
    void invite_election_departed(const ProcKey &client);
    // Erases election `id` (and its timer); false when there was none.
    bool invite_election_erase(const std::string &id);
    // The invitation's PMIX_TIMEOUT expired during election `id` (here, or
    // at the server that sent `told`): PMIX_ERR_TIMEOUT for every participant.
    void invite_election_timed_out(const std::string &id, const events::Event *told = nullptr);
    // The answer of this server's `k` in invitation `id` (held or remote).
    std::optional<GroupInvitationAnswer> local_answer(const std::string &id,
                                                      const ProcKey &k) const;
    // A server's vote in an election across servers (group_util.hpp's keys;
    // `extra`, loaded infos, is owned by the call).
    void send_vote(const std::string &id, const pmix_proc_t &source,
                   const std::vector<pmix_proc_t> &to, const std::vector<pmix_proc_t> &voters,
                   const std::vector<ProcKey> &volunteers, std::vector<pmix_info_t> extra = {});
    bool is_local(const pmix_proc_t &p) const;
    // A message of the protocol to the servers of `to` (with
    // PMIX_EVENT_DO_NOT_CACHE; consumed there by invitation_message).
    void send_to_servers(pmix_status_t code, const std::string &id, const pmix_proc_t *source,
                         const std::vector<pmix_proc_t> &to, std::vector<pmix_info_t> extra = {});
    // A join at the invitees' server (false: no such remote invitation).
    bool join_remote(const std::string &id, const pmix_proc_t &leader, std::uint8_t opt,
                     const ProcKey &me, const PendingReply &reply);
    void remote_invitee_departed(const ProcKey &client);
    // The leader's server completes `id` with invitees served elsewhere:
    // the trigger to their servers, then the host's group upcall.
    void complete_across_servers(const std::string &id);
    // The invitees' server: the leader's trigger came (PMIX_GROUP_CONSTRUCT_COMPLETE).
    void complete_remote(const std::string &id, const events::Event &ev);
    // The invitees' server: the invitation ended with `status` at the
    // leader's, for the invitees named in `only` (all without it).
    void end_remote(const std::string &id, pmix_status_t status,
                    const std::vector<pmix_proc_t> *only = nullptr);
    // The `group` upcall's directives for an invitation: PMIX_GROUP_ASSIGN_CONTEXT_ID
    // when `assign`, PMIX_GROUP_ENDPT_DATA of this server's `members` (groups.cpp's format).
    std::shared_ptr<HostArgs> invitation_args(bool assign, const std::vector<pmix_proc_t> &members);
    // Keeps the other servers' members' data from the host's answer (groups.cpp).
    void keep_endpoints(const wire::InfoArray &results);

    // The reply body of a completed construct or invite for a member of
    // nspace `caller_ns` (wire/protocol.hpp, group_construct).
    struct MemberData {
        std::vector<std::uint8_t> stream;  // the members' committed data
        std::vector<std::pair<std::string, std::vector<std::uint8_t>>> blobs;  // job info
    };
    MemberData member_data(const GroupRecord &g, std::vector<std::uint8_t> remote_stream,
                           const std::set<ProcKey> &from_host) const;
    static std::vector<std::uint8_t> member_reply(const GroupRecord &g, pmix_status_t status,
                                                  const std::map<ProcKey, std::uint64_t> &cids,
                                                  const MemberData &data, const ProcKey &caller);
    // Whether `g` is a live group with member `me`; if not, `reply` gets
    // PMIX_ERR_BAD_PARAM (destruct or leave of a group one is not in).
    bool caller_in(std::map<std::string, GroupRecord>::iterator g, const ProcKey &me,
                   const PendingReply &reply) const;

    // Wildcards of jobs registered here with a known size become their
    // ranks, in order; duplicates go (the first stays).
    std::vector<pmix_proc_t> expand(const std::vector<pmix_proc_t> &procs) const;
    void construct_ready(const std::string &id, const FenceTracker &t);
    // The construct's part after ready, once no leader's decision is awaited.
    void construct_proceed(const std::string &id);
    // ---- leaders of a collective construct (groups.cpp) ----
    // A local participant departed before the construct was ready: true
    // when the construct goes on without it.
    bool construct_departed(const std::string &id, const FenceTracker &t, const ProcKey &gone);
    // PMIX_GROUP_LEADER_FAILED to the surviving participants, who vote.
    void construct_leader_failed(const std::string &id, Pending &p, const ProcKey &gone);
    void construct_vote_done(const std::string &id);
    // A leader's or a voter's answer (group_decision) about a construct.
    void construct_decision(const std::string &id, const ProcKey &from, pmix_status_t code,
                            const ProcKey &about, pmix_status_t decision, bool volunteer);
    // Sends PMIX_GROUP_MEMBER_FAILED about `gone` to the local leaders for
    // their decision; with none and `participants_decide` (the construct has no
    // leader anywhere), to the participants that arrived.
    void ask_leaders(const std::string &id, Pending &p, const ProcKey &gone,
                     bool participants_decide = false);
    // Aborts construct `id` (PMIX_GROUP_CONSTRUCT_ABORT to every caller);
    // `source`: the aborting participant, announced to the others by that event.
    void abort_construct(const std::string &id, const pmix_proc_t *source);
    void construct_finished(const std::string &id, const FenceTracker &t, pmix_status_t status,
                            const wire::InfoArray &host_results);
    // ---- optional members across servers (groups.cpp) ----
    // The construct's `group` upcall (PMIX_GROUP_CONSTRUCT) with this
    // server's absent members; its answer completes the tracker (or the
    // parked one).
    void call_host_construct(const std::string &id);
    // The upcall's arguments for `p`, with PMIX_LOCAL_COLLECTIVE_STATUS `local_status`.
    std::shared_ptr<HostArgs> construct_args(const Pending &p, pmix_status_t local_status);
    // A construct across servers ended here (abort, timeout, lost member)
    // before the host was called: the host still gets this server's part,
    // with that status, so that it can end the operation everywhere.
    void end_host_construct(const std::string &id, const Pending &p, pmix_status_t status);
    // A construct's tracker finished with PMIX_ERR_TIMEOUT: true when the
    // construct goes on (optional members across servers: the host is
    // called without the late ones, or its answer is awaited).
    bool construct_timed_out(const std::string &id, const FenceTracker &t);
    // ---- leaders across servers (groups.cpp) ----
    // The host answered with failed members and leaders exist: the local
    // leaders are asked about the members served elsewhere; true when the
    // construct waits for the decisions (`p` is then back in pending_).
    // Failed members and no leader anywhere: `status` becomes
    // PMIX_ERR_LOST_CONNECTION (the local participants were told).
    bool construct_needs_decision(const std::string &id, Pending &p, const FenceTracker &t,
                                  const wire::InfoArray &host_results,
                                  const std::set<ProcKey> &absent,
                                  const std::set<ProcKey> &remote_leaders, pmix_status_t &status);
    // Completes the construct once every leader of every server went on.
    void check_decisions(const std::string &id);
    // Moves `p` (whose host answer named failed members) back into pending_
    // to wait for decisions, with the PMIX_TIMEOUT that bounds them.
    Pending &park_for_decisions(const std::string &id, Pending &p, const FenceTracker &t,
                                const wire::InfoArray &host_results,
                                const std::set<ProcKey> &absent);
    // Every leader of every server failed: PMIX_GROUP_LEADER_FAILED to this
    // server's participants, whose votes go to the other servers.
    // The participants served here, neither absent nor gone (an election's voters).
    std::vector<pmix_proc_t> running_here(const Pending &p) const;
    void start_election(const std::string &id, Pending &p, const std::set<ProcKey> &lost);
    // This server's participants voted: an abort aborts for all, else the
    // vote is sent to the other servers.
    void election_local_done(const std::string &id);
    // Every server's vote is in: the same new leader is chosen on each.
    void check_election(const std::string &id);
    // Another server's PMIX_GROUP_CONSTRUCT_ABORT `abort` from a voter
    // (kAbortLeadersKey) reached this server before its host's answer: its
    // participants get PMIX_GROUP_LEADER_FAILED before the abort.
    void tell_leaders_failed(const std::string &id, const Pending &p, const events::Event &abort);
    // A local participant of constructs already handed to the host ended:
    // they go on without it and the other servers are told.
    void lost_after_host(const ProcKey &client);
    // Ends a construct waiting for decisions with `status` for every caller.
    void end_decisions(const std::string &id, pmix_status_t status);
    // The participants of `p` served elsewhere that still take part.
    std::vector<pmix_proc_t> remote_participants(const Pending &p) const;
    void destruct_ready(const std::string &id, const FenceTracker &t);
    // The `group` upcall; `done` runs on the progress thread with its answer.
    void call_host(pmix_group_operation_t op, const std::string &id,
                   const std::vector<pmix_proc_t> &procs, std::shared_ptr<HostArgs> args,
                   std::function<void(pmix_status_t, wire::InfoArray)> done);
    // This server's share of the members' data for the host
    // (PMIX_GROUP_ENDPT_DATA): the committed REMOTE blobs of the local
    // members and their PMIX_GROUP_LOCAL_CIDs.
    std::vector<std::uint8_t> endpoint_data(const Pending &p);
    // PMIX_GROUP_MEMBER_FAILED about `gone` to `to` (the other members), then
    // PMIX_GROUP_MEMBERSHIP_UPDATE with `to` as the membership.
    void raise_member_failed(const std::string &id, const ProcKey &gone,
                             const std::vector<pmix_proc_t> &to);

    ClientTable &clients_;
    const HostUpcalls &host_;
    CollectiveTracker &collectives_;
    RemoteBlobs &remote_;
    JobBlobFn job_blob_;
    RaiseFn raise_;
    RaiseFn raise_out_;
    std::map<std::string, GroupRecord> groups_;
    std::map<std::string, Pending> pending_;
    // Destructs under way: the (sorted) members their collective is over.
    std::map<std::string, std::vector<pmix_proc_t>> destructing_;
    // Results of a host upcall kept until the construct's finished hook runs.
    std::map<std::string, wire::InfoArray> host_results_;
    // A construct that failed (timeout, lost member): the local participants
    // that had not arrived get its status when they do, once each.
    struct Failed {
        pmix_status_t status = PMIX_ERR_TIMEOUT;
        std::set<ProcKey> latecomers;
    };
    std::map<std::string, Failed> failed_;
    std::map<std::string, Invitation> invitations_;
    std::size_t next_context_id_ = 1;
    GroupBootstrap bootstrap_{*this};  // constructs with PMIX_GROUP_BOOTSTRAP or no procs
};

}  // namespace pmixpp::server
