// Groups (groups.hpp): PMIx_Group_construct / _destruct / _leave on the
// server side. docs/groups.md says what a caller and a host see.
#include "server/groups.hpp"

#include <algorithm>
#include <cstring>

#include "mca/logging.hpp"
#include "runtime/progress.hpp"
#include "server/group_util.hpp"
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

auto log() {
    return mca::framework_logger("server");
}

// Directives this library does not carry out yet: NOT_SUPPORTED rather than
// a construct that ignores them (docs/groups.md, "Not yet").
const char *unsupported_directive(std::span<const pmix_info_t> info) {
    // "pmix.grp.btstrp": PMIX_GROUP_BOOTSTRAP of the standard (v6), not in the 4.2 headers.
    for (const char *key : {"pmix.grp.btstrp", PMIX_GROUP_ADD_MEMBERS}) {
        if (find_info(info, key) != nullptr) return key;
    }
    return nullptr;
}

// PMIX_GROUP_ENDPT_DATA as this library fills it: bytes modex record stream
// (REMOTE blobs), u32 n, n x (proc, u64 local context id), then (when the
// server had any) procs: its members that departed or never came in a
// construct with PMIX_GROUP_OPTIONAL or PMIX_GROUP_FT_COLLECTIVE (or failed
// ones, with PMIX_GROUP_NOTIFY_TERMINATION), then (when it has any) procs:
// its participants that lead the construct (PMIX_GROUP_LEADER).
struct EndpointData {
    std::vector<std::uint8_t> stream;
    std::vector<std::pair<pmix_proc_t, std::uint64_t>> cids;
    std::vector<pmix_proc_t> absent;
    std::vector<pmix_proc_t> leaders;
};

bool parse_endpoint(std::span<const std::uint8_t> bytes, EndpointData &out) {
    BodyReader r(bytes);
    r.bytes(out.stream);
    std::uint32_t n = 0;
    r.u32(n);
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        pmix_proc_t p{};
        std::uint64_t cid = 0;
        r.proc(p);
        r.u64(cid);
        out.cids.emplace_back(p, cid);
    }
    if (r.ok() && !r.finished()) r.procs(out.absent);
    if (r.ok() && !r.finished()) r.procs(out.leaders);
    return r.finished();
}

// Whether `k` is a client of this server that still runs.
bool alive(ClientTable &clients, const ProcKey &k) {
    const ClientRecord *c = clients.find_client(k);
    return c != nullptr && !c->gone();
}

}  // namespace

Groups::Groups(ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
               CollectiveTracker &collectives, RemoteBlobs &remote, JobBlobFn job_blob,
               RaiseFn raise)
    : clients_(clients),
      host_(host),
      collectives_(collectives),
      remote_(remote),
      job_blob_(std::move(job_blob)),
      raise_(std::move(raise)) {
    requests.add(Command::group_construct,
                 [this](auto &ch, auto &f, auto *c) { handle_construct(ch, f, c); });
    requests.add(Command::group_destruct,
                 [this](auto &ch, auto &f, auto *c) { handle_destruct(ch, f, c); });
    requests.add(Command::group_leave,
                 [this](auto &ch, auto &f, auto *c) { handle_leave(ch, f, c); });
    requests.add(Command::group_invite,
                 [this](auto &ch, auto &f, auto *c) { handle_invite(ch, f, c); });
    requests.add(Command::group_join,
                 [this](auto &ch, auto &f, auto *c) { handle_join(ch, f, c); });
    requests.add(Command::group_decision, [this](auto &ch, auto &f, auto *c) {
        // A bootstrap leader's decision (group_bootstrap.cpp), else the others'.
        if (!bootstrap_.decision(ch, f, c)) handle_decision(ch, f, c);
    });
}

pmix_status_t Groups::check_new_id(const std::string &id) const {
    if (id.empty() || id.size() > PMIX_MAX_NSLEN || id.find('\0') != std::string::npos)
        return PMIX_ERR_BAD_PARAM;
    if (clients_.find_job(id) != nullptr) return PMIX_ERR_BAD_PARAM;  // a namespace
    if (groups_.count(id) != 0) return PMIX_ERR_BAD_PARAM;            // a live group
    if (invitations_.count(id) != 0) return PMIX_ERR_BAD_PARAM;       // being invited to
    if (bootstrap_.busy(id)) return PMIX_ERR_BAD_PARAM;               // being bootstrapped
    return PMIX_SUCCESS;
}

std::vector<pmix_proc_t> Groups::expand(const std::vector<pmix_proc_t> &procs) const {
    std::vector<pmix_proc_t> out;
    std::set<ProcKey> seen;
    auto add = [&](const pmix_proc_t &p) {
        if (seen.insert(key_of(p)).second) out.push_back(p);
    };
    for (const auto &p : procs) {
        const ProcKey k = key_of(p);
        const JobRecord *job = clients_.find_job(k.first);
        if (k.second == PMIX_RANK_WILDCARD && job != nullptr && job->registered &&
            job->job_size > 0) {
            for (pmix_rank_t r = 0; r < job->job_size; ++r) add(proc_of({k.first, r}));
        } else {
            add(p);
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// construct

bool read_group_members_request(const wire::Frame &frame, GroupMembersRequest &out) {
    BodyReader r(frame.body);
    r.str(out.id);
    r.procs(out.procs);
    r.u32(out.timeout);
    r.infos(out.info);
    return r.finished();
}

void Groups::handle_construct(Channel &ch, Frame &frame, ClientRecord *client) {
    GroupMembersRequest request;
    if (!read_group_members_request(frame, request) || client == nullptr) {
        ch.close("malformed group_construct request");
        return;
    }
    auto &[id, procs, timeout, info] = request;
    const auto reply = PendingReply::to(ch, frame);
    const ProcKey me = key_of(client->proc);
    // A latecomer to a construct that failed gets its status, once.
    if (auto f = failed_.find(id); f != failed_.end() && f->second.latecomers.erase(me) != 0) {
        const pmix_status_t st = f->second.status;
        if (f->second.latecomers.empty()) failed_.erase(f);
        log()->info("server: {} arrived after group {} failed", describe(me), id);
        send_reply(reply, status_body(st));
        return;
    }
    if (bootstrap_.handle(request, reply, me)) return;  // group_bootstrap.cpp
    if (const char *key = unsupported_directive(info.span())) {
        log()->info("server: group {}: {} is not supported", id, key);
        send_reply(reply, status_body(PMIX_ERR_NOT_SUPPORTED));
        return;
    }
    if (procs.empty()) {
        send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
        return;
    }
    std::vector<pmix_proc_t> order = expand(procs);
    std::vector<pmix_proc_t> canonical = order;
    std::sort(canonical.begin(), canonical.end(), proc_less);
    if (mca::info_flag(info.span(), PMIX_GROUP_LOCAL_ONLY).value_or(false) &&
        !collectives_.all_local(canonical)) {
        log()->warn("server: group {}: PMIX_GROUP_LOCAL_ONLY with members served elsewhere", id);
        send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
        return;
    }
    const bool optional = mca::info_flag(info.span(), PMIX_GROUP_OPTIONAL).value_or(false);
    const bool ft = mca::info_flag(info.span(), PMIX_GROUP_FT_COLLECTIVE).value_or(false);
    const bool leader = mca::info_flag(info.span(), PMIX_GROUP_LEADER).value_or(false);
    auto pit = pending_.find(id);
    if (pit == pending_.end()) {
        if (pmix_status_t st = check_new_id(id); st != PMIX_SUCCESS) {
            log()->warn("server: group id '{}' of {} is empty, too long, a namespace or in use", id,
                        describe(me));
            send_reply(reply, status_body(st));
            return;
        }
        Pending p;
        p.canonical = canonical;
        p.order = order;
        pit = pending_.emplace(id, std::move(p)).first;
    } else if (!same_procs(pit->second.canonical, canonical) ||
               pit->second.local_cids.count(me) != 0) {
        // Another member list under an id being constructed, or a second
        // construct of one caller: not the same collective.
        send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
        return;
    } else if (!same_procs(pit->second.order, order)) {
        pit->second.orders_differ = true;
    }
    Pending &p = pit->second;
    p.assign_context_id = p.assign_context_id ||
                          mca::info_flag(info.span(), PMIX_GROUP_ASSIGN_CONTEXT_ID).value_or(false);
    p.optional = p.optional || optional;
    p.ft_collective = p.ft_collective || ft;
    p.notify_termination =
        p.notify_termination ||
        mca::info_flag(info.span(), PMIX_GROUP_NOTIFY_TERMINATION).value_or(false);
    std::size_t cid = SIZE_MAX;  // none
    if (const auto *i = find_info(info.span(), PMIX_GROUP_LOCAL_CID)) {
        if (auto v = wire::as_uint(i->value)) cid = static_cast<std::size_t>(*v);
    }
    p.local_cids[me] = cid;
    if (leader) p.leaders.push_back(me);
    if (timeout > 0 && (p.timeout_s == 0 || timeout < p.timeout_s)) p.timeout_s = timeout;
    auto directives = std::make_shared<wire::InfoArray>(std::move(info));
    if (!p.directives) p.directives = directives;

    auto hooks = std::make_shared<CollectiveHooks>();
    hooks->ready = [this, id](const FenceTracker &t) { construct_ready(id, t); };
    hooks->finished = [this, id](const FenceTracker &t, pmix_status_t st) {
        wire::InfoArray results;
        if (auto h = host_results_.find(id); h != host_results_.end()) {
            results = std::move(h->second);
            host_results_.erase(h);
        }
        construct_finished(id, t, st, results);
    };
    hooks->departed = [this, id](const FenceTracker &t, const ProcKey &gone) {
        return construct_departed(id, t, gone);
    };
    const std::uint64_t tid = collectives_.join("group-construct|" + id, canonical, me, reply,
                                                timeout, directives, hooks);
    // `p` may be gone now: the join may have completed the construct.
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    if (tid == 0) {  // refused (already answered)
        it->second.local_cids.erase(me);
        std::erase(it->second.leaders, me);
        if (it->second.tracker == 0) pending_.erase(it);
        return;
    }
    if (it->second.tracker == 0) it->second.tracker = tid;
}

void Groups::call_host(pmix_group_operation_t op, const std::string &id,
                       const std::vector<pmix_proc_t> &procs, std::shared_ptr<HostArgs> args,
                       std::function<void(pmix_status_t, wire::InfoArray)> done) {
    args->procs = procs;
    auto grp = std::make_shared<std::string>(id);
    call_host_info(
        [this, op, grp, args](pmix_info_cbfunc_t cb, void *cbdata) {
            return host_->group(op, grp->data(), args->procs.data(), args->procs.size(),
                                args->info_data(), args->info_size(), cb, cbdata);
        },
        [grp, args, done = std::move(done)](pmix_status_t st, wire::InfoArray results) {
            done(st, std::move(results));
        });
}

std::vector<std::uint8_t> Groups::endpoint_data(const Pending &p) {
    std::vector<std::uint8_t> stream;
    std::uint32_t n = 0;
    for (const auto &k : p.expected_local) {
        ClientRecord *c = clients_.find_client(k);
        if (c != nullptr && c->committed) wire::append_record(stream, c->proc, c->remote_blob);
    }
    BodyWriter w;
    w.bytes(stream);
    for (const auto &[k, cid] : p.local_cids) n += cid != SIZE_MAX ? 1 : 0;
    w.u32(n);
    for (const auto &[k, cid] : p.local_cids) {
        if (cid != SIZE_MAX) w.proc(proc_of(k)).u64(cid);
    }
    if (!p.missing.empty() || !p.leaders.empty() || !p.failed_leaders.empty()) {
        std::vector<pmix_proc_t> absent, leaders;
        for (const auto &k : p.missing) absent.push_back(proc_of(k));
        for (const auto &k : p.leaders) leaders.push_back(proc_of(k));
        for (const auto &k : p.failed_leaders) leaders.push_back(proc_of(k));
        w.procs(absent.data(), absent.size());
        if (!leaders.empty()) w.procs(leaders.data(), leaders.size());
    }
    return w.take();
}

void Groups::construct_ready(const std::string &id, const FenceTracker &t) {
    auto it = pending_.find(id);
    if (it == pending_.end()) {
        collectives_.complete(t.id, PMIX_ERR_NOT_FOUND);
        return;
    }
    Pending &p = it->second;
    p.tracker = t.id;
    p.ready = true;
    p.any_contributed = !t.contributed.empty();
    p.expected_local = t.expected_local;
    construct_proceed(id);
}

void Groups::construct_proceed(const std::string &id) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    Pending &p = it->second;
    if (p.deciding) {  // after the host's answer (leaders across servers)
        check_decisions(id);
        return;
    }
    // A leader's decision about a failed member, or the vote after a
    // leader failed, is awaited: the construct goes on once it is in.
    if (!p.ready || !p.voters.empty() || p.failed_leader || !p.undecided.empty()) return;
    const std::uint64_t tid = p.tracker;
    if (!p.any_contributed) {  // every local participant departed
        collectives_.complete(tid, PMIX_ERR_LOST_CONNECTION);
        return;
    }
    const bool local = collectives_.all_local(p.canonical);
    // A group of this server's clients needs no host, unless a context id
    // is wanted and the host can give one (the standard's LOCAL_ONLY rule).
    if (local && !(p.assign_context_id && host_->group != nullptr)) {
        collectives_.complete(tid, PMIX_SUCCESS);
        return;
    }
    if (host_->group == nullptr) {
        log()->warn(
            "server: group {} has members served elsewhere and the host has no group "
            "upcall",
            id);
        collectives_.complete(tid, PMIX_ERR_NOT_SUPPORTED);
        return;
    }
    call_host_construct(id);
}

// ---------------------------------------------------------------------------------------------
// optional members across servers (PMIX_GROUP_OPTIONAL, PMIX_GROUP_FT_COLLECTIVE)

std::shared_ptr<HostArgs> Groups::construct_args(const Pending &p, pmix_status_t local_status) {
    auto args = std::make_shared<HostArgs>();
    for (const auto &i : p.directives ? p.directives->span() : std::span<const pmix_info_t>{}) {
        if (PMIX_CHECK_KEY(&i, PMIX_GROUP_LOCAL_CID) || PMIX_CHECK_KEY(&i, PMIX_GROUP_ENDPT_DATA) ||
            PMIX_CHECK_KEY(&i, PMIX_GROUP_ASSIGN_CONTEXT_ID) || PMIX_CHECK_KEY(&i, PMIX_TIMEOUT) ||
            PMIX_CHECK_KEY(&i, PMIX_GROUP_MEMBERSHIP))
            continue;
        args->add_copy(i);
    }
    if (p.assign_context_id) args->add_bool(PMIX_GROUP_ASSIGN_CONTEXT_ID, true);
    if (p.timeout_s > 0) args->add_int(PMIX_TIMEOUT, static_cast<int>(p.timeout_s));
    args->load(PMIX_LOCAL_COLLECTIVE_STATUS, &local_status, PMIX_STATUS);
    if (!p.missing.empty()) {
        // This server's view of the membership, in group-rank order: the
        // processes without its members that departed or never came. The
        // host answers the servers' views intersected (docs/groups.md).
        std::vector<pmix_proc_t> view = p.orders_differ ? p.canonical : p.order;
        std::erase_if(view, [&](const pmix_proc_t &m) { return p.missing.count(key_of(m)) != 0; });
        args->info.push_back(procs_info(PMIX_GROUP_MEMBERSHIP, view));
    }
    auto endpoint = std::make_shared<std::vector<std::uint8_t>>(endpoint_data(p));
    pmix_byte_object_t bo{reinterpret_cast<char *>(endpoint->data()), endpoint->size()};
    args->load(PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);
    return args;
}

void Groups::end_host_construct(const std::string &id, const Pending &p, pmix_status_t status) {
    // Ended here before this server's part reached the host: the other
    // servers' parts are held by the host until every server's part is in.
    // This server's part, with its status, lets the host end the operation
    // on every server; the answer is for nobody here any more.
    log()->info("server: group {}: the host is told that the construct ended here ({})", id,
                PMIx_Error_string(status));
    call_host(PMIX_GROUP_CONSTRUCT, id, p.canonical, construct_args(p, status),
              [](pmix_status_t, wire::InfoArray) {});
}

void Groups::call_host_construct(const std::string &id) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    Pending &p = it->second;
    p.host_called = true;
    const std::uint64_t tid = p.tracker;
    auto args = construct_args(p, PMIX_SUCCESS);
    call_host(PMIX_GROUP_CONSTRUCT, id, p.canonical, args,
              [this, id, tid](pmix_status_t st, wire::InfoArray results) {
                  // A construct that ended meanwhile (aborted; a later one
                  // may use the id now): nothing to answer.
                  auto pit = pending_.find(id);
                  if (pit == pending_.end() || pit->second.tracker != tid) return;
                  if (pit->second.parked && !pit->second.deciding) {
                      // The local tracker timed out meanwhile: finish from its copy.
                      const auto parked = pit->second.parked;
                      pit->second.parked.reset();
                      construct_finished(id, *parked, st, results);
                      return;
                  }
                  host_results_[id] = std::move(results);
                  collectives_.complete(tid, st);
              });
}

bool Groups::construct_timed_out(const std::string &id, const FenceTracker &t) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return false;
    Pending &p = it->second;
    if (!(p.optional || p.ft_collective) || collectives_.all_local(p.canonical)) return false;
    if (p.host_called) {
        // Handed to the host, which bounds it with the PMIX_TIMEOUT it got:
        // its answer (the other servers' absent members with it) finishes.
        p.parked = std::make_shared<FenceTracker>(t);
        log()->info("server: group {}: local timeout while the host collects; awaiting it", id);
        return true;
    }
    if (!p.optional || t.contributed.empty() || host_->group == nullptr || !p.voters.empty() ||
        p.failed_leader || !p.undecided.empty())
        return false;
    // Optional members that never came: the host is asked without them.
    std::set<ProcKey> late;
    for (const auto &k : t.expected_local) {
        if (t.contributed.count(k) == 0) late.insert(k);
    }
    p.missing.insert(late.begin(), late.end());
    if (!late.empty()) failed_[id] = Failed{PMIX_ERR_TIMEOUT, late};
    auto parked = std::make_shared<FenceTracker>(t);
    for (const auto &k : late) parked->expected_local.erase(k);
    p.expected_local = parked->expected_local;
    p.any_contributed = true;
    p.ready = true;
    p.parked = parked;
    log()->info("server: group {}: {} optional members late; the host is asked without them", id,
                late.size());
    call_host_construct(id);
    return true;
}

// ---------------------------------------------------------------------------------------------
// leaders across servers (PMIX_GROUP_LEADER with PMIX_GROUP_NOTIFY_TERMINATION)

std::vector<pmix_proc_t> Groups::remote_participants(const Pending &p) const {
    std::vector<pmix_proc_t> out;
    for (const auto &m : p.canonical) {
        const ProcKey k = key_of(m);
        if (clients_.find_client(k) == nullptr && p.missing.count(k) == 0 &&
            p.absent_all.count(k) == 0)
            out.push_back(m);
    }
    return out;
}

bool Groups::construct_needs_decision(const std::string &id, Pending &p, const FenceTracker &t,
                                      const wire::InfoArray &host_results,
                                      const std::set<ProcKey> &absent,
                                      const std::set<ProcKey> &remote_leaders,
                                      pmix_status_t &status) {
    // An optional construct goes on without whoever is absent, leaders too.
    if (p.decided || p.optional || absent.empty() || collectives_.all_local(p.canonical))
        return false;
    std::set<ProcKey> leaders = remote_leaders;
    leaders.insert(p.leaders.begin(), p.leaders.end());
    leaders.insert(p.failed_leaders.begin(), p.failed_leaders.end());
    const bool leader_lost =
        std::any_of(leaders.begin(), leaders.end(), [&](const auto &l) { return absent.count(l); });
    std::set<ProcKey> lost;  // the leaders that failed
    for (const auto &a : absent) {
        if (leaders.erase(a) != 0) lost.insert(a);
    }
    if (leader_lost && leaders.empty()) {
        // Every leader failed: the participants of every server elect one.
        if (host_->notify_event == nullptr) {
            // The votes could not reach the other servers.
            log()->warn(
                "server: group {}: an election across servers needs the host's "
                "notify_event",
                id);
            status = PMIX_ERR_NOT_SUPPORTED;
            return false;
        }
        Pending &waiting = park_for_decisions(id, p, t, host_results, absent);
        start_election(id, waiting, lost);
        return true;
    }
    if (!p.notify_termination || p.ft_collective) return false;
    if (host_->notify_event == nullptr) {
        // The decisions could not reach the other servers.
        log()->warn("server: group {}: leaders across servers need the host's notify_event", id);
        status = PMIX_ERR_NOT_SUPPORTED;
        return false;
    }
    if (leaders.empty()) {
        // No leader anywhere: the standard's rule, the construct fails; the
        // local participants hear of every failed member.
        std::vector<pmix_proc_t> to;
        for (const auto &[k, reply] : t.contributed) to.push_back(proc_of(k));
        for (const auto &a : absent) raise_member_failed(id, a, to);
        status = PMIX_ERR_LOST_CONNECTION;
        return false;
    }
    p.leaders_awaited = std::move(leaders);
    Pending &waiting = park_for_decisions(id, p, t, host_results, absent);
    // The local leaders decide about the failed members served elsewhere
    // (those served here were asked of them before the host was called).
    for (const auto &a : absent) {
        if (clients_.find_client(a) != nullptr && waiting.lost_after_host.count(a) == 0) continue;
        ask_leaders(id, waiting, a);
        if (auto u = waiting.undecided.find(a); u != waiting.undecided.end() && u->second.empty())
            waiting.undecided.erase(u);
    }
    log()->info("server: group {}: {} members failed, {} leaders decide", id, absent.size(),
                waiting.leaders_awaited.size());
    check_decisions(id);
    return true;
}

Groups::Pending &Groups::park_for_decisions(const std::string &id, Pending &p,
                                            const FenceTracker &t,
                                            const wire::InfoArray &host_results,
                                            const std::set<ProcKey> &absent) {
    p.deciding = true;
    p.absent_all = absent;
    p.parked = std::make_shared<FenceTracker>(t);
    p.decision_results = wire::InfoArray::copy_of(host_results.span());
    const std::uint32_t timeout_s = p.timeout_s;
    std::weak_ptr<FenceTracker> gen = p.parked;
    Pending &waiting = pending_[id] = std::move(p);
    if (timeout_s > 0) {
        // PMIX_TIMEOUT bounds the decisions (and an election) too.
        waiting.decision_timer = runtime::ProgressEngine::instance().after(
            std::chrono::seconds(timeout_s), [this, id, gen] {
                auto it = pending_.find(id);
                if (it == pending_.end() || !it->second.deciding || it->second.parked != gen.lock())
                    return;
                it->second.decision_timer = 0;
                log()->warn("server: group {}: the leaders' decisions did not come in time", id);
                end_decisions(id, PMIX_ERR_TIMEOUT);
            });
    }
    return waiting;
}

void Groups::end_decisions(const std::string &id, pmix_status_t status) {
    auto it = pending_.find(id);
    if (it == pending_.end() || !it->second.parked) return;
    const auto parked = it->second.parked;
    if (it->second.decision_timer != 0)
        runtime::ProgressEngine::instance().cancel(it->second.decision_timer);
    pending_.erase(it);
    for (const auto &[k, reply] : parked->contributed) send_reply(reply, status_body(status));
}

// ---------------------------------------------------------------------------------------------
// electing a leader across servers (every leader of a construct failed)
//
// After the host's answer every server knows the failed leaders (its
// PMIX_GROUP_ENDPT_DATA lists) and the same surviving participants. Each
// server sends PMIX_GROUP_LEADER_FAILED to its own and collects their votes;
// an abort aborts for all (PMIX_GROUP_CONSTRUCT_ABORT through the host, as a
// leader's), otherwise the server sends its vote through the host's
// notify_event: a PMIX_GROUP_LEADER_FAILED event with kVoteKey, the
// participants it voted for (kVotersKey) and its volunteers
// (kVolunteersKey), to the participants served elsewhere, whose servers
// consume it (host_event). Once every participant's server voted, each
// server picks the same leader: the volunteer with the lowest group rank,
// wherever it is served, else the participant with the lowest group rank.

namespace {

std::vector<pmix_proc_t> procs_of_keys(const std::vector<ProcKey> &keys) {
    std::vector<pmix_proc_t> out;
    for (const auto &k : keys) out.push_back(proc_of(k));
    return out;
}

}  // namespace

// PMIX_GROUP_LEADER_FAILED about `leader` to each of `participants` (a
// group_ask); those it reached join `voters`, whom the election waits for
// (a construct's or an invitation's).
void Groups::ask_vote(const std::string &id, std::set<ProcKey> &voters,
                      const std::vector<pmix_proc_t> &participants, const pmix_proc_t &leader) {
    const auto ev =
        group_event(PMIX_GROUP_LEADER_FAILED, id, nullptr, participants, {affected(leader)});
    for (const auto &m : participants) {
        if (send_ask(key_of(m), id, ev)) voters.insert(key_of(m));
    }
}

std::vector<pmix_proc_t> Groups::running_here(const Pending &p) const {
    std::vector<pmix_proc_t> out;
    for (const auto &m : p.canonical) {
        const ProcKey k = key_of(m);
        if (p.absent_all.count(k) == 0 && alive(clients_, k)) out.push_back(m);
    }
    return out;
}

void Groups::start_election(const std::string &id, Pending &p, const std::set<ProcKey> &lost) {
    p.electing = true;
    p.local_voted = false;
    p.lost_leaders = lost;
    p.failed_leader = *lost.begin();
    p.voters.clear();
    p.volunteers.clear();
    p.abort_vote = false;
    p.aborter.reset();
    const std::vector<pmix_proc_t> participants = running_here(p);
    log()->info("server: group {}: every leader failed; {} participants here vote", id,
                participants.size());
    ask_vote(id, p.voters, participants, proc_of(*p.failed_leader));
    // Nobody here to vote: this server's (empty) vote goes out at once.
    if (p.voters.empty())
        runtime::ProgressEngine::instance().post([this, id] { election_local_done(id); });
}

void Groups::election_local_done(const std::string &id) {
    auto it = pending_.find(id);
    if (it == pending_.end() || !it->second.electing || it->second.local_voted ||
        !it->second.voters.empty())
        return;
    Pending &p = it->second;
    p.local_voted = true;
    if (p.abort_vote) {
        log()->info("server: group {}: a participant aborts after every leader failed", id);
        const pmix_proc_t source = proc_of(*p.aborter);
        abort_construct(id, &source);  // to the others here and, through the host, elsewhere
        return;
    }
    const auto remote = remote_participants(p);
    if (!remote.empty() && raise_out_) {
        std::vector<pmix_proc_t> electorate;  // the participants this server votes for
        for (const auto &m : p.canonical) {
            const ProcKey k = key_of(m);
            if (clients_.find_client(k) != nullptr && p.absent_all.count(k) == 0)
                electorate.push_back(m);
        }
        const pmix_proc_t source = electorate.empty() ? proc_of(*p.failed_leader) : electorate[0];
        send_vote(id, source, remote, electorate, p.volunteers);
    }
    check_election(id);
}

void Groups::send_vote(const std::string &id, const pmix_proc_t &source,
                       const std::vector<pmix_proc_t> &to, const std::vector<pmix_proc_t> &voters,
                       const std::vector<ProcKey> &volunteers, std::vector<pmix_info_t> extra) {
    std::vector<pmix_info_t> info{load_info(kVoteKey, id.c_str(), PMIX_STRING),
                                  procs_info(kVotersKey, voters),
                                  procs_info(kVolunteersKey, procs_of_keys(volunteers))};
    info.insert(info.end(), extra.begin(), extra.end());
    auto ev = group_event(PMIX_GROUP_LEADER_FAILED, id, &source, to, std::move(info));
    if (raise_out_) raise_out_(std::make_shared<const events::Event>(std::move(ev)));
}

void Groups::check_election(const std::string &id) {
    auto it = pending_.find(id);
    if (it == pending_.end() || !it->second.electing || !it->second.local_voted) return;
    Pending &p = it->second;
    for (const auto &m : remote_participants(p)) {
        if (p.remote_voted.count(key_of(m)) == 0) return;  // that server's vote is not in
    }
    p.electing = false;
    // Group ranks as the construct will give them: the host's order, else ours.
    std::vector<pmix_proc_t> order = p.orders_differ ? p.canonical : p.order;
    if (const auto *m = find_info(p.decision_results.span(), PMIX_GROUP_MEMBERSHIP)) {
        auto procs = events::procs_of(m->value);
        if (!procs.empty()) order = std::move(procs);
    }
    auto rank_of = [&](const ProcKey &k) {
        for (std::size_t i = 0; i < order.size(); ++i) {
            if (key_of(order[i]) == k) return i;
        }
        return order.size();
    };
    auto candidate = [&](const ProcKey &k) {
        if (p.absent_all.count(k) != 0 || rank_of(k) == order.size()) return false;
        return clients_.find_client(k) == nullptr || alive(clients_, k);
    };
    std::vector<ProcKey> volunteers, everyone;
    for (const auto &k : p.volunteers) {
        if (candidate(k)) volunteers.push_back(k);
    }
    for (const auto &k : p.remote_volunteers) {
        if (candidate(k)) volunteers.push_back(k);
    }
    for (const auto &m : order) {
        if (candidate(key_of(m))) everyone.push_back(key_of(m));
    }
    const auto elected = elect(volunteers, {everyone}, rank_of);
    if (!elected) {
        end_decisions(id, PMIX_ERR_LOST_CONNECTION);
        return;
    }
    const ProcKey leader = *elected;
    const bool here = clients_.find_client(leader) != nullptr;
    p.failed_leader.reset();
    p.leaders.clear();
    if (here) p.leaders.push_back(leader);
    p.leaders_awaited = {leader};
    // To this server's participants; the other servers announce to theirs.
    const std::vector<pmix_proc_t> participants = running_here(p);
    const pmix_proc_t lp = proc_of(leader);
    log()->info("server: group {}: {} is the new leader (elected across servers)", id,
                describe(leader));
    raise_group_event(PMIX_GROUP_LEADER_SELECTED, id, nullptr, participants,
                      {load_info(PMIX_EVENT_AFFECTED_PROC, &lp, PMIX_PROC)});
    // The failed members that were no leaders: the new leader decides
    // (PMIX_GROUP_NOTIFY_TERMINATION), its server asks it.
    if (here && p.notify_termination && !p.ft_collective) {
        for (const auto &a : p.absent_all) {
            if (p.lost_leaders.count(a) != 0) continue;
            ask_leaders(id, p, a);
            if (auto u = p.undecided.find(a); u != p.undecided.end() && u->second.empty())
                p.undecided.erase(u);
        }
    }
    check_decisions(id);
}

void Groups::check_decisions(const std::string &id) {
    auto it = pending_.find(id);
    if (it == pending_.end() || !it->second.deciding || it->second.electing) return;
    Pending &p = it->second;
    if (!p.undecided.empty()) return;
    if (!p.announced) {
        // This server's leaders went on: the other servers are told, once,
        // by PMIX_GROUP_MEMBERSHIP_UPDATE from each of them (source: the
        // leader; PMIX_GROUP_ID, PMIX_GROUP_MEMBERSHIP).
        p.announced = true;
        std::vector<pmix_proc_t> members;
        for (const auto &m : p.canonical) {
            if (p.absent_all.count(key_of(m)) == 0) members.push_back(m);
        }
        const auto remote = remote_participants(p);
        for (const auto &leader : p.leaders) {
            if (p.leaders_awaited.count(leader) == 0) continue;
            p.decided_leaders.insert(leader);
            if (remote.empty() || !raise_out_) continue;
            const pmix_proc_t lp = proc_of(leader);
            std::vector<pmix_info_t> info_out;
            info_out.push_back(load_info(PMIX_GROUP_ID, id.c_str(), PMIX_STRING));
            info_out.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, remote));
            info_out.push_back(procs_info(PMIX_GROUP_MEMBERSHIP, members));
            auto ev = events::Event::make(PMIX_GROUP_MEMBERSHIP_UPDATE, &lp, PMIX_RANGE_CUSTOM,
                                          info_out.data(), info_out.size());
            for (auto &i : info_out) PMIx_Value_destruct(&i.value);
            raise_out_(std::make_shared<const events::Event>(std::move(ev)));
        }
    }
    for (const auto &l : p.leaders_awaited) {
        if (p.decided_leaders.count(l) == 0) return;
    }
    p.deciding = false;
    p.decided = true;
    if (p.decision_timer != 0) runtime::ProgressEngine::instance().cancel(p.decision_timer);
    p.decision_timer = 0;
    const auto parked = p.parked;
    p.parked.reset();
    wire::InfoArray results = std::move(p.decision_results);
    construct_finished(id, *parked, PMIX_SUCCESS, results);
}

void Groups::construct_finished(const std::string &id, const FenceTracker &t, pmix_status_t status,
                                const wire::InfoArray &host_results) {
    auto it = pending_.find(id);
    if (it == pending_.end()) {
        for (const auto &[k, reply] : t.contributed) send_reply(reply, status_body(status));
        return;
    }
    if (status == PMIX_ERR_TIMEOUT && construct_timed_out(id, t)) return;
    Pending p = std::move(it->second);
    pending_.erase(it);

    if (status == PMIX_ERR_TIMEOUT && p.optional && !t.contributed.empty()) {
        // Optional members that never came: the group forms without them.
        std::set<ProcKey> late;
        for (const auto &k : t.expected_local) {
            if (t.contributed.count(k) == 0) late.insert(k);
        }
        p.missing.insert(late.begin(), late.end());
        if (!late.empty()) failed_[id] = Failed{PMIX_ERR_TIMEOUT, std::move(late)};
        status = PMIX_SUCCESS;
    }
    std::vector<pmix_proc_t> members = p.orders_differ ? p.canonical : p.order;
    std::erase_if(members, [&](const pmix_proc_t &m) { return p.missing.count(key_of(m)) != 0; });
    std::optional<std::size_t> context_id;
    std::map<ProcKey, std::uint64_t> cids;
    for (const auto &[k, cid] : p.local_cids) {
        if (cid != SIZE_MAX) cids[k] = cid;
    }
    std::vector<std::uint8_t> remote_stream;
    std::set<ProcKey> from_host;  // in remote_stream
    std::set<ProcKey> absent;     // reported by the servers (endpoint data)
    std::set<ProcKey> remote_leaders;
    if (status == PMIX_SUCCESS) {
        const auto results = host_results.span();
        if (const auto *m = find_info(results, PMIX_GROUP_MEMBERSHIP)) {
            auto procs = events::procs_of(m->value);
            if (!procs.empty()) members = std::move(procs);  // the host's order wins
        }
        if (p.assign_context_id) {
            context_id = context_id_in(results);
            if (!context_id && collectives_.all_local(p.canonical)) {
                context_id = next_context_id_++;
            } else if (!context_id) {
                log()->warn("server: group {} spans servers and the host assigned no context id",
                            id);
                status = PMIX_ERR_NOT_SUPPORTED;
            }
        }
        for (const auto &i : results) {
            if (!PMIX_CHECK_KEY(&i, PMIX_GROUP_ENDPT_DATA) || i.value.type != PMIX_BYTE_OBJECT)
                continue;
            const auto &bo = i.value.data.bo;
            EndpointData e;
            if (!parse_endpoint({reinterpret_cast<const std::uint8_t *>(bo.bytes), bo.size}, e)) {
                log()->warn("server: group {}: the host's PMIX_GROUP_ENDPT_DATA is not ours", id);
                continue;
            }
            for (const auto &[proc, cid] : e.cids) cids[key_of(proc)] = cid;
            for (const auto &a : e.absent) absent.insert(key_of(a));
            for (const auto &l : e.leaders) remote_leaders.insert(key_of(l));
            std::vector<wire::ModexRecord> records;
            if (!wire::parse_records(e.stream, records)) continue;
            for (auto &rec : records) {
                const ProcKey k = key_of(rec.proc);
                if (clients_.find_client(k) != nullptr) continue;  // ours: sent as LOCAL blob
                wire::append_record(remote_stream, rec.proc, rec.blob);
                from_host.insert(k);
                remote_.keep_remote(k, std::move(rec.blob));
            }
        }
    }
    // Members lost after their server handed the construct to the host:
    // absent too. Without PMIX_GROUP_OPTIONAL, _FT_COLLECTIVE or
    // _NOTIFY_TERMINATION (whose leaders or participants decide) the
    // construct fails, as for a member lost before.
    if (status == PMIX_SUCCESS && !p.lost_after_host.empty()) {
        absent.insert(p.lost_after_host.begin(), p.lost_after_host.end());
        if (!p.optional && !p.ft_collective && !p.notify_termination) {
            log()->warn("server: group {}: {} members ended after the host was called", id,
                        p.lost_after_host.size());
            status = PMIX_ERR_LOST_CONNECTION;
        }
    }
    if (status == PMIX_SUCCESS &&
        construct_needs_decision(id, p, t, host_results, absent, remote_leaders, status))
        return;  // `p` waits in pending_ for the leaders
    if (status != PMIX_SUCCESS) {
        std::set<ProcKey> late;
        for (const auto &k : t.expected_local) {
            if (t.contributed.count(k) == 0) late.insert(k);
        }
        if (!late.empty()) failed_[id] = Failed{status, std::move(late)};
        log()->warn("server: group {} construct failed: {}", id, PMIx_Error_string(status));
        if (!p.host_called && host_->group != nullptr && !collectives_.all_local(p.canonical))
            end_host_construct(id, p, status);
        for (const auto &[k, reply] : t.contributed) send_reply(reply, status_body(status));
        return;
    }

    // The members another server reported absent (optional members across
    // servers), also when the host's membership still names them.
    std::erase_if(members, [&](const pmix_proc_t &m) { return absent.count(key_of(m)) != 0; });
    GroupRecord g{id,
                  members,
                  context_id,
                  p.notify_termination,
                  p.ft_collective,
                  std::set<ProcKey>(p.leaders.begin(), p.leaders.end())};
    // The standard: PARTIAL_SUCCESS when optional members did not take part
    // (or a leader went on without a failed member).
    const bool reduced = !p.missing.empty() || members.size() < p.canonical.size();
    const pmix_status_t final_status = reduced ? PMIX_ERR_PARTIAL_SUCCESS : PMIX_SUCCESS;
    const MemberData data = member_data(g, std::move(remote_stream), from_host);
    for (const auto &[k, reply] : t.contributed)
        send_reply(reply, member_reply(g, final_status, cids, data, k));
    groups_[id] = std::move(g);
    log()->info("server: group {} constructed ({} members)", id, members.size());
    // The standard: a construct that formed smaller than asked is followed
    // by PMIX_GROUP_MEMBERSHIP_UPDATE to the members, with the membership.
    if (!p.missing.empty() || !p.lost_after_host.empty())
        raise_group_event(PMIX_GROUP_MEMBERSHIP_UPDATE, id, nullptr, members,
                          {procs_info(PMIX_GROUP_MEMBERSHIP, members)});
}

Groups::MemberData Groups::member_data(const GroupRecord &g,
                                       std::vector<std::uint8_t> remote_stream,
                                       const std::set<ProcKey> &from_host) const {
    // The members' committed data this server holds, and the job info of
    // every member's nspace registered here.
    MemberData out;
    out.stream = std::move(remote_stream);
    std::set<std::string> nspaces;
    for (const auto &m : g.members) nspaces.insert(key_of(m).first);
    for (const auto &ns : nspaces) {
        const JobRecord *job = clients_.find_job(ns);
        if (job == nullptr) continue;
        for (const auto &[rank, c] : job->clients) {
            if (c.committed && is_member(g, {ns, rank}))
                wire::append_record(out.stream, c.proc, c.local_blob);
        }
    }
    for (const auto &[k, blob] : remote_.remote_blobs()) {
        // Remote members' data from earlier fences or direct modex (what came
        // with this construct is in the stream already).
        if (clients_.find_client(k) == nullptr && is_member(g, k) && from_host.count(k) == 0)
            wire::append_record(out.stream, proc_of(k), blob);
    }
    for (const auto &ns : nspaces) {
        auto blob = job_blob_(ns);
        if (!blob.empty()) out.blobs.emplace_back(ns, std::move(blob));
    }
    return out;
}

std::vector<std::uint8_t> Groups::member_reply(const GroupRecord &g, pmix_status_t status,
                                               const std::map<ProcKey, std::uint64_t> &cids,
                                               const MemberData &data, const ProcKey &caller) {
    const std::string &caller_ns = caller.first;
    wire::InfoArray results;
    auto id_info = load_info(PMIX_GROUP_ID, g.id.c_str(), PMIX_STRING);
    results.adopt(id_info);
    auto members_info = procs_info(PMIX_GROUP_MEMBERSHIP, g.members);
    results.adopt(members_info);
    if (g.context_id) {
        auto cid_info = load_info(PMIX_GROUP_CONTEXT_ID, &*g.context_id, PMIX_SIZE);
        results.adopt(cid_info);
    }
    if (g.leaders.count(caller) != 0) {  // the caller leads the group
        const bool yes = true;
        auto leader_info = load_info(PMIX_GROUP_LEADER, &yes, PMIX_BOOL);
        results.adopt(leader_info);
    }
    BodyWriter w;
    w.i32(status).infos(results.data(), results.size());
    w.u32(static_cast<std::uint32_t>(cids.size()));
    for (const auto &[proc, cid] : cids) w.proc(proc_of(proc)).u64(cid);
    std::uint32_t n = 0;
    for (const auto &[ns, blob] : data.blobs) n += ns != caller_ns ? 1 : 0;
    w.u32(n);
    for (const auto &[ns, blob] : data.blobs) {
        if (ns != caller_ns) w.str(ns).bytes(blob);
    }
    return w.bytes(data.stream).take();
}

// ---------------------------------------------------------------------------------------------
// leaders of a collective construct (PMIX_GROUP_LEADER)

bool Groups::construct_departed(const std::string &id, const FenceTracker &t, const ProcKey &gone) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return false;
    Pending &p = it->second;
    // The standard: no member-failed events for an optional member.
    if (p.optional) {
        p.missing.insert(gone);
        return true;
    }
    const bool was_leader = std::erase(p.leaders, gone) != 0;
    bool decided = false;  // by the leaders that remain: nobody else was asked
    for (auto &[member, leaders] : p.undecided) {
        // Without leaders the participants decide: the last one gone decides nothing.
        if (leaders.erase(gone) != 0 && leaders.empty() && (!p.leaders.empty() || !was_leader))
            decided = true;
    }
    if (decided) {
        std::erase_if(p.undecided, [](const auto &e) { return e.second.empty(); });
        runtime::ProgressEngine::instance().post([this, id] { construct_proceed(id); });
    }
    const bool was_voter = p.voters.erase(gone) != 0;
    if (was_leader) {
        // The construct goes on without it; when no declared leader is left,
        // the participants elect one (PMIX_GROUP_LEADER_FAILED).
        p.missing.insert(gone);
        if (p.leaders.empty() && !collectives_.all_local(p.canonical)) {
            // Leaders may remain elsewhere: decided after the host's answer.
            p.failed_leaders.insert(gone);
        } else if (p.leaders.empty()) {
            construct_leader_failed(id, p, gone);
        }
        return true;
    }
    if (was_voter && p.voters.empty() && p.failed_leader) {
        // Its vote will not come: the election closes without it (after
        // this departure is handled: the tracker is being iterated).
        runtime::ProgressEngine::instance().post([this, id] { construct_vote_done(id); });
    }
    const bool leading = !p.leaders.empty() || p.failed_leader.has_value();
    if (p.notify_termination && !leading && !collectives_.all_local(p.canonical)) {
        // Across servers the leaders may be served elsewhere: the member is
        // reported absent to the host, and decided about once every
        // server's leaders are known (construct_needs_decision).
        p.missing.insert(gone);
        if (!p.ft_collective) return true;
        std::vector<pmix_proc_t> to;
        for (const auto &[k, reply] : t.contributed) to.push_back(proc_of(k));
        raise_member_failed(id, gone, to);
        return true;
    }
    if (p.notify_termination) {
        // The leaders are told, else every participant that arrived (the
        // standard), and they decide: go on without it, or abort.
        p.missing.insert(gone);
        ask_leaders(id, p, gone, !leading);
        if (auto u = p.undecided.find(gone);
            u != p.undecided.end() && u->second.empty() && p.leaders.empty() && !p.failed_leader)
            p.undecided.erase(u);  // nobody left to ask
        return true;
    }
    // PMIX_GROUP_FT_COLLECTIVE: the construct goes on with the survivors.
    if (p.ft_collective) {
        p.missing.insert(gone);
        return true;
    }
    return false;
}

void Groups::ask_leaders(const std::string &id, Pending &p, const ProcKey &gone,
                         bool participants_decide) {
    auto &asked = p.undecided[gone];
    if (p.failed_leader) return;  // asked of the new leader once elected
    const pmix_proc_t who = proc_of(gone);
    std::vector<ProcKey> deciders = p.leaders;
    // No leader in the whole construct: the participants that arrived. (Across
    // servers with leaders elsewhere, only those leaders decide.)
    if (deciders.empty() && participants_decide) {
        for (const auto &[k, cid] : p.local_cids) {
            if (k != gone && alive(clients_, k)) deciders.push_back(k);
        }
    }
    for (const auto &leader : deciders) {
        const auto ev =
            group_event(PMIX_GROUP_MEMBER_FAILED, id, nullptr, {proc_of(leader)}, {affected(who)});
        // A leader that cannot be asked is departing: its departure elects another.
        if (send_ask(leader, id, ev)) asked.insert(leader);
    }
    log()->info("server: group {}: {} failed, {} leaders asked", id, describe(gone), asked.size());
}

void Groups::construct_leader_failed(const std::string &id, Pending &p, const ProcKey &gone) {
    p.failed_leader = gone;
    p.volunteers.clear();
    p.abort_vote = false;
    p.voters.clear();
    std::vector<pmix_proc_t> participants;
    for (const auto &m : p.canonical) {
        const ProcKey k = key_of(m);
        if (p.missing.count(k) == 0 && alive(clients_, k)) participants.push_back(m);
    }
    log()->info("server: group {}: leader {} failed, {} participants vote", id, describe(gone),
                participants.size());
    ask_vote(id, p.voters, participants, proc_of(gone));
    // Nobody to vote: close the election after this departure is handled.
    if (p.voters.empty())
        runtime::ProgressEngine::instance().post([this, id] { construct_vote_done(id); });
}

void Groups::construct_vote_done(const std::string &id) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    Pending &p = it->second;
    if (!p.failed_leader || !p.voters.empty()) return;
    if (p.abort_vote) {
        log()->info("server: group {}: a participant aborts after the leader failed", id);
        abort_construct(id, nullptr);
        return;
    }
    auto live = [&](const ProcKey &k) { return p.missing.count(k) == 0 && alive(clients_, k); };
    auto rank_of = [&](const ProcKey &k) {
        const auto &order = p.orders_differ ? p.canonical : p.order;
        for (std::size_t i = 0; i < order.size(); ++i) {
            if (key_of(order[i]) == k) return i;
        }
        return order.size();
    };
    // The volunteer with the lowest group rank, else the lowest group rank.
    std::vector<ProcKey> volunteers, everyone;
    for (const auto &k : p.volunteers) {
        if (live(k)) volunteers.push_back(k);
    }
    for (const auto &m : p.canonical) {
        if (live(key_of(m))) everyone.push_back(key_of(m));
    }
    const auto elected = elect(volunteers, {everyone}, rank_of);
    if (!elected) {
        collectives_.complete(p.tracker, PMIX_ERR_LOST_CONNECTION);
        return;
    }
    const ProcKey leader = *elected;
    p.leaders = {leader};
    p.failed_leader.reset();
    p.volunteers.clear();
    std::vector<pmix_proc_t> participants;
    for (const auto &m : p.canonical) {
        if (live(key_of(m))) participants.push_back(m);
    }
    const pmix_proc_t lp = proc_of(leader);
    log()->info("server: group {}: {} is the new leader", id, describe(leader));
    raise_group_event(PMIX_GROUP_LEADER_SELECTED, id, nullptr, participants,
                      {load_info(PMIX_EVENT_AFFECTED_PROC, &lp, PMIX_PROC)});
    // The failures nobody decided about go to the new leader.
    std::vector<ProcKey> orphans;
    for (const auto &[member, leaders] : p.undecided) {
        if (leaders.empty()) orphans.push_back(member);
    }
    for (const auto &member : orphans) ask_leaders(id, p, member);
    for (const auto &member : orphans) {
        auto u = p.undecided.find(member);
        if (u != p.undecided.end() && u->second.empty()) p.undecided.erase(u);
    }
    construct_proceed(id);
}

void Groups::construct_decision(const std::string &id, const ProcKey &from, pmix_status_t code,
                                const ProcKey &about, pmix_status_t decision, bool volunteer) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    Pending &p = it->second;
    if (code == PMIX_GROUP_LEADER_FAILED) {
        if (p.voters.erase(from) == 0) return;
        if (volunteer) p.volunteers.push_back(from);
        if (decision == PMIX_GROUP_CONSTRUCT_ABORT) {
            p.abort_vote = true;
            if (!p.aborter) p.aborter = from;
        }
        if (!p.voters.empty()) return;
        if (p.electing) {
            election_local_done(id);  // across servers
        } else {
            construct_vote_done(id);
        }
        return;
    }
    if (code != PMIX_GROUP_MEMBER_FAILED) return;
    auto u = p.undecided.find(about);
    if (u == p.undecided.end() || u->second.erase(from) == 0) return;  // not asked of it
    if (decision == PMIX_GROUP_CONSTRUCT_ABORT) {
        log()->info("server: group {}: leader {} aborts after {} failed", id, describe(from),
                    describe(about));
        const pmix_proc_t leader = proc_of(from);
        abort_construct(id, &leader);
        return;
    }
    // Any other answer: the construct goes on without the failed member.
    if (u->second.empty()) p.undecided.erase(u);
    construct_proceed(id);
}

void Groups::abort_construct(const std::string &id, const pmix_proc_t *source) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    Pending &p = it->second;
    if (source != nullptr) {
        // Decided by a leader's or a voter's handler: every other participant
        // is told by the event (an aborting event of a participant's own went
        // where its range said).
        std::vector<pmix_proc_t> to;
        for (const auto &m : p.canonical) {
            const ProcKey k = key_of(m);
            if (k != key_of(*source) && p.missing.count(k) == 0 && alive(clients_, k))
                to.push_back(m);
        }
        raise_group_event(PMIX_GROUP_CONSTRUCT_ABORT, id, source, to);
        // The participants served elsewhere, through the host (their
        // servers abort there: host_event).
        const auto remote = remote_participants(p);
        if (!remote.empty() && raise_out_) {
            std::vector<pmix_info_t> info_out;
            info_out.push_back(load_info(PMIX_GROUP_ID, id.c_str(), PMIX_STRING));
            info_out.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, remote));
            if (p.abort_vote && !p.lost_leaders.empty()) {
                // A voter's abort after every leader failed: the leaders it is about.
                std::vector<pmix_proc_t> leaders;
                for (const auto &k : p.lost_leaders) leaders.push_back(proc_of(k));
                info_out.push_back(procs_info(kAbortLeadersKey, leaders));
            }
            auto ev = events::Event::make(PMIX_GROUP_CONSTRUCT_ABORT, source, PMIX_RANGE_CUSTOM,
                                          info_out.data(), info_out.size());
            for (auto &i : info_out) PMIx_Value_destruct(&i.value);
            raise_out_(std::make_shared<const events::Event>(std::move(ev)));
        }
    }
    if (p.parked && p.deciding) {
        // After the host's answer: the tracker is gone, its copy answers.
        const auto parked = p.parked;
        if (p.decision_timer != 0) runtime::ProgressEngine::instance().cancel(p.decision_timer);
        pending_.erase(it);
        log()->info("server: group {} aborted while its leaders decided", id);
        for (const auto &[k, reply] : parked->contributed)
            send_reply(reply, status_body(PMIX_GROUP_CONSTRUCT_ABORT));
        return;
    }
    const std::uint64_t tid = p.tracker;
    // Nobody waits for a decision any more: the tracker's finished hook answers.
    p.undecided.clear();
    p.voters.clear();
    p.failed_leader.reset();
    collectives_.complete(tid, PMIX_GROUP_CONSTRUCT_ABORT);
}

// ---------------------------------------------------------------------------------------------
// a member lost after the host was called
//
// A participant that ends while its server's `group` upcall is under way
// (the tracker was handed over: Collectives no longer fails it) must not be
// in the group the host's answer forms. Its server keeps it absent and tells
// the other servers through notify_event: a PMIX_GROUP_MEMBER_FAILED event
// with kLostKey (the group id) and PMIX_EVENT_AFFECTED_PROC, range
// PMIX_RANGE_CUSTOM naming the participants served elsewhere, consumed by
// their servers (host_event). A server that had the host's answer before
// the message arrives formed the group: it takes the member out of it then.

namespace {
constexpr const char *kLostKey = "pmixpp.grp.lost";  // string: the group id
}  // namespace

void Groups::lost_after_host(const ProcKey &client) {
    for (auto &[id, p] : pending_) {
        if (!p.host_called || p.deciding || p.local_cids.count(client) == 0 ||
            !p.lost_after_host.insert(client).second)
            continue;
        log()->info("server: group {}: {} ended after the host was called", id, describe(client));
        const auto remote = remote_participants(p);
        if (remote.empty() || !raise_out_) continue;
        const pmix_proc_t who = proc_of(client);
        std::vector<pmix_info_t> info_out;
        info_out.push_back(load_info(PMIX_GROUP_ID, id.c_str(), PMIX_STRING));
        info_out.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, remote));
        info_out.push_back(load_info(kLostKey, id.c_str(), PMIX_STRING));
        info_out.push_back(load_info(PMIX_EVENT_AFFECTED_PROC, &who, PMIX_PROC));
        auto ev = events::Event::make(PMIX_GROUP_MEMBER_FAILED, &who, PMIX_RANGE_CUSTOM,
                                      info_out.data(), info_out.size());
        for (auto &i : info_out) PMIx_Value_destruct(&i.value);
        raise_out_(std::make_shared<const events::Event>(std::move(ev)));
    }
}

void Groups::tell_leaders_failed(const std::string &id, const Pending &p,
                                 const events::Event &abort) {
    // A voter's abort from a server that had the host's answer before this
    // one (hosts answer each server in their own time): this server's
    // participants were not asked about the failed leader yet. Every
    // participant is told of a leader's failure (the standard), so they are
    // asked now, before the abort ends their calls; their answers find no
    // construct any more.
    const auto *f = find_info(abort.info_span(), kAbortLeadersKey);
    if (f == nullptr || p.deciding) return;  // deciding: asked after the answer
    const auto leaders = events::procs_of(f->value);
    if (leaders.empty()) return;
    std::set<ProcKey> asked;
    ask_vote(id, asked, running_here(p), leaders.front());
    log()->info("server: group {}: {} participants told of the failed leader before the abort", id,
                asked.size());
}

bool Groups::host_event(const events::Event &ev) {
    if (ev.status == PMIX_GROUP_MEMBER_FAILED && find_info(ev.info_span(), kLostKey) != nullptr) {
        // Another server lost a participant after its host was called.
        const auto *i = find_info(ev.info_span(), kLostKey);
        const auto *a = find_info(ev.info_span(), PMIX_EVENT_AFFECTED_PROC);
        if (i->value.type != PMIX_STRING || i->value.data.string == nullptr || a == nullptr ||
            a->value.type != PMIX_PROC || a->value.data.proc == nullptr)
            return true;
        const std::string gid = i->value.data.string;
        const ProcKey who = key_of(*a->value.data.proc);
        if (clients_.find_client(who) != nullptr) return true;  // ours: known here
        if (auto pit = pending_.find(gid); pit != pending_.end()) {
            log()->info("server: group {}: {} ended after its host was called (told by the host)",
                        gid, describe(who));
            pit->second.lost_after_host.insert(who);
            return true;
        }
        // Formed already with the host's answer (the host delivered the
        // message late): the member's end is a group member's departure
        // here, PMIX_GROUP_MEMBER_FAILED with PMIX_GROUP_NOTIFY_TERMINATION;
        // it leaves the group either way, as its own server left it out.
        auto g = groups_.find(gid);
        if (g == groups_.end() || !is_member(g->second, who)) return true;
        auto &members = g->second.members;
        std::erase_if(members, [&](const pmix_proc_t &m) { return key_of(m) == who; });
        log()->info(
            "server: group {}: {} ended before its server had the host's answer (told "
            "after it formed here)",
            gid, describe(who));
        if (g->second.notify_termination) {
            raise_member_failed(gid, who, members);
        } else {
            raise_group_event(PMIX_GROUP_MEMBERSHIP_UPDATE, gid, nullptr, members,
                              {procs_info(PMIX_GROUP_MEMBERSHIP, members)});
        }
        return true;
    }
    if (ev.status == PMIX_GROUP_LEADER_FAILED && find_info(ev.info_span(), kVoteKey) != nullptr) {
        // Another server's vote in an election across servers: for this
        // service only, never routed to a client.
        std::string gid;
        if (const auto *i = find_info(ev.info_span(), kVoteKey);
            i->value.type == PMIX_STRING && i->value.data.string != nullptr)
            gid = i->value.data.string;
        auto pit = pending_.find(gid);
        if (pit == pending_.end()) return true;  // the construct ended meanwhile
        Pending &p = pit->second;
        // Kept also when this server's election has not begun yet.
        if (const auto *v = find_info(ev.info_span(), kVotersKey)) {
            for (const auto &m : events::procs_of(v->value)) {
                if (clients_.find_client(key_of(m)) == nullptr) p.remote_voted.insert(key_of(m));
            }
        }
        if (const auto *v = find_info(ev.info_span(), kVolunteersKey)) {
            for (const auto &m : events::procs_of(v->value)) {
                if (clients_.find_client(key_of(m)) == nullptr)
                    p.remote_volunteers.push_back(key_of(m));
            }
        }
        log()->info("server: group {}: a vote from another server (told by the host)", gid);
        check_election(gid);
        return true;
    }
    if (ev.status == PMIX_GROUP_CONSTRUCT_ABORT || ev.status == PMIX_GROUP_MEMBERSHIP_UPDATE) {
        // A leader served elsewhere decided about a construct under way here.
        std::string gid;
        if (const auto *i = find_info(ev.info_span(), PMIX_GROUP_ID);
            i != nullptr && i->value.type == PMIX_STRING && i->value.data.string != nullptr)
            gid = i->value.data.string;
        auto pit = pending_.find(gid);
        const ProcKey from = key_of(ev.source);
        if (pit == pending_.end() || clients_.find_client(from) != nullptr) return false;
        if (ev.status == PMIX_GROUP_CONSTRUCT_ABORT) {
            log()->info("server: group {}: {} aborts the construct (told by the host)", gid,
                        describe(from));
            tell_leaders_failed(gid, pit->second, ev);
            abort_construct(gid, nullptr);
        } else {
            pit->second.decided_leaders.insert(from);
            check_decisions(gid);
        }
        return false;
    }
    if (ev.status != PMIX_GROUP_LEFT) return false;
    std::string id;
    for (const auto &i : ev.info_span()) {
        if (PMIX_CHECK_KEY(&i, PMIX_GROUP_ID) && i.value.type == PMIX_STRING &&
            i.value.data.string != nullptr)
            id = i.value.data.string;
    }
    auto g = groups_.find(id);
    const ProcKey leaver = key_of(ev.source);
    // A local leaver's leave was handled here already.
    if (g == groups_.end() || clients_.find_client(leaver) != nullptr) return false;
    auto &members = g->second.members;
    if (std::erase_if(members, [&](const pmix_proc_t &m) { return key_of(m) == leaver; }) == 0)
        return false;
    log()->info("server: {} left group {} (told by the host)", describe(leaver), id);
    // The local members' new list (the leaver's server told its own).
    raise_group_event(PMIX_GROUP_MEMBERSHIP_UPDATE, id, nullptr, members,
                      {procs_info(PMIX_GROUP_MEMBERSHIP, members)});
    if (members.empty()) groups_.erase(g);
    return false;
}

bool Groups::ft_covers(const std::vector<pmix_proc_t> &procs) const {
    const std::vector<pmix_proc_t> all = expand(procs);
    return std::any_of(groups_.begin(), groups_.end(), [&](const auto &e) {
        return e.second.ft_collective && std::all_of(all.begin(), all.end(), [&](const auto &p) {
                   return is_member(e.second, key_of(p));
               });
    });
}

void Groups::client_event(const ProcKey &source, const events::Event &ev) {
    if (ev.status != PMIX_GROUP_CONSTRUCT_ABORT) return;
    std::optional<std::string> only;
    for (const auto &i : ev.info_span()) {
        if (PMIX_CHECK_KEY(&i, PMIX_GROUP_ID) && i.value.type == PMIX_STRING &&
            i.value.data.string != nullptr)
            only = i.value.data.string;
    }
    std::vector<std::string> constructs, invitations;
    for (const auto &[id, p] : pending_) {
        if ((!only || *only == id) && p.local_cids.count(source) != 0) constructs.push_back(id);
    }
    for (const auto &[id, inv] : invitations_) {
        const bool takes_part = inv.leader == source || inv.answers.count(source) != 0;
        if ((!only || *only == id) && takes_part) invitations.push_back(id);
    }
    for (const auto &id : constructs) {
        log()->info("server: group {}: {} aborts the construct by an event", id, describe(source));
        abort_construct(id, nullptr);
    }
    for (const auto &id : invitations) {
        log()->info("server: group {}: {} aborts the invitation by an event", id, describe(source));
        end_invitation(id, PMIX_GROUP_CONSTRUCT_ABORT, false);
    }
}

// ---------------------------------------------------------------------------------------------
// destruct, leave

bool Groups::caller_in(std::map<std::string, GroupRecord>::iterator g, const ProcKey &me,
                       const PendingReply &reply) const {
    if (g != groups_.end() && is_member(g->second, me)) return true;
    send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
    return false;
}

void Groups::handle_destruct(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::string id;
    std::uint32_t timeout = 0;
    wire::InfoArray info;
    r.str(id);
    r.u32(timeout);
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed group_destruct request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    const ProcKey me = key_of(client->proc);
    auto g = groups_.find(id);
    if (!caller_in(g, me, reply)) return;
    // Every member joins the same collective, named by the membership when
    // the first one arrived (a member may fail meanwhile: notify_termination).
    auto [d, fresh] = destructing_.try_emplace(id, g->second.members);
    if (fresh) std::sort(d->second.begin(), d->second.end(), proc_less);
    std::vector<pmix_proc_t> members = d->second;
    auto hooks = std::make_shared<CollectiveHooks>();
    hooks->ready = [this, id](const FenceTracker &t) { destruct_ready(id, t); };
    // PMIX_GROUP_NOTIFY_TERMINATION: destruct completes with the survivors.
    hooks->departed = [this, id](const FenceTracker &, const ProcKey &gone) {
        auto it = groups_.find(id);
        if (it == groups_.end() || !it->second.notify_termination) return false;
        // Announced now: the destruct may complete (and the group go)
        // before this service hears of the departure itself.
        auto &members = it->second.members;
        std::erase_if(members, [&](const pmix_proc_t &m) { return key_of(m) == gone; });
        raise_member_failed(id, gone, members);
        return true;
    };
    hooks->finished = [this, id](const FenceTracker &t, pmix_status_t st) {
        destructing_.erase(id);
        if (st == PMIX_SUCCESS) {
            groups_.erase(id);
            log()->info("server: group {} destructed", id);
        }
        for (const auto &[k, rep] : t.contributed) send_reply(rep, status_body(st));
    };
    collectives_.join("group-destruct|" + id, std::move(members), me, reply, timeout,
                      std::make_shared<wire::InfoArray>(std::move(info)), hooks);
}

void Groups::destruct_ready(const std::string &id, const FenceTracker &t) {
    const std::uint64_t tid = t.id;
    auto g = groups_.find(id);
    if (g == groups_.end()) {
        collectives_.complete(tid, PMIX_ERR_NOT_FOUND);
        return;
    }
    if (collectives_.all_local(g->second.members)) {
        collectives_.complete(tid, PMIX_SUCCESS);
        return;
    }
    if (host_->group == nullptr) {
        collectives_.complete(tid, PMIX_ERR_NOT_SUPPORTED);
        return;
    }
    auto args = std::make_shared<HostArgs>();
    if (t.timeout_s > 0) args->add_int(PMIX_TIMEOUT, static_cast<int>(t.timeout_s));
    const pmix_status_t local_status = PMIX_SUCCESS;
    args->load(PMIX_LOCAL_COLLECTIVE_STATUS, &local_status, PMIX_STATUS);
    call_host(PMIX_GROUP_DESTRUCT, id, t.procs, args,
              [this, tid](pmix_status_t st, wire::InfoArray) { collectives_.complete(tid, st); });
}

void Groups::handle_leave(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::string id;
    wire::InfoArray info;
    r.str(id);
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed group_leave request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    const ProcKey me = key_of(client->proc);
    auto g = groups_.find(id);
    if (!caller_in(g, me, reply)) return;
    auto &members = g->second.members;
    std::erase_if(members, [&](const pmix_proc_t &m) { return key_of(m) == me; });
    if (!members.empty() && raise_) {
        // To the remaining members, from the leaver.
        std::vector<pmix_info_t> info_out;
        info_out.push_back(load_info(PMIX_GROUP_ID, id.c_str(), PMIX_STRING));
        info_out.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, members));
        info_out.push_back(load_info(PMIX_EVENT_AFFECTED_PROC, &client->proc, PMIX_PROC));
        auto ev = events::Event::make(PMIX_GROUP_LEFT, &client->proc, PMIX_RANGE_CUSTOM,
                                      info_out.data(), info_out.size());
        for (auto &i : info_out) PMIx_Value_destruct(&i.value);
        // Also to the members served elsewhere, through the host.
        (raise_out_ ? raise_out_ : raise_)(std::make_shared<const events::Event>(std::move(ev)));
        raise_group_event(PMIX_GROUP_MEMBERSHIP_UPDATE, id, nullptr, members,
                          {procs_info(PMIX_GROUP_MEMBERSHIP, members)});
    }
    if (members.empty()) groups_.erase(g);
    log()->info("server: {} left group {}", describe(me), id);
    send_reply(reply, status_body(PMIX_SUCCESS));
}

// ---------------------------------------------------------------------------------------------
// departures, queries, stop

void Groups::raise_member_failed(const std::string &id, const ProcKey &gone,
                                 const std::vector<pmix_proc_t> &to) {
    if (!raise_ || to.empty()) return;
    const pmix_proc_t proc = proc_of(gone);
    // From the SMS (this server library), about the member.
    auto ev = group_event(PMIX_GROUP_MEMBER_FAILED, id, nullptr, to, {affected(proc)});
    raise_(std::make_shared<const events::Event>(std::move(ev)));
    // The membership changed: the remaining members' new list.
    raise_group_event(PMIX_GROUP_MEMBERSHIP_UPDATE, id, nullptr, to,
                      {procs_info(PMIX_GROUP_MEMBERSHIP, to)});
}

void Groups::client_departed(const ProcKey &client, Departure) {
    // Constructs whose leaders decide after the host's answer: a departed
    // leader no longer decides (the others go on without its word).
    std::vector<std::string> deciding, electing;
    for (auto &[id, p] : pending_) {
        if (!p.deciding) continue;
        for (auto &[member, leaders] : p.undecided) leaders.erase(client);
        std::erase_if(p.undecided, [](const auto &e) { return e.second.empty(); });
        p.leaders_awaited.erase(client);
        deciding.push_back(id);
        // A voter of an election across servers: its vote will not come.
        if (p.electing && p.voters.erase(client) != 0) electing.push_back(id);
    }
    for (const auto &id : electing) election_local_done(id);
    for (const auto &id : deciding) check_decisions(id);
    lost_after_host(client);
    bootstrap_.client_departed(client);  // group_bootstrap.cpp
    // Invitations under way: a leader's or an invitee's failure (group_invite.cpp).
    std::vector<std::string> invitations;
    for (const auto &[id, inv] : invitations_) invitations.push_back(id);
    for (const auto &id : invitations) {
        auto it = invitations_.find(id);
        if (it == invitations_.end()) continue;
        if (it->second.leader == client) {
            leader_failed(id);
        } else {
            invitee_failed(id, client);
        }
    }
    remote_invitee_departed(client);   // invitations led from another server
    invite_election_departed(client);  // an invitation's election across servers
    std::set<std::string> its_groups;
    for (auto &[id, g] : groups_) {
        if (!is_member(g, client)) continue;
        its_groups.insert(id);
        if (!g.notify_termination) continue;
        // Announced to the others, and no longer waited for (destruct).
        std::erase_if(g.members, [&](const pmix_proc_t &m) { return key_of(m) == client; });
        raise_member_failed(id, client, g.members);
    }
    for (auto &[id, f] : failed_) f.latecomers.erase(client);
    std::erase_if(failed_, [](const auto &e) { return e.second.latecomers.empty(); });
    // A group none of whose local members runs any more is forgotten here,
    // so that its id can name a new group.
    std::erase_if(groups_, [&](const auto &e) {
        if (its_groups.count(e.first) == 0) return false;
        for (const auto &[ns, job] : clients_.jobs()) {
            for (const auto &[rank, c] : job.clients) {
                if (c.running() && is_member(e.second, {ns, rank})) return false;
            }
        }
        return true;
    });
}

void Groups::job_deregistered(const std::string &) {}

bool Groups::answer_query(std::span<const pmix_info_t> qualifiers, const std::string &key,
                          HostInfo &out) const {
    if (key == PMIX_QUERY_NUM_GROUPS) {
        const std::size_t n = groups_.size();
        auto i = load_info(key.c_str(), &n, PMIX_SIZE);
        out.adopt(i);
        return true;
    }
    if (key == PMIX_QUERY_GROUP_NAMES) {
        std::vector<char *> names;
        for (const auto &[id, g] : groups_) names.push_back(const_cast<char *>(id.c_str()));
        pmix_data_array_t darray{PMIX_STRING, names.size(), names.empty() ? nullptr : names.data()};
        auto i = load_info(key.c_str(), &darray, PMIX_DATA_ARRAY);
        out.adopt(i);
        return true;
    }
    if (key == PMIX_QUERY_GROUP_MEMBERSHIP) {
        const auto *q = find_info(qualifiers, PMIX_GROUP_ID);
        if (q == nullptr || q->value.type != PMIX_STRING || q->value.data.string == nullptr)
            return false;
        auto g = groups_.find(q->value.data.string);
        if (g == groups_.end()) return false;
        auto i = procs_info(key.c_str(), g->second.members);
        out.adopt(i);
        return true;
    }
    return false;
}

void Groups::clear() {
    for (const auto &[id, inv] : invitations_) {
        if (inv.timer != 0) runtime::ProgressEngine::instance().cancel(inv.timer);
    }
    invitations_.clear();
    remote_invitations_.clear();
    for (const auto &[id, e] : invite_elections_) {
        if (e.timer != 0) runtime::ProgressEngine::instance().cancel(e.timer);
    }
    invite_elections_.clear();
    invite_elections_ended_.clear();
    for (const auto &[id, p] : pending_) {
        if (p.decision_timer != 0) runtime::ProgressEngine::instance().cancel(p.decision_timer);
    }
    bootstrap_.clear();
    groups_.clear();
    destructing_.clear();
    pending_.clear();
    host_results_.clear();
    failed_.clear();
}

// ---------------------------------------------------------------------------------------------
// invitations across servers (group_invite.cpp)

void Groups::keep_endpoints(const wire::InfoArray &results) {
    for (const auto &i : results.span()) {
        if (!PMIX_CHECK_KEY(&i, PMIX_GROUP_ENDPT_DATA) || i.value.type != PMIX_BYTE_OBJECT)
            continue;
        const auto &bo = i.value.data.bo;
        EndpointData e;
        std::vector<wire::ModexRecord> records;
        if (!parse_endpoint({reinterpret_cast<const std::uint8_t *>(bo.bytes), bo.size}, e) ||
            !wire::parse_records(e.stream, records)) {
            log()->warn("server: the host's PMIX_GROUP_ENDPT_DATA is not ours");
            continue;
        }
        for (auto &rec : records) {
            const ProcKey k = key_of(rec.proc);
            if (clients_.find_client(k) == nullptr) remote_.keep_remote(k, std::move(rec.blob));
        }
    }
}

}  // namespace pmixpp::server
