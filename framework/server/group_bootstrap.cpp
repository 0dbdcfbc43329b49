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
    if (mca::info_flag(info, PMIX_GROUP_LEADER).value_or(false)) {
        log()->info("server: group {}: PMIX_GROUP_LEADER in a bootstrap construct is not supported",
                    id);
        refuse(reply, PMIX_ERR_NOT_SUPPORTED);
        return true;
    }
    const bool optional = mca::info_flag(info, PMIX_GROUP_OPTIONAL).value_or(false);
    const bool ft = mca::info_flag(info, PMIX_GROUP_FT_COLLECTIVE).value_or(false);
    auto it = boots_.find(id);
    const bool tolerant =
        optional || ft || (it != boots_.end() && (it->second.optional || it->second.ft_collective));
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
            (it->second.leaders_expected != leaders || it->second.leaders.size() >= leaders)) {
            log()->warn("server: group {}: leader {} says {} leaders, the construct has {} of {}",
                        id, describe(me), leaders, it->second.leaders.size(),
                        it->second.leaders_expected);
            refuse(reply, PMIX_ERR_BAD_PARAM);
            return true;
        }
        if (!groups_.collectives_.all_local(named)) {
            log()->info("server: group {}: a bootstrap construct across servers is not supported",
                        id);
            refuse(reply, PMIX_ERR_NOT_SUPPORTED);
            if (it != boots_.end()) fail(id, PMIX_ERR_NOT_SUPPORTED);
            return true;
        }
        // A named process that ended already will never call.
        for (const auto &p : named) {
            const ClientRecord *c = groups_.clients_.find_client(key_of(p));
            if (c != nullptr && c->gone() && tolerant) {
                ended.push_back(key_of(p));
            } else if (c != nullptr && c->gone()) {
                log()->warn("server: group {}: {} names {}, which ended", id, describe(me),
                            describe(key_of(p)));
                refuse(reply, PMIX_ERR_LOST_CONNECTION);
                if (it != boots_.end()) fail(id, PMIX_ERR_LOST_CONNECTION);
                return true;
            }
        }
    }
    Boot &b = boots_[id];
    b.optional = b.optional || optional;
    b.ft_collective = b.ft_collective || ft;
    b.gone.insert(ended.begin(), ended.end());
    if (add_member) {
        b.adds[me] = reply;
    } else {
        b.leaders_expected = leaders;
        b.leaders[me] = reply;
        for (const auto &p : named) b.named.insert(key_of(p));
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
    if (request.timeout > 0) {
        // The earliest deadline of any caller's PMIX_TIMEOUT.
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(request.timeout);
        if (b.timer == 0 || deadline < b.deadline) {
            auto &engine = runtime::ProgressEngine::instance();
            if (b.timer != 0) engine.cancel(b.timer);
            b.deadline = deadline;
            b.timer = engine.after(std::chrono::seconds(request.timeout), [this, id] {
                auto t = boots_.find(id);
                if (t == boots_.end()) return;
                t->second.timer = 0;
                if (complete_without_late(id)) return;
                log()->warn("server: bootstrap group {} timed out", id);
                fail(id, PMIX_ERR_TIMEOUT);
            });
        }
    }
    log()->info("server: group {}: bootstrap {} {} ({} of {} leaders)", id,
                add_member ? "add member" : "leader", describe(me), b.leaders.size(),
                b.leaders_expected);
    check(id);
    return true;
}

void GroupBootstrap::check(const std::string &id) {
    auto it = boots_.find(id);
    if (it == boots_.end()) return;
    Boot &b = it->second;
    if (b.completing || b.leaders_expected == 0 || b.leaders.size() < b.leaders_expected) return;
    for (const auto &k : b.named) {
        if (b.awaited(k)) return;
    }
    if (b.timer != 0) {
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
    GroupRecord g{id, members, cid, b.notify_termination, b.ft_collective, {}};
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
        b.leaders.size() < b.leaders_expected)
        return false;
    std::set<ProcKey> late;
    for (const auto &k : b.named) {
        if (b.awaited(k)) late.insert(k);
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

void GroupBootstrap::client_departed(const ProcKey &client) {
    std::vector<std::string> ids;
    for (const auto &[id, b] : boots_) ids.push_back(id);
    for (const auto &id : ids) {
        auto it = boots_.find(id);
        if (it == boots_.end()) continue;
        Boot &b = it->second;
        const bool named = b.named.count(client) != 0 || b.leaders.count(client) != 0;
        if (!named) {
            // An add member nobody named yet: forgotten.
            b.adds.erase(client);
            b.local_cids.erase(client);
            if (b.leaders.empty() && b.adds.empty()) fail(id, PMIX_ERR_LOST_CONNECTION);
            continue;
        }
        log()->info("server: group {}: bootstrap participant {} ended", id, describe(client));
        if (b.optional || b.ft_collective) {
            // Left out: the construct goes on with the others.
            b.gone.insert(client);
            if (!b.completing) check(id);
        } else if (b.completing) {
            b.lost = true;  // the host's answer is awaited: it fails then
        } else {
            fail(id, PMIX_ERR_LOST_CONNECTION);
        }
    }
}

void GroupBootstrap::clear() {
    for (const auto &[id, b] : boots_) {
        if (b.timer != 0) runtime::ProgressEngine::instance().cancel(b.timer);
    }
    boots_.clear();
}

}  // namespace pmixpp::server
