// GroupBootstrap (group_bootstrap.hpp): the bootstrap method of
// PMIx_Group_construct. docs/groups.md ("Bootstrap method") says what a
// caller sees.
#include "server/group_bootstrap.hpp"

#include <algorithm>
#include <chrono>

#include "event/event.hpp"
#include "mca/logging.hpp"
#include "runtime/progress.hpp"
#include "server/group_util.hpp"
#include "server/groups.hpp"
#include "server/requests.hpp"
#include "server/upcall_results.hpp"

namespace pmixpp::server {

using namespace group_util;

namespace {

auto log() {
    return mca::framework_logger("server");
}

// PMIX_GROUP_BOOTSTRAP of the standard (v6, size_t), not in the 4.2 headers.
constexpr const char *kBootstrap = "pmix.grp.btstrp";

// Across servers (docs/groups.md, "Bootstrap across servers"): the messages
// between servers are events through the host's notify_event, marked by
// kBootKey (the group id), consumed by the receiving server:
//   PMIX_GROUP_LEADER_SELECTED, source: a leader   its call: kBootKey,
//       kBootstrap (size: the leaders' count), kBootProcs (its procs and
//       PMIX_GROUP_ADD_MEMBERS), PMIX_TIMEOUT as kBootTimeout (size, seconds;
//       0: none), and its PMIX_GROUP_ASSIGN_CONTEXT_ID, _OPTIONAL,
//       _FT_COLLECTIVE, _NOTIFY_TERMINATION (bools)
//   PMIX_GROUP_MEMBER_FAILED   a named participant served by the sender
//       ended (PMIX_EVENT_AFFECTED_PROC); with kBootDecide the declared
//       leaders (PMIX_GROUP_LEADER) decide about it, wherever served
//   PMIX_GROUP_MEMBERSHIP_UPDATE, source: a declared leader   it goes on
//       without the participant (PMIX_EVENT_AFFECTED_PROC)
//   PMIX_GROUP_CONSTRUCT_ABORT, source: a declared leader   it aborted (the
//       receiver raises the event to its participants, then ends)
//   any other code             the construct ended at the sender with that
//       status (PMIX_ERR_TIMEOUT, PMIX_ERR_LOST_CONNECTION, ...)
constexpr const char *kBootKey = "pmixpp.grp.boot";
constexpr const char *kBootProcs = "pmixpp.grp.boot.procs";
constexpr const char *kBootTimeout = "pmixpp.grp.boot.timeout";
constexpr const char *kBootDecide = "pmixpp.grp.boot.decide";  // bool

bool is_procs(const pmix_value_t &v) {
    return v.type == PMIX_PROC || (v.type == PMIX_DATA_ARRAY && v.data.darray != nullptr &&
                                   (v.data.darray->type == PMIX_PROC || v.data.darray->size == 0));
}

}  // namespace

void GroupBootstrap::refuse(const PendingReply &reply, pmix_status_t status) {
    send_reply(reply, status_body(status));
}

std::vector<pmix_proc_t> GroupBootstrap::expand(const std::vector<pmix_proc_t> &procs) const {
    return groups_.expand(procs);
}

bool GroupBootstrap::handle(const GroupMembersRequest &request, const PendingReply &reply,
                            const ProcKey &me) {
    const auto info = request.info.span();
    const pmix_info_t *count = find_info(info, kBootstrap);
    // The standard: an "add member" calls construct with no procs.
    const bool add_member = request.procs.empty();
    if (count == nullptr && !add_member) return false;
    const std::string &id = request.id;
    // The construct ended across servers before this caller came: its
    // status, once; a caller that had its answer starts a new construct.
    if (auto e = ended_.find(id); e != ended_.end() && boots_.count(id) == 0) {
        if (e->second.answered.count(me) == 0) {
            e->second.answered.insert(me);
            log()->info("server: group {}: {} came after the bootstrap ended", id, describe(me));
            refuse(reply, e->second.status);
            return true;
        }
        ended_.erase(e);
    }
    // A construct this server thought complete elsewhere names the caller:
    // it was not registered here yet when every leader was known.
    if (auto e = elsewhere_.find(id); e != elsewhere_.end() && boots_.count(id) == 0) {
        if (e->second.named.count(me) != 0) {
            log()->info("server: group {}: {} is named and served here after all", id,
                        describe(me));
            if (!bring_back(id)) {
                boots_[id].adds[me] = reply;  // answered with the others
                end(id, PMIX_ERR_TIMEOUT, true);
                return true;
            }
            // A named process served here that ended meanwhile never calls.
            lost_while_aside(id, me);
            if (boots_.count(id) == 0) {  // the construct ended by it
                const auto ended = ended_.find(id);
                refuse(reply,
                       ended != ended_.end() ? ended->second.status : PMIX_ERR_LOST_CONNECTION);
                return true;
            }
        } else {
            elsewhere_.erase(e);
        }
    }
    std::uint64_t leaders = 0;
    if (count != nullptr) {
        const auto n = wire::as_uint(count->value);
        if (!n || *n == 0) {
            log()->warn("server: group {}: PMIX_GROUP_BOOTSTRAP of {} is no number of leaders", id,
                        describe(me));
            refuse(reply, PMIX_ERR_BAD_PARAM);
            return true;
        }
        leaders = *n;
    }
    // PMIX_GROUP_LEADER: a bootstrap leader that decides about failures;
    // an add member leads nothing (docs/groups.md).
    const bool declares = mca::info_flag(info, PMIX_GROUP_LEADER).value_or(false);
    if (declares && add_member) {
        log()->warn("server: group {}: add member {} passes PMIX_GROUP_LEADER", id, describe(me));
        refuse(reply, PMIX_ERR_BAD_PARAM);
        return true;
    }
    const bool optional = mca::info_flag(info, PMIX_GROUP_OPTIONAL).value_or(false);
    const bool ft = mca::info_flag(info, PMIX_GROUP_FT_COLLECTIVE).value_or(false);
    auto it = boots_.find(id);
    const bool tolerant =
        optional || ft || (it != boots_.end() && (it->second.optional || it->second.ft_collective));
    // Leaders that decide: an ended participant goes to them (after this call is in).
    const bool deciders = declares || (it != boots_.end() && it->second.any_declared());
    std::vector<ProcKey> ended;  // named processes that ended already (tolerant: left out)
    if (it == boots_.end()) {
        if (groups_.pending_.count(id) != 0 || groups_.check_new_id(id) != PMIX_SUCCESS) {
            log()->warn("server: bootstrap group id '{}' of {} is empty, too long or in use", id,
                        describe(me));
            refuse(reply, PMIX_ERR_BAD_PARAM);
            return true;
        }
    } else if (it->second.leaders.count(me) != 0 || it->second.adds.count(me) != 0 ||
               it->second.completing) {
        refuse(reply, PMIX_ERR_BAD_PARAM);  // a second call, or one after the group formed
        return true;
    }
    std::vector<pmix_proc_t> named;
    if (!add_member) {
        // A leader: its own id in procs (more processes there are members too).
        named = expand(request.procs);
        if (std::none_of(named.begin(), named.end(),
                         [&](const pmix_proc_t &p) { return key_of(p) == me; })) {
            log()->warn("server: group {}: bootstrap leader {} is not in its procs", id,
                        describe(me));
            refuse(reply, PMIX_ERR_BAD_PARAM);
            return true;
        }
        if (const auto *add = find_info(info, PMIX_GROUP_ADD_MEMBERS)) {
            if (!is_procs(add->value)) {
                refuse(reply, PMIX_ERR_BAD_PARAM);
                return true;
            }
            const auto more = expand(events::procs_of(add->value));
            named.insert(named.end(), more.begin(), more.end());
        }
        // Add members may have come first (no count known yet).
        if (it != boots_.end() && it->second.leaders_expected != 0 &&
            (it->second.leaders_expected != leaders || it->second.leader_count() >= leaders)) {
            log()->warn("server: group {}: leader {} says {} leaders, the construct has {} of {}",
                        id, describe(me), leaders, it->second.leader_count(),
                        it->second.leaders_expected);
            refuse(reply, PMIX_ERR_BAD_PARAM);
            return true;
        }
        if (!groups_.collectives_.all_local(named) && !capable()) {
            log()->info(
                "server: group {}: a bootstrap across servers needs the host's "
                "notify_event and group upcalls",
                id);
            refuse(reply, PMIX_ERR_NOT_SUPPORTED);
            if (it != boots_.end()) fail(id, PMIX_ERR_NOT_SUPPORTED);
            return true;
        }
        // A named process that ended already will never call.
        for (const auto &p : named) {
            const ClientRecord *c = groups_.clients_.find_client(key_of(p));
            if (c != nullptr && c->gone() && (tolerant || deciders)) {
                ended.push_back(key_of(p));
            } else if (c != nullptr && c->gone()) {
                log()->warn("server: group {}: {} names {}, which ended", id, describe(me),
                            describe(key_of(p)));
                refuse(reply, PMIX_ERR_LOST_CONNECTION);
                if (it != boots_.end()) {
                    end(id, PMIX_ERR_LOST_CONNECTION, true);
                } else if (capable()) {
                    // The other servers' participants must not wait for it.
                    Boot mine;
                    for (const auto &q : named) mine.named.insert(key_of(q));
                    if (!others(mine).empty()) ended_[id] = Ended{PMIX_ERR_LOST_CONNECTION, {me}};
                    tell_others(PMIX_ERR_LOST_CONNECTION, id, mine, nullptr);
                }
                return true;
            }
        }
    }
    Boot &b = boots_[id];
    b.optional = b.optional || optional;
    b.ft_collective = b.ft_collective || ft;
    if (add_member) {
        b.adds[me] = reply;
    } else {
        b.leaders_expected = leaders;
        b.leaders[me] = reply;
        if (declares) b.declared.insert(me);
        for (const auto &p : named) b.named.insert(key_of(p));
        b.across = b.across || !groups_.collectives_.all_local(named);
    }
    std::size_t cid = SIZE_MAX;  // none
    if (const auto *i = find_info(info, PMIX_GROUP_LOCAL_CID)) {
        if (auto v = wire::as_uint(i->value)) cid = static_cast<std::size_t>(*v);
    }
    b.local_cids[me] = cid;
    b.assign_context_id =
        b.assign_context_id || mca::info_flag(info, PMIX_GROUP_ASSIGN_CONTEXT_ID).value_or(false);
    b.notify_termination =
        b.notify_termination || mca::info_flag(info, PMIX_GROUP_NOTIFY_TERMINATION).value_or(false);
    arm_timer(id, b, request.timeout);
    log()->info("server: group {}: bootstrap {} {} ({} of {} leaders)", id,
                add_member ? "add member" : "leader", describe(me), b.leader_count(),
                b.leaders_expected);
    if (!add_member) {
        // Every other server learns this leader's part (across servers).
        const pmix_proc_t lp = proc_of(me);
        const std::size_t n = leaders;
        const std::size_t t = request.timeout;
        tell_others(PMIX_GROUP_LEADER_SELECTED, id, b, &lp,
                    {load_info(kBootstrap, &n, PMIX_SIZE), procs_info(kBootProcs, named),
                     load_info(kBootTimeout, &t, PMIX_SIZE),
                     load_info(PMIX_GROUP_ASSIGN_CONTEXT_ID, &b.assign_context_id, PMIX_BOOL),
                     load_info(PMIX_GROUP_OPTIONAL, &optional, PMIX_BOOL),
                     load_info(PMIX_GROUP_FT_COLLECTIVE, &ft, PMIX_BOOL),
                     load_info(PMIX_GROUP_NOTIFY_TERMINATION, &b.notify_termination, PMIX_BOOL),
                     load_info(PMIX_GROUP_LEADER, &declares, PMIX_BOOL)});
    }
    // Named processes that ended already (the construct tolerates it, or
    // its leaders decide): left out here, and the other servers are told.
    for (const auto &k : ended) participant_lost(id, k, true);
    check(id);
    return true;
}

void GroupBootstrap::arm_timer(const std::string &id, Boot &b, std::uint32_t seconds) {
    if (seconds == 0) return;
    // The earliest deadline of any caller's PMIX_TIMEOUT.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    if (b.timer != 0 && deadline >= b.deadline) return;
    if (b.completing && (b.optional || b.ft_collective)) return;  // the host bounds it
    auto &engine = runtime::ProgressEngine::instance();
    if (b.timer != 0) engine.cancel(b.timer);
    b.deadline = deadline;
    b.timeout_s = seconds;
    b.timer = engine.after(std::chrono::seconds(seconds), [this, id] {
        auto t = boots_.find(id);
        if (t == boots_.end()) return;
        t->second.timer = 0;
        if (complete_without_late(id)) return;
        log()->warn("server: bootstrap group {} timed out", id);
        end(id, PMIX_ERR_TIMEOUT, true);
    });
}

void GroupBootstrap::check(const std::string &id) {
    auto it = boots_.find(id);
    if (it == boots_.end()) return;
    Boot &b = it->second;
    if (b.completing || b.leaders_expected == 0 || b.leader_count() < b.leaders_expected) return;
    if (!b.undecided.empty()) return;  // the leaders decide about a failed participant
    // Across servers each server waits for its own named processes only.
    for (const auto &k : b.named) {
        if (b.awaited(k) && groups_.is_local(proc_of(k))) return;
    }
    // On one server the timer ends here; across servers call_host_across decides.
    if (b.timer != 0 && !b.across) {
        runtime::ProgressEngine::instance().cancel(b.timer);
        b.timer = 0;
    }
    // Add members no leader named are not members: they are told so.
    for (auto a = b.adds.begin(); a != b.adds.end();) {
        if (b.named.count(a->first) != 0) {
            ++a;
            continue;
        }
        log()->warn("server: group {}: {} called as an add member but no leader named it", id,
                    describe(a->first));
        refuse(a->second, PMIX_ERR_BAD_PARAM);
        b.local_cids.erase(a->first);
        a = b.adds.erase(a);
    }
    if (b.across) {
        call_host_across(id);
        return;
    }
    if (!b.assign_context_id) {
        complete(id, PMIX_SUCCESS, std::nullopt);
        return;
    }
    if (groups_.host_->group == nullptr) {
        complete(id, PMIX_SUCCESS, groups_.next_context_id_++);
        return;
    }
    // The context id from the host, as for a collective construct.
    b.completing = true;
    std::vector<pmix_proc_t> members;
    for (const auto &k : b.named) members.push_back(proc_of(k));
    auto args = std::make_shared<HostArgs>();
    const bool yes = true;
    args->load(PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    const std::size_t nleaders = b.leaders_expected;
    args->load(kBootstrap, &nleaders, PMIX_SIZE);
    groups_.call_host(PMIX_GROUP_CONSTRUCT, id, members, args,
                      [this, id](pmix_status_t st, wire::InfoArray results) {
                          std::optional<std::size_t> cid = context_id_in(results.span());
                          if (!cid) cid = groups_.next_context_id_++;
                          complete(id, st, cid);
                      });
}

void GroupBootstrap::complete(const std::string &id, pmix_status_t status,
                              std::optional<std::size_t> cid) {
    auto it = boots_.find(id);
    if (it == boots_.end()) return;
    Boot b = std::move(it->second);
    boots_.erase(it);
    if (b.timer != 0) runtime::ProgressEngine::instance().cancel(b.timer);
    if (status == PMIX_SUCCESS && b.lost) status = PMIX_ERR_LOST_CONNECTION;
    if (status != PMIX_SUCCESS) {
        log()->warn("server: bootstrap group {} failed: {}", id, PMIx_Error_string(status));
        for (const auto &[k, reply] : b.leaders) refuse(reply, status);
        for (const auto &[k, reply] : b.adds) refuse(reply, status);
        return;
    }
    // Everything named, in (nspace, rank) order: the callers' arrays say
    // nothing about the order (the standard: "not significant").
    std::vector<pmix_proc_t> members;
    for (const auto &k : b.named) {
        if (b.gone.count(k) == 0) members.push_back(proc_of(k));
    }
    // The standard: PARTIAL_SUCCESS when members did not take part.
    const pmix_status_t final_status = b.gone.empty() ? PMIX_SUCCESS : PMIX_ERR_PARTIAL_SUCCESS;
    // The leaders that declared PMIX_GROUP_LEADER: their results say so.
    std::set<ProcKey> leads;
    for (const auto &k : b.declared) {
        if (b.gone.count(k) == 0) leads.insert(k);
    }
    for (const auto &k : b.remote_declared) {
        if (b.gone.count(k) == 0) leads.insert(k);
    }
    GroupRecord g{id, members, cid, b.notify_termination, b.ft_collective, std::move(leads)};
    std::map<ProcKey, std::uint64_t> cids;
    for (const auto &[k, c] : b.local_cids) {
        if (c != SIZE_MAX) cids[k] = c;
    }
    const auto data = groups_.member_data(g, {}, {});
    for (const auto &[k, reply] : b.leaders) {
        if (b.gone.count(k) == 0)
            send_reply(reply, Groups::member_reply(g, final_status, cids, data, k));
    }
    for (const auto &[k, reply] : b.adds) {
        if (b.gone.count(k) == 0)
            send_reply(reply, Groups::member_reply(g, final_status, cids, data, k));
    }
    groups_.groups_[id] = std::move(g);
    log()->info("server: group {} constructed by bootstrap ({} members)", id, members.size());
    // Formed smaller than named: PMIX_GROUP_MEMBERSHIP_UPDATE follows (as
    // for a collective construct).
    if (!b.gone.empty())
        groups_.raise_group_event(PMIX_GROUP_MEMBERSHIP_UPDATE, id, nullptr, members,
                                  {procs_info(PMIX_GROUP_MEMBERSHIP, members)});
}

bool GroupBootstrap::complete_without_late(const std::string &id) {
    auto it = boots_.find(id);
    if (it == boots_.end()) return false;
    Boot &b = it->second;
    // Without every leader the members are not known: the construct fails.
    if (!b.optional || b.completing || b.leaders_expected == 0 ||
        b.leader_count() < b.leaders_expected)
        return false;
    // This server's own late processes (each server leaves out its own).
    std::set<ProcKey> late;
    for (const auto &k : b.named) {
        if (b.awaited(k) && groups_.is_local(proc_of(k))) late.insert(k);
    }
    log()->info("server: bootstrap group {}: {} optional members late; it forms without them", id,
                late.size());
    b.gone.insert(late.begin(), late.end());
    if (!late.empty()) groups_.failed_[id] = Groups::Failed{PMIX_ERR_TIMEOUT, std::move(late)};
    check(id);
    return true;
}

void GroupBootstrap::fail(const std::string &id, pmix_status_t status) {
    auto it = boots_.find(id);
    if (it == boots_.end()) return;
    Boot b = std::move(it->second);
    boots_.erase(it);
    if (b.timer != 0) runtime::ProgressEngine::instance().cancel(b.timer);
    log()->warn("server: bootstrap group {} failed: {}", id, PMIx_Error_string(status));
    for (const auto &[k, reply] : b.leaders) refuse(reply, status);
    for (const auto &[k, reply] : b.adds) refuse(reply, status);
    // Named processes that have not called get the status when they do, once.
    std::set<ProcKey> late;
    for (const auto &k : b.named) {
        const ClientRecord *c = groups_.clients_.find_client(k);
        if (c != nullptr && !c->gone() && b.leaders.count(k) == 0 && b.adds.count(k) == 0)
            late.insert(k);
    }
    if (!late.empty()) groups_.failed_[id] = Groups::Failed{status, std::move(late)};
}

bool GroupBootstrap::bring_back(const std::string &id) {
    auto e = elsewhere_.find(id);
    Boot &back = boots_[id] = std::move(e->second);
    elsewhere_.erase(e);
    if (back.timeout_s == 0) return true;
    // Its PMIX_TIMEOUT still counts: what is left of it, or its end.
    const auto now = std::chrono::steady_clock::now();
    if (now >= back.deadline) return false;
    const auto left = std::chrono::ceil<std::chrono::seconds>(back.deadline - now).count();
    back.timer = 0;
    arm_timer(id, back, static_cast<std::uint32_t>(std::max<long long>(left, 1)));
    return true;
}

void GroupBootstrap::lost_while_aside(const std::string &id, const ProcKey &caller) {
    auto it = boots_.find(id);
    if (it == boots_.end()) return;
    std::vector<ProcKey> ended;
    for (const auto &k : it->second.named) {
        const ClientRecord *c = groups_.clients_.find_client(k);
        if (k != caller && c != nullptr && c->gone() && it->second.awaited(k)) ended.push_back(k);
    }
    for (const auto &k : ended) {
        log()->info("server: group {}: {} is named and ended here", id, describe(k));
        participant_lost(id, k, true);  // left out (or decided), or the construct ends
    }
}

void GroupBootstrap::client_departed(const ProcKey &client) {
    std::vector<std::string> ids, aside;
    for (const auto &[id, b] : boots_) ids.push_back(id);
    // A construct set aside as complete elsewhere that names it: it was
    // served here after all, and the other servers must hear of its end.
    for (const auto &[id, b] : elsewhere_) {
        if (b.named.count(client) != 0 && boots_.count(id) == 0) aside.push_back(id);
    }
    for (const auto &id : aside) {
        log()->info("server: group {}: named participant {} ended here", id, describe(client));
        if (!bring_back(id)) {
            end(id, PMIX_ERR_TIMEOUT, true);
            continue;
        }
        lost_while_aside(id, ProcKey{});
    }
    for (const auto &id : ids) {
        auto it = boots_.find(id);
        if (it == boots_.end()) continue;
        Boot &b = it->second;
        const bool named = b.named.count(client) != 0 || b.leaders.count(client) != 0;
        if (!named) {
            // An add member nobody named yet: forgotten.
            b.adds.erase(client);
            b.local_cids.erase(client);
            if (b.leaders.empty() && b.adds.empty() && b.remote_leaders.empty())
                fail(id, PMIX_ERR_LOST_CONNECTION);
            continue;
        }
        log()->info("server: group {}: bootstrap participant {} ended", id, describe(client));
        participant_lost(id, client, true);
    }
}

void GroupBootstrap::participant_lost(const std::string &id, const ProcKey &who, bool tell,
                                      bool decide) {
    auto it = boots_.find(id);
    if (it == boots_.end()) return;
    Boot &b = it->second;
    if (b.gone.count(who) != 0) return;  // left out already
    const pmix_proc_t p = proc_of(who);
    const bool was_declared = (b.declared.erase(who) + b.remote_declared.erase(who)) != 0;
    if (b.any_declared() || was_declared) {
        // Its decisions are no longer awaited: an entry it alone held is
        // decided ("go on") by the others.
        for (auto &[k, asked] : b.undecided) asked.erase(who);
        std::erase_if(b.undecided, [](const auto &e) { return e.second.empty(); });
    }
    // The leaders that declared PMIX_GROUP_LEADER decide, wherever they are
    // served: the participant's server (before it handed its part to the
    // host) asks its own and tells the others to ask theirs.
    if (tell) decide = !b.completing;
    if (decide && !b.optional && !b.ft_collective && b.any_declared()) {
        if (ask_declared(id, b, who)) {
            if (tell) {
                const bool yes = true;
                tell_others(PMIX_GROUP_MEMBER_FAILED, id, b, nullptr,
                            {load_info(PMIX_EVENT_AFFECTED_PROC, &p, PMIX_PROC),
                             load_info(kBootDecide, &yes, PMIX_BOOL)});
            }
            if (!b.completing) check(id);  // a decision already in elsewhere
            return;
        }
    }
    if (was_declared && !b.any_declared() && !b.optional && !b.ft_collective) {
        // The last deciding leader ended: no election in a bootstrap; the
        // construct fails for all (docs/groups.md).
        log()->warn("server: group {}: the last deciding leader {} ended", id, describe(who));
        if (b.completing && !b.across) {
            b.lost = true;  // the host's context id is awaited: it fails then
        } else {
            // Across servers also once this server's part is with the host:
            // the others end too (and give the host theirs with the
            // status); the host's late answer here finds nothing.
            end(id, PMIX_ERR_LOST_CONNECTION, tell);
        }
        return;
    }
    if (b.optional || b.ft_collective) {
        // Left out: the construct goes on with the others (on every server).
        b.gone.insert(who);
        if (tell)
            tell_others(PMIX_GROUP_MEMBER_FAILED, id, b, nullptr,
                        {load_info(PMIX_EVENT_AFFECTED_PROC, &p, PMIX_PROC)});
        if (!b.completing) check(id);
    } else if (b.completing) {
        b.lost = true;  // the host's answer is awaited: it fails then
        if (tell)
            tell_others(PMIX_GROUP_MEMBER_FAILED, id, b, nullptr,
                        {load_info(PMIX_EVENT_AFFECTED_PROC, &p, PMIX_PROC)});
    } else {
        end(id, PMIX_ERR_LOST_CONNECTION, tell);
    }
}

bool GroupBootstrap::ask_declared(const std::string &id, Boot &b, const ProcKey &who) {
    const pmix_proc_t gone = proc_of(who);
    std::set<ProcKey> asked;
    for (const auto &l : b.declared) {
        if (l == who) continue;
        const auto ev =
            group_event(PMIX_GROUP_MEMBER_FAILED, id, nullptr, {proc_of(l)}, {affected(gone)});
        // A leader that cannot be asked is ending: its departure comes next.
        if (groups_.send_ask(l, id, ev)) asked.insert(l);
    }
    // The leaders served elsewhere: their servers ask them and send their
    // decisions.
    for (const auto &l : b.remote_declared) {
        if (l != who) asked.insert(l);
    }
    if (asked.empty()) return false;
    b.gone.insert(who);  // left out unless a leader aborts
    log()->info("server: group {}: bootstrap participant {} ended; {} leaders decide", id,
                describe(who), asked.size());
    // Leaders elsewhere whose "go on" reached this server before the
    // question did: decided already.
    if (auto early = b.decided_early.find(who); early != b.decided_early.end()) {
        for (const auto &l : early->second) {
            if (asked.erase(l) != 0)
                log()->info("server: group {}: leader {} had gone on without {} already", id,
                            describe(l), describe(who));
        }
        b.decided_early.erase(early);
    }
    if (!asked.empty()) b.undecided[who] = std::move(asked);
    return true;
}

bool GroupBootstrap::decision(wire::Channel &ch, wire::Frame &frame, ClientRecord *client) {
    const auto d = group_util::read_decision(frame);
    if (!d || client == nullptr) return false;  // Groups closes a malformed request
    const auto &[id, code, about, decision, volunteer] = *d;
    auto it = boots_.find(id);
    if (it == boots_.end() || it->second.undecided.empty()) return false;  // Groups answers
    send_reply(PendingReply::to(ch, frame), status_body(PMIX_SUCCESS));
    Boot &b = it->second;
    const ProcKey from = key_of(client->proc);
    if (code != PMIX_GROUP_MEMBER_FAILED) return true;  // not asked
    leader_decided(id, b, from, key_of(about), decision == PMIX_GROUP_CONSTRUCT_ABORT, true);
    return true;
}

void GroupBootstrap::raise_abort(const std::string &id, const Boot &b, const pmix_proc_t &leader) {
    // The other participants here (called or named) are told by the event,
    // from the leader.
    std::set<ProcKey> others_here = b.named;
    for (const auto &[k, reply] : b.adds) others_here.insert(k);
    for (const auto &[k, reply] : b.leaders) others_here.insert(k);
    std::vector<pmix_proc_t> to;
    for (const auto &k : others_here) {
        const ClientRecord *c = groups_.clients_.find_client(k);
        if (k != key_of(leader) && b.gone.count(k) == 0 && c != nullptr && !c->gone())
            to.push_back(proc_of(k));
    }
    groups_.raise_group_event(PMIX_GROUP_CONSTRUCT_ABORT, id, &leader, to);
}

void GroupBootstrap::leader_decided(const std::string &id, Boot &b, const ProcKey &leader,
                                    const ProcKey &about, bool abort, bool here) {
    auto u = b.undecided.find(about);
    if (u == b.undecided.end() && !here && !abort && b.gone.count(about) == 0) {
        // Not asked here yet: the participant's server's question is still
        // on its way (another link); kept until it comes.
        log()->info("server: group {}: leader {} goes on without {} before this server was asked",
                    id, describe(leader), describe(about));
        b.decided_early[about].insert(leader);
        return;
    }
    if (u == b.undecided.end() || u->second.erase(leader) == 0) return;  // answered already
    const pmix_proc_t source = proc_of(leader);
    if (abort) {
        log()->info("server: group {}: leader {} aborts the bootstrap", id, describe(leader));
        raise_abort(id, b, source);
        // The other servers' participants: by their servers (the message
        // carries the leader).
        end(id, PMIX_GROUP_CONSTRUCT_ABORT, here, &source);
        return;
    }
    if (here) {
        // The other servers await this leader's decision too.
        const pmix_proc_t gone = proc_of(about);
        tell_others(PMIX_GROUP_MEMBERSHIP_UPDATE, id, b, &source,
                    {load_info(PMIX_EVENT_AFFECTED_PROC, &gone, PMIX_PROC)});
    }
    if (u->second.empty()) b.undecided.erase(u);
    if (!b.completing) check(id);
}

// ---------------------------------------------------------------------------------------------
// across servers

bool GroupBootstrap::capable() const {
    return groups_.host_->notify_event != nullptr && groups_.host_->group != nullptr &&
           static_cast<bool>(groups_.raise_out_);
}

std::vector<pmix_proc_t> GroupBootstrap::others(const Boot &b) const {
    std::vector<pmix_proc_t> out;
    std::set<ProcKey> seen;
    auto add = [&](const ProcKey &k) {
        if (groups_.clients_.find_client(k) == nullptr && seen.insert(k).second)
            out.push_back(proc_of(k));
    };
    for (const auto &[ns, j] : groups_.clients_.jobs()) {
        for (pmix_rank_t r = 0; r < j.job_size; ++r) add({ns, r});
    }
    for (const auto &k : b.named) add(k);
    for (const auto &k : b.remote_leaders) add(k);
    return out;
}

void GroupBootstrap::tell_others(pmix_status_t code, const std::string &id, const Boot &b,
                                 const pmix_proc_t *source, std::vector<pmix_info_t> extra) {
    std::vector<pmix_proc_t> to;
    if (capable()) to = others(b);
    if (to.empty()) {
        for (auto &i : extra) PMIx_Value_destruct(&i.value);  // owned by this call
        return;
    }
    extra.push_back(load_info(kBootKey, id.c_str(), PMIX_STRING));
    groups_.send_to_servers(code, id, source, to, std::move(extra));
}

void GroupBootstrap::call_host_across(const std::string &id) {
    auto it = boots_.find(id);
    if (it == boots_.end()) return;
    Boot &b = it->second;
    // The timer keeps running: this server's callers are bounded by their
    // PMIX_TIMEOUT even while the host gathers the other servers' parts
    // (with PMIX_GROUP_OPTIONAL / _FT_COLLECTIVE the host bounds it).
    if (b.timer != 0 && (b.optional || b.ft_collective)) {
        runtime::ProgressEngine::instance().cancel(b.timer);
        b.timer = 0;
    }
    std::vector<pmix_proc_t> members, local, view;
    bool any_local = false;
    for (const auto &k : b.named) {
        const pmix_proc_t p = proc_of(k);
        members.push_back(p);
        const bool here = groups_.is_local(p);
        any_local = any_local || here;
        if (b.gone.count(k) != 0) continue;
        view.push_back(p);
        if (here) local.push_back(p);
    }
    if (!any_local) {
        // No member is served here: the other servers form the group (kept
        // in case a named process registers here later).
        log()->info("server: group {}: bootstrap complete elsewhere (no member here)", id);
        if (b.timer != 0) runtime::ProgressEngine::instance().cancel(b.timer);
        b.timer = 0;
        elsewhere_[id] = std::move(b);
        boots_.erase(it);
        return;
    }
    b.completing = true;
    // As a collective construct across servers: this server's members'
    // data, the count, the timeout and, with left-out members, its view.
    auto args = groups_.invitation_args(b.assign_context_id, local);
    const std::size_t n = b.leaders_expected;
    args->load(kBootstrap, &n, PMIX_SIZE);
    if (b.timeout_s > 0) args->add_int(PMIX_TIMEOUT, static_cast<int>(b.timeout_s));
    const pmix_status_t ok = PMIX_SUCCESS;
    args->load(PMIX_LOCAL_COLLECTIVE_STATUS, &ok, PMIX_STATUS);
    if (!b.gone.empty()) args->info.push_back(procs_info(PMIX_GROUP_MEMBERSHIP, view));
    log()->info("server: group {}: bootstrap across servers, {} members, {} here", id,
                members.size(), local.size());
    const bool assign = b.assign_context_id;
    groups_.call_host(
        PMIX_GROUP_CONSTRUCT, id, members, args,
        [this, id, assign](pmix_status_t st, wire::InfoArray results) {
            auto t = boots_.find(id);
            if (t == boots_.end() || !t->second.completing) return;  // ended
            std::optional<std::size_t> cid = context_id_in(results.span());
            // One id for the whole group must come from the host.
            if (st == PMIX_SUCCESS && assign && !cid) st = PMIX_ERR_NOT_SUPPORTED;
            if (st == PMIX_SUCCESS) {
                groups_.keep_endpoints(results);
                // The servers' views intersected: absent elsewhere.
                if (const auto *m = find_info(results.span(), PMIX_GROUP_MEMBERSHIP)) {
                    std::set<ProcKey> kept;
                    for (const auto &p : events::procs_of(m->value)) kept.insert(key_of(p));
                    for (const auto &k : t->second.named) {
                        if (kept.count(k) == 0) t->second.gone.insert(k);
                    }
                }
            }
            complete(id, st, assign ? cid : std::nullopt);
        });
}

void GroupBootstrap::end_host_part(const std::string &id, const Boot &b, pmix_status_t status) {
    std::vector<pmix_proc_t> members, local;
    for (const auto &k : b.named) {
        members.push_back(proc_of(k));
        if (groups_.is_local(proc_of(k))) local.push_back(proc_of(k));
    }
    if (local.empty() && b.leaders.empty() && b.adds.empty()) return;  // no part here
    log()->info("server: group {}: the host is told that the bootstrap ended here ({})", id,
                PMIx_Error_string(status));
    auto args = groups_.invitation_args(b.assign_context_id, local);
    const std::size_t n = b.leaders_expected;
    args->load(kBootstrap, &n, PMIX_SIZE);
    args->load(PMIX_LOCAL_COLLECTIVE_STATUS, &status, PMIX_STATUS);
    groups_.call_host(PMIX_GROUP_CONSTRUCT, id, members, args,
                      [](pmix_status_t, wire::InfoArray) {});
}

void GroupBootstrap::end(const std::string &id, pmix_status_t status, bool tell,
                         const pmix_proc_t *source) {
    elsewhere_.erase(id);
    auto it = boots_.find(id);
    if (it == boots_.end()) {
        // Ended at another server before anybody called here: the local
        // processes that come get its status.
        if (!tell && capable()) ended_[id] = Ended{status, {}};
        return;
    }
    Boot &b = it->second;
    const bool multi = b.across || (capable() && !others(b).empty());
    if (tell) tell_others(status, id, b, source);
    // Handed to the host already: its answer is for nobody any more (a
    // server that ended before its upcall gave the host its part too).
    if (b.across && !b.completing) end_host_part(id, b, status);
    if (multi) {
        Ended e{status, {}};
        for (const auto &[k, r] : b.leaders) e.answered.insert(k);
        for (const auto &[k, r] : b.adds) e.answered.insert(k);
        for (const auto &k : b.named) {
            if (groups_.is_local(proc_of(k))) e.answered.insert(k);  // latecomers: failed_
        }
        ended_[id] = std::move(e);
    }
    fail(id, status);
}

bool GroupBootstrap::message(const events::Event &ev) {
    const auto info = ev.info_span();
    const pmix_info_t *key = find_info(info, kBootKey);
    if (key == nullptr) return false;
    if (key->value.type != PMIX_STRING || key->value.data.string == nullptr) return true;
    const std::string id = key->value.data.string;
    const pmix_info_t *affected = find_info(info, PMIX_EVENT_AFFECTED_PROC);
    const bool has_affected = affected != nullptr && affected->value.type == PMIX_PROC &&
                              affected->value.data.proc != nullptr;
    if (ev.status == PMIX_GROUP_MEMBER_FAILED) {
        // A named participant served elsewhere ended.
        if (!has_affected || groups_.is_local(*affected->value.data.proc)) return true;
        const ProcKey who = key_of(*affected->value.data.proc);
        log()->info("server: group {}: bootstrap participant {} ended (told by the host)", id,
                    describe(who));
        participant_lost(id, who, false, mca::info_flag(info, kBootDecide).value_or(false));
        return true;
    }
    if (ev.status == PMIX_GROUP_MEMBERSHIP_UPDATE) {
        // A declared leader served elsewhere goes on without a participant
        // that ended.
        auto it = boots_.find(id);
        if (it != boots_.end() && has_affected && !groups_.is_local(ev.source))
            leader_decided(id, it->second, key_of(ev.source), key_of(*affected->value.data.proc),
                           false, false);
        return true;
    }
    if (ev.status == PMIX_GROUP_CONSTRUCT_ABORT && !groups_.is_local(ev.source)) {
        // A declared leader served elsewhere aborted: this server's
        // participants get the event from it, and every call that status.
        if (auto it = boots_.find(id); it != boots_.end()) {
            log()->info("server: group {}: leader {} aborts the bootstrap (told by the host)", id,
                        describe(key_of(ev.source)));
            raise_abort(id, it->second, ev.source);
        }
        end(id, PMIX_GROUP_CONSTRUCT_ABORT, false);
        return true;
    }
    if (ev.status != PMIX_GROUP_LEADER_SELECTED) {
        // The construct ended at another server; with an affected process:
        // that server refuses this server's leader (their counts differ).
        if (has_affected && groups_.is_local(*affected->value.data.proc)) {
            auto it = boots_.find(id);
            const ProcKey who = key_of(*affected->value.data.proc);
            if (it == boots_.end() || it->second.completing) return true;
            auto l = it->second.leaders.find(who);
            if (l == it->second.leaders.end()) return true;
            log()->warn("server: group {}: leader {}'s count differs from another server's", id,
                        describe(who));
            refuse(l->second, ev.status);
            it->second.leaders.erase(l);
            return true;
        }
        log()->info("server: group {}: bootstrap ended at another server: {}", id,
                    PMIx_Error_string(ev.status));
        // Also when this server's part is with the host already: the other
        // server may never give the host its own.
        end(id, ev.status, false);
        return true;
    }
    // A leader served elsewhere called.
    const ProcKey leader = key_of(ev.source);
    if (groups_.is_local(ev.source)) return true;
    if (boots_.count(id) == 0 && ended_.count(id) != 0) return true;  // ended here already
    std::optional<std::uint64_t> count;
    if (const auto *c = find_info(info, kBootstrap)) count = wire::as_uint(c->value);
    if (!count || *count == 0) return true;
    std::vector<pmix_proc_t> named;
    if (const auto *p = find_info(info, kBootProcs)) named = expand(events::procs_of(p->value));
    named.push_back(ev.source);
    auto it = boots_.find(id);
    if (it == boots_.end()) elsewhere_.erase(id);  // a new construct under that id
    if (it != boots_.end() &&
        (it->second.completing || it->second.remote_leaders.count(leader) != 0))
        return true;
    if (it != boots_.end() && it->second.leaders_expected != 0 &&
        (it->second.leaders_expected != *count || it->second.leader_count() >= *count)) {
        // As on one server: the leader whose count differs is refused.
        log()->warn(
            "server: group {}: leader {} (elsewhere) says {} leaders, the construct has {} "
            "of {}",
            id, describe(leader), *count, it->second.leader_count(), it->second.leaders_expected);
        const pmix_proc_t lp = ev.source;
        tell_others(PMIX_ERR_BAD_PARAM, id, it->second, nullptr,
                    {load_info(PMIX_EVENT_AFFECTED_PROC, &lp, PMIX_PROC)});
        return true;
    }
    Boot &b = boots_[id];
    b.remote_leaders.insert(leader);
    // A leader that decides about failures (PMIX_GROUP_LEADER), served elsewhere.
    if (mca::info_flag(info, PMIX_GROUP_LEADER).value_or(false)) b.remote_declared.insert(leader);
    b.across = true;
    b.leaders_expected = *count;
    for (const auto &p : named) b.named.insert(key_of(p));
    auto flag = [&](const char *k) { return mca::info_flag(info, k).value_or(false); };
    b.assign_context_id = b.assign_context_id || flag(PMIX_GROUP_ASSIGN_CONTEXT_ID);
    b.optional = b.optional || flag(PMIX_GROUP_OPTIONAL);
    b.ft_collective = b.ft_collective || flag(PMIX_GROUP_FT_COLLECTIVE);
    b.notify_termination = b.notify_termination || flag(PMIX_GROUP_NOTIFY_TERMINATION);
    if (const auto *t = find_info(info, kBootTimeout)) {
        if (auto v = wire::as_uint(t->value)) arm_timer(id, b, static_cast<std::uint32_t>(*v));
    }
    log()->info("server: group {}: bootstrap leader {} elsewhere ({} of {} leaders)", id,
                describe(leader), b.leader_count(), b.leaders_expected);
    // A named process served here that ended already will never call.
    for (const auto &p : named) {
        const ClientRecord *c = groups_.clients_.find_client(key_of(p));
        if (c == nullptr || !c->gone()) continue;
        log()->info("server: group {}: {} names {}, which ended", id, describe(leader),
                    describe(key_of(p)));
        participant_lost(id, key_of(p), true);  // left out, or the construct ends
    }
    check(id);
    return true;
}

void GroupBootstrap::clear() {
    for (const auto &[id, b] : boots_) {
        if (b.timer != 0) runtime::ProgressEngine::instance().cancel(b.timer);
    }
    boots_.clear();
    ended_.clear();
    elsewhere_.clear();
}

}  // namespace pmixpp::server
