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
// PMIX_GROUP_LEADER_SELECTED, or abort.
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

// Position of `k` in `order` (its group rank when the group completes).
std::size_t position(const std::vector<pmix_proc_t> &order, const ProcKey &k) {
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (key_of(order[i]) == k) return i;
    }
    return order.size();
}

}  // namespace

void Groups::raise_group_event(pmix_status_t code, const std::string &id, const pmix_proc_t *source,
                               const std::vector<pmix_proc_t> &to, std::vector<pmix_info_t> extra) {
    if (!raise_ || to.empty()) {
        for (auto &i : extra) PMIx_Value_destruct(&i.value);  // owned by this call
        return;
    }
    std::vector<pmix_info_t> info_out;
    info_out.push_back(load_info(PMIX_GROUP_ID, id.c_str(), PMIX_STRING));
    info_out.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, to));
    info_out.insert(info_out.end(), extra.begin(), extra.end());
    auto ev =
        events::Event::make(code, source, PMIX_RANGE_CUSTOM, info_out.data(), info_out.size());
    for (auto &i : info_out) PMIx_Value_destruct(&i.value);
    raise_(std::make_shared<const events::Event>(std::move(ev)));
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
    if (!inv.voters.empty()) return;  // asked of the new leader once there is one
    const pmix_proc_t who = proc_of(about);
    const pmix_proc_t leader = proc_of(inv.leader);
    std::vector<pmix_info_t> info_out;
    info_out.push_back(load_info(PMIX_GROUP_ID, id.c_str(), PMIX_STRING));
    info_out.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, {leader}));
    info_out.push_back(load_info(PMIX_EVENT_AFFECTED_PROC, &who, PMIX_PROC));
    // Accepted / declined come from the invitee, failed from this library.
    auto ev = events::Event::make(code, code == PMIX_GROUP_INVITE_FAILED ? nullptr : &who,
                                  PMIX_RANGE_CUSTOM, info_out.data(), info_out.size());
    for (auto &i : info_out) PMIx_Value_destruct(&i.value);
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
    if (!collectives_.all_local(invitees)) {
        log()->info("server: group {}: invitees served elsewhere are not supported", id);
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
                          {procs_info(PMIX_GROUP_MEMBERSHIP, inv.order)});
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
        inv.timer = runtime::ProgressEngine::instance().after(
            std::chrono::seconds(timeout), [this, id] { invitation_timed_out(id); });
    }
    auto &stored = invitations_.emplace(id, std::move(inv)).first->second;
    log()->info("server: group {}: {} invites {} processes", id, describe(me), invitees.size());
    // The invitation: to each invitee, from the leader, with every process
    // invited so far (cached: an invitee may register for it later).
    raise_group_event(PMIX_GROUP_INVITED, id, &client->proc, invitees,
                      {procs_info(PMIX_GROUP_MEMBERSHIP, stored.order)});
    for (const auto &p : invitees) {
        const ClientRecord *c = clients_.find_client(key_of(p));
        if (c == nullptr || c->gone()) invitee_failed(id, key_of(p));
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
    BodyReader r(frame.body);
    std::string id;
    pmix_status_t code = 0, decision = 0;
    pmix_proc_t about{};
    std::uint8_t volunteer = 0;
    r.str(id);
    r.i32(code);
    r.proc(about);
    r.i32(decision);
    r.u8(volunteer);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed group_decision request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    const ProcKey me = key_of(client->proc);
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
    const pmix_proc_t gone = proc_of(old);
    std::vector<pmix_info_t> info_out;
    info_out.push_back(load_info(PMIX_GROUP_ID, id.c_str(), PMIX_STRING));
    info_out.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, participants));
    info_out.push_back(load_info(PMIX_EVENT_AFFECTED_PROC, &gone, PMIX_PROC));
    auto ev = events::Event::make(PMIX_GROUP_LEADER_FAILED, nullptr, PMIX_RANGE_CUSTOM,
                                  info_out.data(), info_out.size());
    for (auto &i : info_out) PMIx_Value_destruct(&i.value);
    for (const auto &p : participants) inv.voters.insert(key_of(p));
    for (const auto &p : participants) {
        if (!send_ask(key_of(p), id, ev)) inv.voters.erase(key_of(p));  // its departure follows
    }
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
    auto by_rank = [&](const ProcKey &a, const ProcKey &b) {
        return position(inv.order, a) < position(inv.order, b);
    };
    std::vector<ProcKey> candidates;
    for (const auto &k : inv.volunteers) {
        if (live(k)) candidates.push_back(k);
    }
    if (candidates.empty()) {
        // No volunteer: the lowest group rank among those who accepted, else
        // among those still invited.
        for (Answer want : {Answer::accepted, Answer::pending}) {
            for (const auto &[k, a] : inv.answers) {
                if (a == want) candidates.push_back(k);
            }
            if (!candidates.empty()) break;
        }
    }
    if (candidates.empty()) {
        end_invitation(id, PMIX_ERR_LOST_CONNECTION);
        return;
    }
    const ProcKey leader = *std::min_element(candidates.begin(), candidates.end(), by_rank);
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
    if (inv.completing || !inv.undecided.empty() || !inv.voters.empty()) return;
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
                  std::optional<std::size_t> cid;
                  if (const auto *c = find_info(results.span(), PMIX_GROUP_CONTEXT_ID)) {
                      if (auto v = wire::as_uint(c->value)) cid = static_cast<std::size_t>(*v);
                  }
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
    std::vector<pmix_proc_t> invited;
    for (const auto &[k, a] : inv.answers) {
        if (a == Answer::pending) late.insert(k);
        if (a == Answer::pending || a == Answer::accepted) invited.push_back(proc_of(k));
    }
    if (!late.empty()) failed_[id] = Failed{status, std::move(late)};
    log()->warn("server: group {} invitation ended: {}", id, PMIx_Error_string(status));
    if (status == PMIX_GROUP_CONSTRUCT_ABORT && announce) {
        const pmix_proc_t leader = proc_of(inv.leader);
        raise_group_event(PMIX_GROUP_CONSTRUCT_ABORT, id, &leader, invited);
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
    for (auto &[k, a] : inv.answers) {
        if (a != Answer::pending) continue;
        a = Answer::failed;
        late.insert(k);
    }
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

}  // namespace pmixpp::server
