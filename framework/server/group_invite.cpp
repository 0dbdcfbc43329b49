// Groups (groups.hpp): the invite method, PMIx_Group_invite / _join, with
// the leader's decisions, the leader's failure and the abort. docs/groups.md,
// "Invite and join", says what a caller sees.
//
// The leader's server keeps the Invitation. Each invitee's answer (accept,
// decline, or its departure) goes to the leader as a group_ask message: its
// library runs the event among its handlers (registered with us or not) and
// answers with group_decision (go on, or PMIX_GROUP_CONSTRUCT_ABORT). When no
// answer and no decision is awaited, the group is complete: the leader's
// invite calls and the accepted joins are answered with the results, and
// PMIX_GROUP_CONSTRUCT_COMPLETE goes to every member. A leader that departs
// is announced to the participants by PMIX_GROUP_LEADER_FAILED (group_ask
// too); their decisions elect the new leader (a volunteer returning
// PMIX_GROUP_LEADER, else the lowest group rank), announced by
// PMIX_GROUP_LEADER_SELECTED, or abort. Invitees served by other servers:
// the protocol between the servers at the end of this file.
#include <algorithm>

#include "mca/logging.hpp"
#include "runtime/progress.hpp"
#include "server/group_util.hpp"
#include "server/groups.hpp"
#include "server/upcall_results.hpp"
#include "wire/codec.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Command;
using wire::Frame;
using namespace group_util;

namespace {

using Answer = GroupInvitationAnswer;

auto log() {
    return mca::framework_logger("server");
}

bool in(const std::vector<pmix_proc_t> &procs, const ProcKey &k) {
    return std::any_of(procs.begin(), procs.end(), [&](const auto &p) { return key_of(p) == k; });
}

// An invitation's vote across servers (group_util.hpp's kVoteKey,
// kVotersKey, kVolunteersKey, and these; "electing an invitation's leader
// across servers" below).
constexpr const char *kInvEligibleKey = "pmixpp.grp.inv.eligible";  // procs: voted there
constexpr const char *kInvAcceptedKey = "pmixpp.grp.inv.accepted";  // procs: had accepted
constexpr const char *kInvDecidedKey = "pmixpp.grp.inv.decided";    // procs: the old leader decided
// size: milliseconds left of the invite's PMIX_TIMEOUT when the vote was sent
constexpr const char *kInvTimeoutKey = "pmixpp.grp.inv.timeout";
// string (the group id): the invite's PMIX_TIMEOUT expired during the
// election (an event whose code is PMIX_ERR_TIMEOUT)
constexpr const char *kInvExpiredKey = "pmixpp.grp.inv.expired";

using Clock = std::chrono::steady_clock;

// A timer of the progress engine for `deadline` (at once when it passed).
std::uint64_t timer_until(Clock::time_point deadline, runtime::ProgressEngine::Task fire) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    return runtime::ProgressEngine::instance().after(std::max(left, std::chrono::milliseconds(0)),
                                                     std::move(fire));
}

// Position of `k` in `order` (its group rank when the group completes).
std::size_t position(const std::vector<pmix_proc_t> &order, const ProcKey &k) {
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (key_of(order[i]) == k) return i;
    }
    return order.size();
}

}  // namespace

void Groups::raise_group_event(pmix_status_t code, const std::string &id, const pmix_proc_t *source,
                               const std::vector<pmix_proc_t> &to, std::vector<pmix_info_t> extra,
                               bool out) {
    const RaiseFn &raise = out && raise_out_ ? raise_out_ : raise_;
    if (!raise || to.empty()) {
        for (auto &i : extra) PMIx_Value_destruct(&i.value);  // owned by this call
        return;
    }
    auto ev = group_event(code, id, source, to, std::move(extra));
    raise(std::make_shared<const events::Event>(std::move(ev)));
}

bool Groups::send_ask(const ProcKey &to, const std::string &id, const events::Event &ev) {
    ClientRecord *c = clients_.find_client(to);
    if (c == nullptr || c->gone() || !c->channel) return false;
    BodyWriter w;
    w.str(id);
    ev.write(w);
    return c->channel->send(static_cast<std::uint16_t>(Command::group_ask), 0, 0, w.take());
}

void Groups::ask_leader(Invitation &inv, const std::string &id, pmix_status_t code,
                        const ProcKey &about) {
    inv.undecided[about] = code;
    // Asked of the new leader once there is one.
    if (!inv.voters.empty() || invite_elections_.count(id) != 0) return;
    const pmix_proc_t who = proc_of(about);
    const pmix_proc_t leader = proc_of(inv.leader);
    // Accepted / declined come from the invitee, failed from this library.
    const auto ev = group_event(code, id, code == PMIX_GROUP_INVITE_FAILED ? nullptr : &who,
                                {leader}, {affected(who)});
    if (!send_ask(inv.leader, id, ev)) {
        // The leader is gone: its departure elects another, who is asked then.
        log()->info("server: group {}: leader {} cannot be asked", id, describe(inv.leader));
    }
}

// ---------------------------------------------------------------------------------------------
// requests

void Groups::handle_invite(Channel &ch, Frame &frame, ClientRecord *client) {
    GroupMembersRequest request;
    if (!read_group_members_request(frame, request) || client == nullptr) {
        ch.close("malformed group_invite request");
        return;
    }
    auto &[id, procs, timeout, info] = request;
    const auto reply = PendingReply::to(ch, frame);
    const ProcKey me = key_of(client->proc);
    std::vector<pmix_proc_t> invitees = expand(procs);
    std::erase_if(invitees, [&](const pmix_proc_t &p) { return key_of(p) == me; });
    if (invitees.empty()) {
        send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
        return;
    }
    for (const auto &p : invitees) {
        if (key_of(p).second == PMIX_RANK_WILDCARD) {  // a job this server does not know
            send_reply(reply, status_body(PMIX_ERR_NOT_SUPPORTED));
            return;
        }
    }
    const bool remote = !collectives_.all_local(invitees);
    if (remote && (host_->notify_event == nullptr || host_->group == nullptr)) {
        // The invitation and the answers travel as events, the completion
        // as the group upcall (docs/groups.md, "Invitations across servers").
        log()->info(
            "server: group {}: invitees served elsewhere need the host's notify_event and "
            "group upcalls",
            id);
        send_reply(reply, status_body(PMIX_ERR_NOT_SUPPORTED));
        return;
    }
    auto it = invitations_.find(id);
    if (it != invitations_.end()) {
        // The leader invites more (a replacement, from its handler).
        Invitation &inv = it->second;
        if (inv.leader != me || inv.completing) {
            send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
            return;
        }
        std::vector<pmix_proc_t> fresh;
        for (const auto &p : invitees) {
            const ProcKey k = key_of(p);
            auto a = inv.answers.find(k);
            if (a != inv.answers.end() &&
                (a->second == Answer::pending || a->second == Answer::accepted))
                continue;  // invited already
            inv.answers[k] = Answer::pending;
            if (!in(inv.order, k)) inv.order.push_back(p);
            fresh.push_back(p);
        }
        inv.leader_replies.push_back(reply);
        raise_group_event(PMIX_GROUP_INVITED, id, &client->proc, fresh,
                          {procs_info(PMIX_GROUP_MEMBERSHIP, inv.order)}, remote);
        log()->info("server: group {}: {} invites {} more", id, describe(me), fresh.size());
        return;
    }
    if (pending_.count(id) != 0 || check_new_id(id) != PMIX_SUCCESS) {
        log()->warn("server: group id '{}' of {} is empty, too long, a namespace or in use", id,
                    describe(me));
        send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
        return;
    }
    failed_.erase(id);  // an earlier construct's latecomers no longer matter
    invite_elections_ended_.erase(id);
    Invitation inv;
    inv.leader = me;
    inv.order.push_back(client->proc);
    for (const auto &p : invitees) {
        inv.order.push_back(p);
        inv.answers[key_of(p)] = Answer::pending;
    }
    inv.leader_replies.push_back(reply);
    inv.optional = mca::info_flag(info.span(), PMIX_GROUP_OPTIONAL).value_or(false);
    inv.notify_termination =
        mca::info_flag(info.span(), PMIX_GROUP_NOTIFY_TERMINATION).value_or(false);
    inv.assign_context_id =
        mca::info_flag(info.span(), PMIX_GROUP_ASSIGN_CONTEXT_ID).value_or(false);
    if (timeout > 0) {
        inv.deadline = Clock::now() + std::chrono::seconds(timeout);
        inv.timer = timer_until(*inv.deadline, [this, id] { invitation_timed_out(id); });
    }
    auto &stored = invitations_.emplace(id, std::move(inv)).first->second;
    log()->info("server: group {}: {} invites {} processes", id, describe(me), invitees.size());
    // The invitation: to each invitee, from the leader, with every process
    // invited so far (cached: an invitee may register for it later).
    raise_group_event(PMIX_GROUP_INVITED, id, &client->proc, invitees,
                      {procs_info(PMIX_GROUP_MEMBERSHIP, stored.order)}, remote);
    for (const auto &p : invitees) {
        const ClientRecord *c = clients_.find_client(key_of(p));
        if (c != nullptr && c->gone()) invitee_failed(id, key_of(p));  // served elsewhere: told
    }
}

void Groups::handle_join(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::string id;
    pmix_proc_t leader{};
    std::uint8_t opt = 0;
    std::uint32_t timeout = 0;
    wire::InfoArray info;
    r.str(id);
    r.proc(leader);
    r.u8(opt);
    r.u32(timeout);
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed group_join request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    const ProcKey me = key_of(client->proc);
    // A latecomer to an invitation that failed gets its status, once.
    if (auto f = failed_.find(id); f != failed_.end() && f->second.latecomers.erase(me) != 0) {
        const pmix_status_t st = f->second.status;
        if (f->second.latecomers.empty()) failed_.erase(f);
        send_reply(reply, status_body(st));
        return;
    }
    auto it = invitations_.find(id);
    if (it == invitations_.end() && join_remote(id, leader, opt, me, reply)) return;
    if (it == invitations_.end()) {
        send_reply(reply, status_body(PMIX_ERR_NOT_FOUND));
        return;
    }
    Invitation &inv = it->second;
    if (opt != PMIX_GROUP_ACCEPT && opt != PMIX_GROUP_DECLINE) {
        send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
        return;
    }
    if (me == inv.leader && opt == PMIX_GROUP_ACCEPT) {
        // Elected leader before it answered: it waits as the leader does.
        inv.leader_replies.push_back(reply);
        check_invitation(id);
        return;
    }
    auto a = inv.answers.find(me);
    const bool leader_ok = leader.nspace[0] == '\0' || key_of(leader) == inv.leader;
    if (a == inv.answers.end() || a->second != Answer::pending || !leader_ok) {
        log()->info(
            "server: group {}: join of {} refused (not invited, answered, or not the "
            "leader's invitation)",
            id, describe(me));
        send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
        return;
    }
    if (opt == PMIX_GROUP_ACCEPT) {
        a->second = Answer::accepted;
        inv.joined[me] = reply;
        ask_leader(inv, id, PMIX_GROUP_INVITE_ACCEPTED, me);
    } else {
        a->second = Answer::declined;
        send_reply(reply, status_body(PMIX_SUCCESS));  // not a member: nothing to wait for
        ask_leader(inv, id, PMIX_GROUP_INVITE_DECLINED, me);
    }
    log()->info("server: group {}: {} {}", id, describe(me),
                opt == PMIX_GROUP_ACCEPT ? "accepts" : "declines");
    check_invitation(id);
}

void Groups::handle_decision(Channel &ch, Frame &frame, ClientRecord *client) {
    const auto d = group_util::read_decision(frame);
    if (!d || client == nullptr) {
        ch.close("malformed group_decision request");
        return;
    }
    const auto &[id, code, about, decision, volunteer] = *d;
    const auto reply = PendingReply::to(ch, frame);
    const ProcKey me = key_of(client->proc);
    if (code == PMIX_GROUP_LEADER_FAILED && invite_elections_.count(id) != 0) {
        send_reply(reply, status_body(PMIX_SUCCESS));
        invite_vote_answer(id, me, decision, volunteer != 0);  // across servers
        return;
    }
    auto it = invitations_.find(id);
    if (it == invitations_.end()) {
        // A leader's or a voter's answer about a collective construct (groups.cpp).
        const bool known = pending_.count(id) != 0;
        send_reply(reply, status_body(known ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND));
        if (known) construct_decision(id, me, code, key_of(about), decision, volunteer != 0);
        return;
    }
    Invitation &inv = it->second;
    send_reply(reply, status_body(PMIX_SUCCESS));
    if (code == PMIX_GROUP_LEADER_FAILED) {
        if (inv.voters.erase(me) == 0) return;
        if (volunteer != 0) inv.volunteers.push_back(me);
        if (decision == PMIX_GROUP_CONSTRUCT_ABORT) inv.abort_vote = true;
        if (inv.voters.empty()) finish_vote(id);
        return;
    }
    if (me != inv.leader) return;
    auto u = inv.undecided.find(key_of(about));
    if (u == inv.undecided.end() || u->second != code) return;  // answered already
    inv.undecided.erase(u);
    if (decision == PMIX_GROUP_CONSTRUCT_ABORT) {
        log()->info("server: group {}: the leader aborts", id);
        end_invitation(id, PMIX_GROUP_CONSTRUCT_ABORT);
        return;
    }
    check_invitation(id);
}

// ---------------------------------------------------------------------------------------------
// failures, the leader's election

void Groups::invitee_failed(const std::string &id, const ProcKey &who) {
    auto it = invitations_.find(id);
    if (it == invitations_.end()) return;
    Invitation &inv = it->second;
    auto a = inv.answers.find(who);
    if (a == inv.answers.end()) return;
    if (a->second != Answer::pending && a->second != Answer::accepted) return;
    a->second = Answer::failed;
    inv.joined.erase(who);
    inv.undecided.erase(who);
    const bool voted = inv.voters.erase(who) != 0;
    log()->info("server: group {}: invitee {} failed", id, describe(who));
    // To the leader (during an election: to the new one, once elected).
    if (!inv.completing) ask_leader(inv, id, PMIX_GROUP_INVITE_FAILED, who);
    if (voted && inv.voters.empty()) {
        finish_vote(id);
        return;
    }
    check_invitation(id);
}

void Groups::leader_failed(const std::string &id) {
    auto it = invitations_.find(id);
    if (it == invitations_.end()) return;
    Invitation &inv = it->second;
    const ProcKey old = inv.leader;
    std::erase_if(inv.order, [&](const pmix_proc_t &p) { return key_of(p) == old; });
    inv.leader_replies.clear();
    inv.voters.clear();
    inv.volunteers.clear();
    inv.abort_vote = false;
    std::vector<pmix_proc_t> participants;
    for (const auto &[k, a] : inv.answers) {
        if (a == Answer::pending || a == Answer::accepted) participants.push_back(proc_of(k));
    }
    log()->info("server: group {}: leader {} failed, {} participants vote", id, describe(old),
                participants.size());
    if (participants.empty()) {
        if (inv.timer != 0) runtime::ProgressEngine::instance().cancel(inv.timer);
        invitations_.erase(it);
        return;
    }
    if (!collectives_.all_local(participants)) {
        // Every server of a participant votes (below, "electing an
        // invitation's leader across servers"). The invite's PMIX_TIMEOUT
        // goes on running in the election (every server that votes bounds it).
        if (inv.timer != 0) runtime::ProgressEngine::instance().cancel(inv.timer);
        inv.timer = 0;
        InviteElection e;
        e.deadline = inv.deadline;
        e.failed = old;
        e.order = inv.order;
        e.assign_context_id = inv.assign_context_id;
        e.notify_termination = inv.notify_termination;
        e.optional = inv.optional;
        for (const auto &[k, a] : inv.answers) {
            if (a == Answer::accepted && inv.undecided.count(k) == 0) e.decided.insert(k);
        }
        invite_election_start(id, std::move(e));
        return;
    }
    ask_vote(id, inv.voters, participants, proc_of(old));
    if (inv.voters.empty()) finish_vote(id);
}

void Groups::finish_vote(const std::string &id) {
    auto it = invitations_.find(id);
    if (it == invitations_.end()) return;
    Invitation &inv = it->second;
    if (inv.abort_vote) {
        log()->info("server: group {}: a participant aborts after the leader failed", id);
        end_invitation(id, PMIX_GROUP_CONSTRUCT_ABORT);
        return;
    }
    auto live = [&](const ProcKey &k) {
        auto a = inv.answers.find(k);
        return a != inv.answers.end() &&
               (a->second == Answer::pending || a->second == Answer::accepted);
    };
    std::vector<ProcKey> volunteers, accepted, invited;
    for (const auto &k : inv.volunteers) {
        if (live(k)) volunteers.push_back(k);
    }
    // No volunteer: the lowest group rank among those who accepted, else
    // among those still invited.
    for (const auto &[k, a] : inv.answers) {
        if (a == Answer::accepted) accepted.push_back(k);
        if (a == Answer::pending) invited.push_back(k);
    }
    const auto elected = elect(volunteers, {accepted, invited},
                               [&](const ProcKey &k) { return position(inv.order, k); });
    if (!elected) {
        end_invitation(id, PMIX_ERR_LOST_CONNECTION);
        return;
    }
    const ProcKey leader = *elected;
    inv.leader = leader;
    inv.volunteers.clear();
    // The new leader is no invitee any more: it waits as the leader (its join, if made).
    if (auto j = inv.joined.find(leader); j != inv.joined.end()) {
        inv.leader_replies.push_back(j->second);
        inv.joined.erase(j);
    }
    inv.answers.erase(leader);
    inv.undecided.erase(leader);
    // The leader first in the group's order.
    const std::size_t at = position(inv.order, leader);
    if (at < inv.order.size())
        std::rotate(inv.order.begin(), inv.order.begin() + at, inv.order.begin() + at + 1);
    std::vector<pmix_proc_t> participants{proc_of(leader)};
    for (const auto &[k, a] : inv.answers) {
        if (a == Answer::pending || a == Answer::accepted) participants.push_back(proc_of(k));
    }
    const pmix_proc_t lp = proc_of(leader);
    log()->info("server: group {}: {} is the new leader", id, describe(leader));
    raise_group_event(PMIX_GROUP_LEADER_SELECTED, id, nullptr, participants,
                      {load_info(PMIX_EVENT_AFFECTED_PROC, &lp, PMIX_PROC)});
    // What the old leader had not decided goes to the new one.
    auto undecided = std::move(inv.undecided);
    inv.undecided.clear();
    for (const auto &[k, code] : undecided) ask_leader(inv, id, code, k);
    check_invitation(id);
}

// ---------------------------------------------------------------------------------------------
// completion

void Groups::check_invitation(const std::string &id) {
    auto it = invitations_.find(id);
    if (it == invitations_.end()) return;
    Invitation &inv = it->second;
    if (inv.completing || !inv.undecided.empty() || !inv.voters.empty() ||
        invite_elections_.count(id) != 0)
        return;
    for (const auto &[k, a] : inv.answers) {
        if (a == Answer::pending) return;
    }
    // The elected leader that was only invited: complete once it called join.
    const ClientRecord *lc = clients_.find_client(inv.leader);
    if (inv.leader_replies.empty() && lc != nullptr && !lc->gone()) return;
    if (inv.timer != 0) {
        runtime::ProgressEngine::instance().cancel(inv.timer);
        inv.timer = 0;
    }
    for (const auto &[k, a] : inv.answers) {
        if (a == Answer::accepted && clients_.find_client(k) == nullptr) {
            complete_across_servers(id);  // members served elsewhere
            return;
        }
    }
    if (!inv.assign_context_id) {
        complete_invitation(id, std::nullopt);
        return;
    }
    if (host_->group == nullptr) {
        complete_invitation(id, next_context_id_++);
        return;
    }
    // The context id from the host, as for a construct.
    inv.completing = true;
    std::vector<pmix_proc_t> members{proc_of(inv.leader)};
    for (const auto &[k, a] : inv.answers) {
        if (a == Answer::accepted) members.push_back(proc_of(k));
    }
    std::sort(members.begin(), members.end(), proc_less);
    auto args = std::make_shared<HostArgs>();
    const bool yes = true;
    args->load(PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    call_host(PMIX_GROUP_CONSTRUCT, id, members, args,
              [this, id](pmix_status_t st, wire::InfoArray results) {
                  if (st != PMIX_SUCCESS) {
                      end_invitation(id, st);
                      return;
                  }
                  std::optional<std::size_t> cid = context_id_in(results.span());
                  complete_invitation(id,
                                      cid ? cid : std::optional<std::size_t>(next_context_id_++));
              });
}

void Groups::complete_invitation(const std::string &id, std::optional<std::size_t> context_id) {
    auto it = invitations_.find(id);
    if (it == invitations_.end()) return;
    Invitation inv = std::move(it->second);
    invitations_.erase(it);
    std::vector<pmix_proc_t> members;
    bool all = true;
    for (const auto &p : inv.order) {
        const ProcKey k = key_of(p);
        if (k == inv.leader) {
            members.push_back(p);
            continue;
        }
        auto a = inv.answers.find(k);
        if (a != inv.answers.end() && a->second == Answer::accepted) {
            members.push_back(p);
        } else {
            all = false;
        }
    }
    GroupRecord g{id, members, context_id, inv.notify_termination, false, {inv.leader}};
    // The standard: PARTIAL_SUCCESS when not all invited processes joined.
    const pmix_status_t status = all ? PMIX_SUCCESS : PMIX_ERR_PARTIAL_SUCCESS;
    const MemberData data = member_data(g, {}, {});
    const std::map<ProcKey, std::uint64_t> cids;
    for (const auto &reply : inv.leader_replies)
        send_reply(reply, member_reply(g, status, cids, data, inv.leader));
    for (const auto &[k, reply] : inv.joined)
        send_reply(reply, member_reply(g, PMIX_SUCCESS, cids, data, k));  // a member
    std::vector<pmix_info_t> extra{procs_info(PMIX_GROUP_MEMBERSHIP, members)};
    if (context_id) extra.push_back(load_info(PMIX_GROUP_CONTEXT_ID, &*context_id, PMIX_SIZE));
    const pmix_proc_t leader = proc_of(inv.leader);
    groups_[id] = std::move(g);
    log()->info("server: group {} constructed by invitation ({} members)", id, members.size());
    raise_group_event(PMIX_GROUP_CONSTRUCT_COMPLETE, id, &leader, members, extra);
}

void Groups::end_invitation(const std::string &id, pmix_status_t status, bool announce) {
    auto it = invitations_.find(id);
    if (it == invitations_.end()) return;
    Invitation inv = std::move(it->second);
    invitations_.erase(it);
    if (inv.timer != 0) runtime::ProgressEngine::instance().cancel(inv.timer);
    for (const auto &reply : inv.leader_replies) send_reply(reply, status_body(status));
    for (const auto &[k, reply] : inv.joined) send_reply(reply, status_body(status));
    std::set<ProcKey> late;
    std::vector<pmix_proc_t> invited, remote;
    for (const auto &[k, a] : inv.answers) {
        const bool here = clients_.find_client(k) != nullptr;
        if (a == Answer::pending && here) late.insert(k);
        if (a == Answer::pending || a == Answer::accepted) invited.push_back(proc_of(k));
        if ((a == Answer::pending || a == Answer::accepted) && !here) remote.push_back(proc_of(k));
    }
    if (!late.empty()) failed_[id] = Failed{status, std::move(late)};
    log()->warn("server: group {} invitation ended: {}", id, PMIx_Error_string(status));
    const pmix_proc_t leader = proc_of(inv.leader);
    if (inv.completing) remote.clear();  // their servers have the host's answer
    if (status == PMIX_GROUP_CONSTRUCT_ABORT && announce) {
        // Also to the invitees served elsewhere: their servers end it there.
        raise_group_event(PMIX_GROUP_CONSTRUCT_ABORT, id, &leader, invited, {}, !remote.empty());
    } else if (status != PMIX_GROUP_CONSTRUCT_ABORT) {
        // The invitees' servers are told by an event whose code is the status.
        send_to_servers(status, id, &leader, remote);
    }
}

void Groups::invitation_timed_out(const std::string &id) {
    auto it = invitations_.find(id);
    if (it == invitations_.end()) return;
    Invitation &inv = it->second;
    inv.timer = 0;
    if (inv.completing) return;
    if (!inv.optional) {
        end_invitation(id, PMIX_ERR_TIMEOUT);
        return;
    }
    // PMIX_GROUP_OPTIONAL: the group forms with those who joined.
    std::set<ProcKey> late;
    std::vector<pmix_proc_t> late_elsewhere;  // told by their servers
    for (auto &[k, a] : inv.answers) {
        if (a != Answer::pending) continue;
        a = Answer::failed;
        if (clients_.find_client(k) != nullptr) {
            late.insert(k);
        } else {
            late_elsewhere.push_back(proc_of(k));
        }
    }
    const pmix_proc_t leader = proc_of(inv.leader);
    send_to_servers(PMIX_ERR_TIMEOUT, id, &leader, late_elsewhere);
    inv.undecided.clear();
    inv.voters.clear();
    if (!late.empty()) failed_[id] = Failed{PMIX_ERR_TIMEOUT, std::move(late)};
    const ClientRecord *lc = clients_.find_client(inv.leader);
    if (inv.leader_replies.empty() && (lc == nullptr || lc->gone())) {
        end_invitation(id, PMIX_ERR_TIMEOUT);
        return;
    }
    check_invitation(id);
}

// ---------------------------------------------------------------------------------------------
// invitations across servers (docs/groups.md, "Invitations across servers")
//
// The leader's server keeps the Invitation; each server of invitees keeps a
// RemoteInvitation with its own invitees. They talk through the host's
// notify_event upcall (the host delivers each event to the servers of the
// processes its custom range names, by PMIx_Notify_event):
//   PMIX_GROUP_INVITED (leader -> invitees)       routed to the invitees too
//   PMIX_GROUP_INVITE_ACCEPTED / _DECLINED         (invitee -> leader)
//   PMIX_GROUP_INVITE_FAILED (SMS -> leader)       an invitee ended first
//   PMIX_GROUP_CONSTRUCT_COMPLETE (leader -> members served elsewhere), with
//     the final membership: every server of the group calls its `group`
//     upcall, which exchanges the members' data and gives the context id
//   PMIX_GROUP_CONSTRUCT_ABORT (leader -> invitees) routed to them too
//   an event whose code is the failure's status (leader -> invitees)
// Every message but the invitation and the abort carries
// PMIX_EVENT_DO_NOT_CACHE and is consumed by the receiving server.

namespace {

std::string group_id_of(const events::Event &ev) {
    const auto *i = find_info(ev.info_span(), PMIX_GROUP_ID);
    if (i == nullptr || i->value.type != PMIX_STRING || i->value.data.string == nullptr) return {};
    return i->value.data.string;
}

bool is_group_event(pmix_status_t code) {
    return code <= PMIX_GROUP_INVITED && code >= PMIX_GROUP_MEMBER_FAILED;
}

}  // namespace

bool Groups::is_local(const pmix_proc_t &p) const {
    return clients_.find_client(key_of(p)) != nullptr;
}

void Groups::send_to_servers(pmix_status_t code, const std::string &id, const pmix_proc_t *source,
                             const std::vector<pmix_proc_t> &to, std::vector<pmix_info_t> extra) {
    const bool yes = true;
    extra.push_back(load_info(PMIX_EVENT_DO_NOT_CACHE, &yes, PMIX_BOOL));
    raise_group_event(code, id, source, raise_out_ ? to : std::vector<pmix_proc_t>{},
                      std::move(extra), true);
}

std::shared_ptr<HostArgs> Groups::invitation_args(bool assign,
                                                  const std::vector<pmix_proc_t> &members) {
    auto args = std::make_shared<HostArgs>();
    if (assign) args->add_bool(PMIX_GROUP_ASSIGN_CONTEXT_ID, true);
    std::vector<std::uint8_t> stream;
    for (const auto &m : members) {
        ClientRecord *c = clients_.find_client(key_of(m));
        if (c != nullptr && c->committed) wire::append_record(stream, c->proc, c->remote_blob);
    }
    auto endpoint = BodyWriter().bytes(stream).u32(0).take();  // no local context ids
    pmix_byte_object_t bo{reinterpret_cast<char *>(endpoint.data()), endpoint.size()};
    args->load(PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);  // copied
    return args;
}

bool Groups::invitation_message(const events::Event &ev) {
    if (clients_.find_client(key_of(ev.source)) != nullptr) return false;  // raised here
    const std::string id = group_id_of(ev);
    if (id.empty()) return false;
    switch (ev.status) {
        case PMIX_GROUP_INVITE_ACCEPTED:
        case PMIX_GROUP_INVITE_DECLINED:
        case PMIX_GROUP_INVITE_FAILED: {
            // At the leader's server: an invitee's answer, or its end.
            auto it = invitations_.find(id);
            if (it == invitations_.end() || ev.affected.empty()) return true;  // ended meanwhile
            const ProcKey who = key_of(ev.affected.front());
            if (clients_.find_client(who) != nullptr) return true;  // ours: we know better
            if (ev.status == PMIX_GROUP_INVITE_FAILED) {
                invitee_failed(id, who);
                return true;
            }
            Invitation &inv = it->second;
            auto a = inv.answers.find(who);
            if (a == inv.answers.end() || a->second != Answer::pending) return true;
            const bool accepted = ev.status == PMIX_GROUP_INVITE_ACCEPTED;
            a->second = accepted ? Answer::accepted : Answer::declined;
            log()->info("server: group {}: {} {} (told by the host)", id, describe(who),
                        accepted ? "accepts" : "declines");
            ask_leader(inv, id, ev.status, who);
            check_invitation(id);
            return true;
        }
        case PMIX_GROUP_INVITED: {
            // At an invitee's server: the invitation, which goes on to them.
            std::vector<ProcKey> mine;
            for (const auto &p : ev.custom_range) {
                if (is_local(p)) mine.push_back(key_of(p));
            }
            if (mine.empty() || invitations_.count(id) != 0) return false;
            RemoteInvitation &r = remote_invitations_[id];
            invite_elections_ended_.erase(id);
            r.leader = key_of(ev.source);
            if (auto f = failed_.find(id); f != failed_.end()) {
                for (const auto &k : mine) f->second.latecomers.erase(k);
                if (f->second.latecomers.empty()) failed_.erase(f);
            }
            for (const auto &k : mine) {
                auto a = r.answers.find(k);
                if (a != r.answers.end() &&
                    (a->second == Answer::pending || a->second == Answer::accepted))
                    continue;
                r.answers[k] = Answer::pending;
            }
            log()->info("server: group {}: {} invites {} processes here (told by the host)", id,
                        describe(r.leader), mine.size());
            for (const auto &k : mine) {
                const ClientRecord *c = clients_.find_client(k);
                if (c != nullptr && c->gone()) remote_invitee_departed(k);
            }
            return false;
        }
        case PMIX_GROUP_CONSTRUCT_COMPLETE:
            if (remote_invitations_.count(id) == 0) return false;
            complete_remote(id, ev);
            return true;
        case PMIX_GROUP_CONSTRUCT_ABORT:
            // A participant served elsewhere aborts (its handler's vote, or
            // its own event): the invitation ends here too.
            if (invite_election_erase(id)) {
                invite_elections_ended_.insert(id);
            } else if (const auto *f = find_info(ev.info_span(), kAbortLeadersKey);
                       f != nullptr && remote_invitations_.count(id) != 0) {
                // An abort from the failed leader's server before any vote
                // reached this one: its participants were not asked about
                // the leader yet; every participant is told of its failure.
                const auto leaders = events::procs_of(f->value);
                std::vector<pmix_proc_t> ask;
                for (const auto &[k, a] : remote_invitations_.at(id).answers) {
                    if (a == Answer::pending || a == Answer::accepted) ask.push_back(proc_of(k));
                }
                std::set<ProcKey> asked;
                if (!leaders.empty()) ask_vote(id, asked, ask, leaders.front());
            }
            if (invitations_.count(id) != 0) end_invitation(id, PMIX_GROUP_CONSTRUCT_ABORT, false);
            if (remote_invitations_.count(id) != 0) end_remote(id, PMIX_GROUP_CONSTRUCT_ABORT);
            return false;  // the invitees get it too
        case PMIX_GROUP_LEADER_FAILED:
            // Another server's vote about an invitation's failed leader; a
            // construct's goes on to host_event.
            if (find_info(ev.info_span(), kInvEligibleKey) == nullptr) return false;
            invite_vote_in(id, ev);
            return true;
        default: {
            if (ev.status == PMIX_ERR_TIMEOUT && find_info(ev.info_span(), kInvExpiredKey)) {
                invite_election_timed_out(id, &ev);
                return true;
            }
            auto r = remote_invitations_.find(id);
            if (r == remote_invitations_.end() || is_group_event(ev.status) ||
                key_of(ev.source) != r->second.leader)
                return false;
            end_remote(id, ev.status, &ev.custom_range);  // those it names
            return true;
        }
    }
}

bool Groups::join_remote(const std::string &id, const pmix_proc_t &leader, std::uint8_t opt,
                         const ProcKey &me, const PendingReply &reply) {
    auto it = remote_invitations_.find(id);
    if (it == remote_invitations_.end()) return false;
    RemoteInvitation &r = it->second;
    auto a = r.answers.find(me);
    const bool leader_ok = leader.nspace[0] == '\0' || key_of(leader) == r.leader;
    if ((opt != PMIX_GROUP_ACCEPT && opt != PMIX_GROUP_DECLINE) || a == r.answers.end() ||
        a->second != Answer::pending || !leader_ok) {
        send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
        return true;
    }
    const bool accept = opt == PMIX_GROUP_ACCEPT;
    const pmix_proc_t who = proc_of(me);
    const pmix_proc_t lp = proc_of(r.leader);
    if (accept) {
        a->second = Answer::accepted;
        r.joined[me] = reply;  // answered when the group is complete
    } else {
        a->second = Answer::declined;
        send_reply(reply, status_body(PMIX_SUCCESS));
    }
    log()->info("server: group {}: {} {} (the leader is served elsewhere)", id, describe(me),
                accept ? "accepts" : "declines");
    // During an election the answer goes to the new leader once it is known.
    if (invite_elections_.count(id) != 0) return true;
    send_to_servers(accept ? PMIX_GROUP_INVITE_ACCEPTED : PMIX_GROUP_INVITE_DECLINED, id, &who,
                    {lp}, {load_info(PMIX_EVENT_AFFECTED_PROC, &who, PMIX_PROC)});
    // Nobody here takes part any more: nothing to wait for.
    if (std::none_of(r.answers.begin(), r.answers.end(),
                     [](const auto &e) { return e.second != Answer::declined; }))
        remote_invitations_.erase(it);
    return true;
}

void Groups::remote_invitee_departed(const ProcKey &client) {
    for (auto &[id, r] : remote_invitations_) {
        auto a = r.answers.find(client);
        if (a == r.answers.end() || (a->second != Answer::pending && a->second != Answer::accepted))
            continue;
        a->second = Answer::failed;
        r.joined.erase(client);
        const pmix_proc_t who = proc_of(client);
        log()->info("server: group {}: invitee {} failed; the leader's server is told", id,
                    describe(client));
        send_to_servers(PMIX_GROUP_INVITE_FAILED, id, nullptr, {proc_of(r.leader)},
                        {load_info(PMIX_EVENT_AFFECTED_PROC, &who, PMIX_PROC)});
    }
}

void Groups::complete_across_servers(const std::string &id) {
    auto it = invitations_.find(id);
    if (it == invitations_.end()) return;
    Invitation &inv = it->second;
    inv.completing = true;
    std::vector<pmix_proc_t> members, remote, local;
    for (const auto &p : inv.order) {
        const ProcKey k = key_of(p);
        auto a = inv.answers.find(k);
        if (k != inv.leader && (a == inv.answers.end() || a->second != Answer::accepted)) continue;
        members.push_back(p);
        (is_local(p) ? local : remote).push_back(p);
    }
    const pmix_proc_t leader = proc_of(inv.leader);
    // The trigger: every server of a member calls its group upcall now.
    send_to_servers(PMIX_GROUP_CONSTRUCT_COMPLETE, id, &leader, remote,
                    {procs_info(PMIX_GROUP_MEMBERSHIP, members),
                     load_info(PMIX_GROUP_ASSIGN_CONTEXT_ID, &inv.assign_context_id, PMIX_BOOL),
                     load_info(PMIX_GROUP_NOTIFY_TERMINATION, &inv.notify_termination, PMIX_BOOL)});
    log()->info("server: group {}: complete with {} members, {} served elsewhere", id,
                members.size(), remote.size());
    auto args = invitation_args(inv.assign_context_id, local);
    std::sort(members.begin(), members.end(), proc_less);
    const bool assign = inv.assign_context_id;
    call_host(PMIX_GROUP_CONSTRUCT, id, members, args,
              [this, id, assign](pmix_status_t st, wire::InfoArray results) {
                  if (invitations_.count(id) == 0) return;
                  std::optional<std::size_t> cid = context_id_in(results.span());
                  // One id for the whole group must come from the host.
                  if (st == PMIX_SUCCESS && assign && !cid) st = PMIX_ERR_NOT_SUPPORTED;
                  if (st != PMIX_SUCCESS) {
                      end_invitation(id, st);
                      return;
                  }
                  keep_endpoints(results);
                  complete_invitation(id, assign ? cid : std::nullopt);
              });
}

void Groups::complete_remote(const std::string &id, const events::Event &ev) {
    auto it = remote_invitations_.find(id);
    if (it == remote_invitations_.end()) return;
    auto r = std::make_shared<RemoteInvitation>(std::move(it->second));
    remote_invitations_.erase(it);
    std::vector<pmix_proc_t> members;
    if (const auto *m = find_info(ev.info_span(), PMIX_GROUP_MEMBERSHIP))
        members = events::procs_of(m->value);
    const bool assign =
        mca::info_flag(ev.info_span(), PMIX_GROUP_ASSIGN_CONTEXT_ID).value_or(false);
    const bool notify =
        mca::info_flag(ev.info_span(), PMIX_GROUP_NOTIFY_TERMINATION).value_or(false);
    // Invitees that had not answered: too late (the leader's PMIX_TIMEOUT
    // with PMIX_GROUP_OPTIONAL); they get that status when they do.
    std::set<ProcKey> late;
    for (const auto &[k, a] : r->answers) {
        if (a == Answer::pending) late.insert(k);
    }
    if (!late.empty()) failed_[id] = Failed{PMIX_ERR_TIMEOUT, std::move(late)};
    std::vector<pmix_proc_t> local;
    for (const auto &m : members) {
        if (is_local(m)) local.push_back(m);
    }
    log()->info("server: group {}: the leader completes it ({} members, {} here)", id,
                members.size(), local.size());
    auto args = invitation_args(assign, local);
    std::vector<pmix_proc_t> sorted = members;
    std::sort(sorted.begin(), sorted.end(), proc_less);
    const pmix_proc_t leader = proc_of(r->leader);
    call_host(
        PMIX_GROUP_CONSTRUCT, id, sorted, args,
        [this, id, r, members, assign, notify, leader](pmix_status_t st, wire::InfoArray results) {
            std::optional<std::size_t> cid = context_id_in(results.span());
            if (st == PMIX_SUCCESS && assign && !cid) st = PMIX_ERR_NOT_SUPPORTED;
            if (st != PMIX_SUCCESS) {
                log()->warn("server: group {}: the host's group upcall failed: {}", id,
                            PMIx_Error_string(st));
                for (const auto &[k, reply] : r->joined) send_reply(reply, status_body(st));
                return;
            }
            keep_endpoints(results);
            GroupRecord g{id,     members, assign ? cid : std::nullopt,
                          notify, false,   {key_of(leader)}};
            const MemberData data = member_data(g, {}, {});
            const std::map<ProcKey, std::uint64_t> cids;
            for (const auto &[k, reply] : r->joined)
                send_reply(reply, member_reply(g, PMIX_SUCCESS, cids, data, k));
            std::vector<pmix_info_t> extra{procs_info(PMIX_GROUP_MEMBERSHIP, members)};
            if (g.context_id)
                extra.push_back(load_info(PMIX_GROUP_CONTEXT_ID, &*g.context_id, PMIX_SIZE));
            groups_[id] = std::move(g);
            log()->info("server: group {} constructed by invitation from {} ({} members)", id,
                        describe(key_of(leader)), members.size());
            raise_group_event(PMIX_GROUP_CONSTRUCT_COMPLETE, id, &leader, members, extra);
        });
}

void Groups::end_remote(const std::string &id, pmix_status_t status,
                        const std::vector<pmix_proc_t> *only) {
    auto it = remote_invitations_.find(id);
    if (it == remote_invitations_.end()) return;
    RemoteInvitation &r = it->second;
    auto named = [&](const ProcKey &k) {
        return only == nullptr || std::any_of(only->begin(), only->end(),
                                              [&](const auto &p) { return key_of(p) == k; });
    };
    std::set<ProcKey> late;
    for (auto &[k, a] : r.answers) {
        if (!named(k) || (a != Answer::pending && a != Answer::accepted)) continue;
        if (auto j = r.joined.find(k); j != r.joined.end()) {
            send_reply(j->second, status_body(status));
            r.joined.erase(j);
        }
        if (a == Answer::pending) late.insert(k);
        a = Answer::failed;
    }
    if (!late.empty()) {
        auto &f = failed_[id];
        f.status = status;
        f.latecomers.insert(late.begin(), late.end());
    }
    // Kept while one of its invitees still takes part (the others were not named).
    if (std::any_of(r.answers.begin(), r.answers.end(), [](const auto &e) {
            return e.second == Answer::pending || e.second == Answer::accepted;
        }))
        return;
    remote_invitations_.erase(it);
    log()->warn("server: group {} invitation ended at the leader's server: {}", id,
                PMIx_Error_string(status));
}

// ---------------------------------------------------------------------------------------------
// electing an invitation's leader across servers (docs/groups.md, "Invite and join")
//
// The leader's server finds its leader gone with participants served
// elsewhere: it asks its own participants (ask_vote, as on one server) and
// sends its vote (send_vote, as a construct's election does) to the servers
// of the others, with the invitation's order, its flags, who voted there,
// who had accepted and which accepted invitees the old leader had decided
// about. That vote starts the election at every other server, which asks
// its own participants and sends its vote too. Once the votes of every
// process of the order are in, each server applies the same rule to the
// same votes (elect: the volunteer with the lowest group rank, else the
// lowest group rank among those who had accepted, else among those still
// invited): the new leader's server holds the Invitation from then on (the
// accepted invitees the old leader had not decided about are asked of the
// new one), every other server a RemoteInvitation naming the new leader.
// A voter's abort ends the invitation on its server and goes to every
// other participant as its PMIX_GROUP_CONSTRUCT_ABORT event.

std::optional<GroupInvitationAnswer> Groups::local_answer(const std::string &id,
                                                          const ProcKey &k) const {
    if (auto it = invitations_.find(id); it != invitations_.end()) {
        if (auto a = it->second.answers.find(k); a != it->second.answers.end()) return a->second;
    }
    if (auto it = remote_invitations_.find(id); it != remote_invitations_.end()) {
        if (auto a = it->second.answers.find(k); a != it->second.answers.end()) return a->second;
    }
    return std::nullopt;
}

void Groups::invite_election_start(const std::string &id, InviteElection e) {
    InviteElection &st = invite_elections_[id] = std::move(e);
    if (st.deadline)
        st.timer = timer_until(*st.deadline, [this, id] { invite_election_timed_out(id); });
    std::vector<pmix_proc_t> ask;
    for (const auto &p : st.order) {
        const ProcKey k = key_of(p);
        if (!is_local(p)) continue;
        const auto a = local_answer(id, k);
        const ClientRecord *c = clients_.find_client(k);
        if (a && (*a == Answer::pending || *a == Answer::accepted) && c != nullptr && !c->gone())
            ask.push_back(p);
    }
    log()->info("server: group {}: leader {} failed, {} participants here vote (across servers)",
                id, describe(st.failed), ask.size());
    ask_vote(id, st.voters, ask, proc_of(st.failed));
    if (st.voters.empty())
        runtime::ProgressEngine::instance().post([this, id] { invite_local_done(id); });
}

void Groups::invite_vote_answer(const std::string &id, const ProcKey &from, pmix_status_t decision,
                                bool volunteer) {
    auto it = invite_elections_.find(id);
    if (it == invite_elections_.end() || it->second.voters.erase(from) == 0) return;
    InviteElection &e = it->second;
    e.voted.insert(from);
    if (volunteer) e.volunteers.push_back(from);
    if (decision == PMIX_GROUP_CONSTRUCT_ABORT && !e.aborter) e.aborter = from;
    if (e.voters.empty()) invite_local_done(id);
}

void Groups::invite_election_departed(const ProcKey &client) {
    std::vector<std::string> done;
    for (auto &[id, e] : invite_elections_) {
        if (e.local_voted) continue;
        e.voted.erase(client);  // no longer eligible
        if (e.voters.erase(client) != 0 && e.voters.empty()) done.push_back(id);
    }
    for (const auto &id : done) invite_local_done(id);
}

void Groups::invite_local_done(const std::string &id) {
    auto it = invite_elections_.find(id);
    if (it == invite_elections_.end() || it->second.local_voted || !it->second.voters.empty())
        return;
    InviteElection &e = it->second;
    e.local_voted = true;
    if (e.aborter) {
        // Ends here, and everywhere through the aborter's event.
        const pmix_proc_t source = proc_of(*e.aborter);
        // The failed leader, for a server whose participants were not asked
        // yet (no vote reached it: invitation_message tells them first).
        // Read before the election is erased.
        const pmix_proc_t failed = proc_of(e.failed);
        std::vector<pmix_proc_t> to;
        for (const auto &p : e.order) {
            if (key_of(p) != *e.aborter) to.push_back(p);
        }
        invite_election_erase(id);
        invite_elections_ended_.insert(id);
        log()->info("server: group {}: {} aborts after the leader failed", id,
                    describe(key_of(source)));
        if (invitations_.count(id) != 0) {
            invitations_.find(id)->second.completing = true;  // the others are told below
            end_invitation(id, PMIX_GROUP_CONSTRUCT_ABORT, false);
        }
        end_remote(id, PMIX_GROUP_CONSTRUCT_ABORT);
        raise_group_event(PMIX_GROUP_CONSTRUCT_ABORT, id, &source, to,
                          {procs_info(kAbortLeadersKey, {failed})}, true);
        return;
    }
    std::vector<pmix_proc_t> here, remote, eligible, accepted;
    for (const auto &p : e.order) {
        const ProcKey k = key_of(p);
        if (!is_local(p)) {
            remote.push_back(p);
            continue;
        }
        here.push_back(p);
        e.covered.insert(k);
        if (e.voted.count(k) == 0) continue;
        eligible.push_back(p);
        e.eligible.insert(k);
        if (local_answer(id, k) == Answer::accepted) {
            accepted.push_back(p);
            e.accepted.insert(k);
        }
    }
    std::vector<ProcKey> volunteers;
    for (const auto &k : e.volunteers) {
        if (clients_.find_client(k) != nullptr) volunteers.push_back(k);
    }
    std::vector<pmix_proc_t> decided;
    for (const auto &k : e.decided) decided.push_back(proc_of(k));
    const pmix_proc_t failed = proc_of(e.failed);
    const bool yes = true;
    if (!here.empty() && !remote.empty()) {
        // What is left of the invite's PMIX_TIMEOUT (0: none; at least 1 ms
        // when there is one, so that a deadline just reached still counts).
        std::size_t left_ms = 0;
        if (e.deadline) {
            const auto left =
                std::chrono::ceil<std::chrono::milliseconds>(*e.deadline - Clock::now());
            left_ms = static_cast<std::size_t>(std::max<std::int64_t>(left.count(), 1));
        }
        send_vote(id, here.front(), remote, here, volunteers,
                  {procs_info(PMIX_GROUP_MEMBERSHIP, e.order),
                   load_info(kInvTimeoutKey, &left_ms, PMIX_SIZE),
                   load_info(PMIX_EVENT_AFFECTED_PROC, &failed, PMIX_PROC),
                   procs_info(kInvEligibleKey, eligible), procs_info(kInvAcceptedKey, accepted),
                   procs_info(kInvDecidedKey, decided),
                   load_info(PMIX_GROUP_ASSIGN_CONTEXT_ID, &e.assign_context_id, PMIX_BOOL),
                   load_info(PMIX_GROUP_NOTIFY_TERMINATION, &e.notify_termination, PMIX_BOOL),
                   load_info(PMIX_GROUP_OPTIONAL, &e.optional, PMIX_BOOL),
                   load_info(PMIX_EVENT_DO_NOT_CACHE, &yes, PMIX_BOOL)});
    }
    invite_election_check(id);
}

void Groups::invite_vote_in(const std::string &id, const events::Event &ev) {
    auto procs = [&](const char *key) {
        const pmix_info_t *i = find_info(ev.info_span(), key);
        return i == nullptr ? std::vector<pmix_proc_t>{} : events::procs_of(i->value);
    };
    if (invite_elections_ended_.count(id) != 0) return;  // aborted here meanwhile
    auto it = invite_elections_.find(id);
    if (it == invite_elections_.end()) {
        // The first vote this server hears of: its own election begins.
        InviteElection e;
        e.order = procs(PMIX_GROUP_MEMBERSHIP);
        const pmix_info_t *f = find_info(ev.info_span(), PMIX_EVENT_AFFECTED_PROC);
        if (f == nullptr || f->value.type != PMIX_PROC || f->value.data.proc == nullptr) return;
        e.failed = key_of(*f->value.data.proc);
        const bool ours = invitations_.count(id) != 0 || remote_invitations_.count(id) != 0 ||
                          std::any_of(e.order.begin(), e.order.end(),
                                      [&](const pmix_proc_t &p) { return is_local(p); });
        if (!ours) return;
        const auto span = ev.info_span();
        e.assign_context_id = mca::info_flag(span, PMIX_GROUP_ASSIGN_CONTEXT_ID).value_or(false);
        e.notify_termination = mca::info_flag(span, PMIX_GROUP_NOTIFY_TERMINATION).value_or(false);
        e.optional = mca::info_flag(span, PMIX_GROUP_OPTIONAL).value_or(false);
        if (const auto *t = find_info(span, kInvTimeoutKey);
            t != nullptr && t->value.type == PMIX_SIZE && t->value.data.size > 0)
            e.deadline = Clock::now() + std::chrono::milliseconds(t->value.data.size);
        invite_election_start(id, std::move(e));
        it = invite_elections_.find(id);
    }
    InviteElection &e = it->second;
    for (const auto &p : procs(kVotersKey)) {
        if (!is_local(p)) e.covered.insert(key_of(p));
    }
    for (const auto &p : procs(kInvEligibleKey)) {
        if (!is_local(p)) e.eligible.insert(key_of(p));
    }
    for (const auto &p : procs(kInvAcceptedKey)) {
        if (!is_local(p)) e.accepted.insert(key_of(p));
    }
    for (const auto &p : procs(kInvDecidedKey)) e.decided.insert(key_of(p));
    for (const auto &p : procs(kVolunteersKey)) {
        if (!is_local(p)) e.volunteers.push_back(key_of(p));
    }
    log()->info("server: group {}: a vote about the failed leader (told by the host)", id);
    invite_election_check(id);
}

void Groups::invite_election_check(const std::string &id) {
    auto it = invite_elections_.find(id);
    if (it == invite_elections_.end() || !it->second.local_voted) return;
    for (const auto &p : it->second.order) {
        if (it->second.covered.count(key_of(p)) == 0) return;  // that server's vote is not in
    }
    const InviteElection e = std::move(it->second);
    invite_election_erase(id);
    // Every server has the same votes: the same leader everywhere.
    std::vector<ProcKey> volunteers, accepted, invited;
    for (const auto &k : e.volunteers) {
        if (e.eligible.count(k) != 0) volunteers.push_back(k);
    }
    for (const auto &p : e.order) {
        const ProcKey k = key_of(p);
        if (e.eligible.count(k) != 0) (e.accepted.count(k) != 0 ? accepted : invited).push_back(k);
    }
    const auto elected = elect(volunteers, {accepted, invited},
                               [&](const ProcKey &k) { return position(e.order, k); });
    if (!elected) {
        if (auto inv = invitations_.find(id); inv != invitations_.end()) {
            inv->second.completing = true;  // every server ends it itself
            end_invitation(id, PMIX_ERR_LOST_CONNECTION);
        }
        end_remote(id, PMIX_ERR_LOST_CONNECTION);
        return;
    }
    invite_new_leader(id, e, *elected);
}

void Groups::invite_new_leader(const std::string &id, const InviteElection &e,
                               const ProcKey &leader) {
    const pmix_proc_t lp = proc_of(leader);
    std::vector<pmix_proc_t> order = e.order;
    const std::size_t at = position(order, leader);
    if (at < order.size()) std::rotate(order.begin(), order.begin() + at, order.begin() + at + 1);
    // What this server knows: its participants' answers and join calls.
    std::map<ProcKey, Answer> mine;
    std::map<ProcKey, PendingReply> joined;
    std::map<ProcKey, pmix_status_t> undecided;
    std::map<ProcKey, Answer> told;  // the old leader's server: the others' answers it had
    if (auto it = invitations_.find(id); it != invitations_.end()) {
        for (const auto &[k, a] : it->second.answers) (is_local(proc_of(k)) ? mine : told)[k] = a;
        joined = std::move(it->second.joined);
        undecided = std::move(it->second.undecided);
        invitations_.erase(it);
    } else if (auto r = remote_invitations_.find(id); r != remote_invitations_.end()) {
        mine = r->second.answers;
        joined = std::move(r->second.joined);
        remote_invitations_.erase(r);
    }
    std::vector<pmix_proc_t> participants_here;
    for (const auto &p : order) {
        if (is_local(p) && e.eligible.count(key_of(p)) != 0) participants_here.push_back(p);
    }
    log()->info("server: group {}: {} is the new leader (elected across servers)", id,
                describe(leader));
    raise_group_event(PMIX_GROUP_LEADER_SELECTED, id, nullptr, participants_here,
                      {load_info(PMIX_EVENT_AFFECTED_PROC, &lp, PMIX_PROC)});
    if (is_local(lp)) {
        // This server holds the invitation now.
        Invitation inv;
        inv.leader = leader;
        inv.order = order;
        inv.optional = e.optional;
        inv.notify_termination = e.notify_termination;
        inv.assign_context_id = e.assign_context_id;
        if (e.deadline) {
            // What is left of the invite's PMIX_TIMEOUT bounds the new leader's.
            inv.deadline = e.deadline;
            inv.timer = timer_until(*e.deadline, [this, id] { invitation_timed_out(id); });
        }
        for (const auto &p : order) {
            const ProcKey k = key_of(p);
            if (k == leader) continue;
            Answer a = Answer::failed;
            if (is_local(p)) {
                if (auto m = mine.find(k); m != mine.end()) a = m->second;
            } else if (e.eligible.count(k) != 0) {
                auto t = told.find(k);
                a = e.accepted.count(k) != 0 || (t != told.end() && t->second == Answer::accepted)
                        ? Answer::accepted
                        : Answer::pending;
            }
            inv.answers[k] = a;
            // An accepted invitee the old leader had not decided about: the
            // new leader is asked (as on one server).
            if (a == Answer::accepted && e.decided.count(k) == 0 && undecided.count(k) == 0)
                undecided[k] = PMIX_GROUP_INVITE_ACCEPTED;
            if (a == Answer::declined && e.eligible.count(k) != 0 && undecided.count(k) == 0)
                undecided[k] = PMIX_GROUP_INVITE_DECLINED;
        }
        undecided.erase(leader);
        for (auto &[k, reply] : joined) {
            if (k == leader) {
                inv.leader_replies.push_back(reply);
            } else {
                inv.joined[k] = reply;
            }
        }
        Invitation &stored = invitations_[id] = std::move(inv);
        for (const auto &[k, code] : undecided) ask_leader(stored, id, code, k);
        check_invitation(id);
        return;
    }
    // Served elsewhere: this server's invitees answer it from now on.
    RemoteInvitation r;
    r.leader = leader;
    r.joined = std::move(joined);
    bool takes_part = false;
    for (const auto &[k, a] : mine) {
        if (!is_local(proc_of(k))) continue;
        r.answers[k] = a;
        takes_part = takes_part || a == Answer::pending || a == Answer::accepted;
        if (e.eligible.count(k) == 0) continue;
        // An answer given after this server's vote (or an end): to the new leader.
        const pmix_proc_t who = proc_of(k);
        if (a == Answer::accepted && e.accepted.count(k) == 0) {
            send_to_servers(PMIX_GROUP_INVITE_ACCEPTED, id, &who, {lp},
                            {load_info(PMIX_EVENT_AFFECTED_PROC, &who, PMIX_PROC)});
        } else if (a == Answer::declined) {
            send_to_servers(PMIX_GROUP_INVITE_DECLINED, id, &who, {lp},
                            {load_info(PMIX_EVENT_AFFECTED_PROC, &who, PMIX_PROC)});
        } else if (a == Answer::failed) {
            send_to_servers(PMIX_GROUP_INVITE_FAILED, id, nullptr, {lp},
                            {load_info(PMIX_EVENT_AFFECTED_PROC, &who, PMIX_PROC)});
        }
    }
    if (takes_part) remote_invitations_[id] = std::move(r);
}

bool Groups::invite_election_erase(const std::string &id) {
    auto it = invite_elections_.find(id);
    if (it == invite_elections_.end()) return false;
    if (it->second.timer != 0) runtime::ProgressEngine::instance().cancel(it->second.timer);
    invite_elections_.erase(it);
    return true;
}

void Groups::invite_election_timed_out(const std::string &id, const events::Event *told) {
    auto it = invite_elections_.find(id);
    std::vector<pmix_proc_t> elsewhere;
    pmix_proc_t failed{};
    if (it != invite_elections_.end()) {
        it->second.timer = 0;
        failed = proc_of(it->second.failed);
        for (const auto &p : it->second.order) {
            if (!is_local(p)) elsewhere.push_back(p);
        }
        invite_election_erase(id);
    } else if (told == nullptr) {
        return;
    } else if (auto r = remote_invitations_.find(id);
               r != remote_invitations_.end() && !told->affected.empty()) {
        // No vote reached this server (the failed leader's server still
        // waited for its own voters): its participants were not told of the
        // leader's failure yet; every participant is, before its call ends.
        std::vector<pmix_proc_t> ask;
        for (const auto &[k, a] : r->second.answers) {
            if (a == Answer::pending || a == Answer::accepted) ask.push_back(proc_of(k));
        }
        std::set<ProcKey> asked;  // their answers are not awaited
        ask_vote(id, asked, ask, told->affected.front());
    }
    invite_elections_ended_.insert(id);  // a vote still on its way is ignored
    log()->warn(
        "server: group {}: the invite's timeout expired during the election of a new "
        "leader{}",
        id, told != nullptr ? " (told by the host)" : "");
    // No leader to complete it: every participant's call ends with the
    // timeout, as before the election (an invitee that answers later gets it).
    if (auto inv = invitations_.find(id); inv != invitations_.end()) {
        // Held here: before the election (its failed leader's server), or
        // by a new leader elected here while another server's time ran out.
        // Not once the host was called (its answer ends it). The servers of
        // the participants elsewhere are told below (or told this one).
        if (!inv->second.completing) {
            inv->second.completing = true;
            end_invitation(id, PMIX_ERR_TIMEOUT);
        }
    }
    end_remote(id, PMIX_ERR_TIMEOUT);
    if (told != nullptr || elsewhere.empty()) return;
    // The other servers' participants: their servers may not have heard of
    // the election yet (this server's voters did not answer).
    send_to_servers(PMIX_ERR_TIMEOUT, id, &failed, elsewhere,
                    {load_info(kInvExpiredKey, id.c_str(), PMIX_STRING),
                     load_info(PMIX_EVENT_AFFECTED_PROC, &failed, PMIX_PROC)});
}

}  // namespace pmixpp::server
