// Collectives (collectives.hpp): fence over the socket and in shared memory,
// the tracker that connect / disconnect (connect.cpp) and other services'
// collectives share, and their departure work. README.md, "Fence".
#include "server/collectives.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "mca/logging.hpp"
#include "runtime/progress.hpp"
#include "wire/codec.hpp"
#include "wire/protocol.hpp"
#include "wire/shm_fence.hpp"

namespace pmixpp::server {

using runtime::ProgressEngine;
using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Command;
using wire::Frame;

namespace {

auto log() {
    return mca::framework_logger("server");
}

std::span<const std::byte> as_bytes(const std::vector<std::uint8_t> &v) {
    return {reinterpret_cast<const std::byte *>(v.data()), v.size()};
}

}  // namespace

Collectives::Collectives(ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
                         RemoteBlobs &remote, JobBlobFn job_blob)
    : clients_(clients), host_(host), remote_(remote), job_blob_(std::move(job_blob)) {
    requests.add(Command::fence, [this](auto &ch, auto &f, auto *c) { handle_fence(ch, f, c); });
    requests.add(Command::fence_shm_done,
                 [this](auto &ch, auto &f, auto *c) { handle_fence_shm_done(ch, f, c); });
    requests.add(Command::connect,
                 [this](auto &ch, auto &f, auto *c) { handle_connect(ch, f, c); });
    requests.add(Command::disconnect,
                 [this](auto &ch, auto &f, auto *c) { handle_disconnect(ch, f, c); });
}

// ---------------------------------------------------------------------------------------------
// host calls, departures, stop

void Collectives::job_registered(JobRecord &job) {
    if (!job.fence_shm && job.job_size > 0 && job.nlocalprocs > 0 &&
        static_cast<std::uint32_t>(job.nlocalprocs) == job.job_size && wire::ShmFence::enabled()) {
        offer_shm_fence(job);
    }
}

void Collectives::client_registered(JobRecord &job, uid_t uid, gid_t gid) {
    if (job.fence_shm && uid != ::geteuid() && ::geteuid() == 0 && !job.fence_shm_given) {
        // A root server hosting a user's job: the job's first client decides
        // who may map the segment; a client of another user cannot, and its
        // fences go through the socket (the server joins the barrier for it).
        std::string error;
        bool ok = job.fence_shm->give_to(uid, gid, error) &&
                  (!job.fence_data || job.fence_data->give_to(uid, gid, error));
        for (auto &a : job.fence_areas) ok = ok && a->give_to(uid, gid, error);
        if (ok) {
            job.fence_shm_given = true;
        } else {
            log()->warn("server: fence segment of {}: {}", job.nspace, error);
        }
    }
}

void Collectives::client_connected(const std::string &nspace) {
    mend_shm_fence(nspace);  // it may come back after PMIx_Finalize
}

void Collectives::spawned(const ProcKey &parent, const std::string &nspace) {
    // Spawned processes are connected to their parent (spec, PMIx_Spawn).
    spawned_by_[nspace] = parent.first;
    if (find_client(parent) != nullptr) connected_[parent].insert(nspace);
}

void Collectives::clear() {
    for (auto &[ns, job] : clients_.jobs()) {
        if (job.fence_shm) job.fence_shm->break_with(PMIX_ERR_LOST_CONNECTION);
        for (auto &w : job.shm_waiters) {
            if (w.timer != 0) ProgressEngine::instance().cancel(w.timer);
        }
        job.shm_waiters.clear();
    }
    for (auto &[id, t] : fences_) {
        if (t.timer != 0) ProgressEngine::instance().cancel(t.timer);
    }
    fences_.clear();
    failed_.clear();
    connected_.clear();
    spawned_by_.clear();
}

void Collectives::client_departed(const ProcKey &key, Departure why) {
    // A finalized client that contributed to a collective still counts in it.
    fail_fences_of(key, why != Departure::finalized);
    for (auto &[sig, f] : failed_) f.latecomers.erase(key);  // it will not come
    std::erase_if(failed_, [](const auto &e) { return e.second.latecomers.empty(); });
    if (JobRecord *job = find_job(key.first); job != nullptr && job->fence_data) {
        job->fence_data->release(key.second);  // it will not read what it was given
    }
    break_shm_fence(key.first, PMIX_ERR_LOST_CONNECTION);
    if (why == Departure::deregistered) connected_.erase(key);
}

void Collectives::job_deregistered(const std::string &nspace) {
    // Collectives naming the job (also remote ones, without local clients)
    // get an error now, not at their timeout (or never).
    fail_fences_naming(nspace);
    break_shm_fence(nspace, PMIX_ERR_LOST_CONNECTION);
    spawned_by_.erase(nspace);
}

// ---------------------------------------------------------------------------------------------
// fence

bool Collectives::all_local(const std::vector<pmix_proc_t> &procs) const {
    for (const auto &p : procs) {
        const ProcKey key = key_of(p);
        const JobRecord *job = clients_.find_job(key.first);
        if (job == nullptr || !job->registered) return false;
        if (key.second == PMIX_RANK_WILDCARD) {
            if (job->job_size == 0 || job->clients.size() < job->job_size) return false;
        } else if (job->clients.count(key.second) == 0) {
            return false;
        }
    }
    return true;
}

void Collectives::handle_fence(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::vector<pmix_proc_t> procs;
    bool collect = false;
    std::uint32_t timeout = 0;
    wire::InfoArray info;
    r.procs(procs);
    r.boolean(collect);
    r.u32(timeout);
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed fence request");
        return;
    }
    const ProcKey me = key_of(client->proc);
    const auto reply = PendingReply::to(ch, frame);
    if (procs.empty()) procs.push_back(proc_of({me.first, PMIX_RANK_WILDCARD}));
    // PMIX_GROUP_FT_COLLECTIVE (the fence's, or its procs' group's): a
    // participant that ends leaves the fence, which goes on without it.
    std::shared_ptr<CollectiveHooks> ft;
    if (mca::info_flag(info.span(), PMIX_GROUP_FT_COLLECTIVE).value_or(false) ||
        (ft_fence_ && ft_fence_(procs))) {
        ft = std::make_shared<CollectiveHooks>();
        ft->departed = [](const FenceTracker &, const ProcKey &) { return true; };
    }
    if (JobRecord *job = find_job(me.first);
        !ft && job != nullptr && join_shm_fence(*job, me, procs, collect, timeout, reply)) {
        return;
    }
    const bool reads_shm = find_info(info.span(), wire::PMIXPP_FENCE_DATA_KEY) != nullptr;
    if (FenceTracker *t = join_collective(Collective::fence, std::move(procs), me, reply, timeout,
                                          collect, nullptr, {}, ft)) {
        // The opener's: a fence's hooks are the fault-tolerant ones only.
        t->ft = t->hooks != nullptr;
        if (reads_shm) t->shm_readers.insert(me);
        check_fence(t->id);
    }
}

FenceTracker *Collectives::join_collective(Collective kind, std::vector<pmix_proc_t> procs,
                                           const ProcKey &me, const PendingReply &reply,
                                           std::uint32_t timeout, bool collect,
                                           std::shared_ptr<wire::InfoArray> info,
                                           const std::string &tag,
                                           std::shared_ptr<CollectiveHooks> hooks) {
    std::vector<std::string> parts;
    for (const auto &p : procs) parts.push_back(describe(key_of(p)));
    std::sort(parts.begin(), parts.end());
    std::string signature = kind == Collective::connect      ? "connect|"
                            : kind == Collective::disconnect ? "disconnect|"
                            : kind == Collective::custom     ? tag + "|"
                                                             : "";
    for (const auto &p : parts) signature += p + ";";

    if (auto f = failed_.find(signature); f != failed_.end() && f->second.latecomers.erase(me)) {
        // It failed here (and the host was told) before this participant came.
        const pmix_status_t status = f->second.status;
        if (f->second.latecomers.empty()) failed_.erase(f);
        send_reply(reply, status_body(status));
        return nullptr;
    }
    FenceTracker *tracker = nullptr;
    for (auto &[id, t] : fences_) {
        if (t.signature == signature && !t.host_called && t.contributed.count(me) == 0) {
            tracker = &t;
            break;
        }
    }
    if (tracker == nullptr) {
        FenceTracker t;
        t.id = next_fence_++;
        t.kind = kind;
        t.info = std::move(info);
        t.signature = signature;
        t.procs = procs;
        t.hooks = std::move(hooks);
        for (const auto &p : procs) {
            const ProcKey key = key_of(p);
            JobRecord *job = find_job(key.first);
            if (job == nullptr) continue;
            if (key.second == PMIX_RANK_WILDCARD) {
                for (const auto &[rank, c] : job->clients)
                    t.expected_local.insert({key.first, rank});
            } else if (job->clients.count(key.second) != 0) {
                t.expected_local.insert(key);
            }
        }
        if (t.expected_local.count(me) == 0) {
            send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
            return nullptr;
        }
        std::vector<ProcKey> absorbed;
        for (const auto &k : t.expected_local) {
            ClientRecord *c = find_client(k);
            if (c != nullptr && c->gone() && k != me && t.hooks && t.hooks->departed &&
                t.hooks->departed(t, k)) {
                absorbed.push_back(k);  // the service goes on without it
            } else if (c != nullptr && c->gone()) {
                log()->warn("server: fence {} includes {}, which is gone", signature, describe(k));
                send_reply(reply, status_body(PMIX_ERR_LOST_CONNECTION));
                if (kind == Collective::fence) {
                    t.collect = collect;
                    t.timeout_s = timeout;
                    t.contributed[me] = reply;  // arrived (answered above)
                    tell_host_failed(t, PMIX_ERR_LOST_CONNECTION);
                }
                return nullptr;
            }
        }
        for (const auto &k : absorbed) {
            t.expected_local.erase(k);
            t.ended.insert(k);
        }
        tracker = &fences_.emplace(t.id, std::move(t)).first->second;
    }
    tracker->contributed[me] = reply;
    tracker->collect = tracker->collect || collect;
    if (timeout > 0 && (tracker->timeout_s == 0 || timeout < tracker->timeout_s)) {
        tracker->timeout_s = timeout;
    }
    if (timeout > 0 && tracker->timer == 0) {
        const std::uint64_t id = tracker->id;
        tracker->timer =
            ProgressEngine::instance().after(std::chrono::seconds(timeout), [this, id] {
                auto it = fences_.find(id);
                if (it == fences_.end()) return;
                it->second.timer = 0;
                log()->warn("server: fence {} timed out", it->second.signature);
                tell_host_failed(it->second, PMIX_ERR_TIMEOUT);
                complete_fence(id, PMIX_ERR_TIMEOUT, {});
            });
    }
    return tracker;
}

std::uint64_t Collectives::join(const std::string &tag, std::vector<pmix_proc_t> procs,
                                const ProcKey &me, const PendingReply &reply,
                                std::uint32_t timeout_s, std::shared_ptr<wire::InfoArray> info,
                                std::shared_ptr<CollectiveHooks> hooks) {
    FenceTracker *t = join_collective(Collective::custom, std::move(procs), me, reply, timeout_s,
                                      false, std::move(info), tag, std::move(hooks));
    if (t == nullptr) return 0;
    const std::uint64_t id = t->id;
    check_fence(id);
    return id;
}

void Collectives::check_fence(std::uint64_t id) {
    auto it = fences_.find(id);
    if (it == fences_.end()) return;
    FenceTracker &t = it->second;
    if (t.contributed.size() < t.expected_local.size() || t.host_called) return;
    if (t.kind == Collective::custom) {
        t.host_called = true;  // the service completes it from here on
        auto hooks = t.hooks;
        if (hooks && hooks->ready) {
            hooks->ready(t);
        } else {
            complete_fence(id, PMIX_ERR_NOT_SUPPORTED, {});
        }
        return;
    }
    if (all_local(t.procs)) {
        complete_fence(id, PMIX_SUCCESS, {});
        return;
    }
    if (t.kind != Collective::fence) {
        call_host_connect(t);
        return;
    }
    if (host_->fence_nb == nullptr) {
        complete_fence(id, PMIX_ERR_NOT_SUPPORTED, {});
        return;
    }
    t.host_called = true;
    // This node's contribution: one malloc'd, concatenable record stream that
    // the host owns once the call returns (OPENMPI-CONTRACT rule 6).
    std::vector<std::uint8_t> stream;
    if (t.collect) {
        for (const auto &k : t.expected_local) {
            ClientRecord *c = find_client(k);
            if (c != nullptr && c->committed) wire::append_record(stream, c->proc, c->remote_blob);
        }
    }
    char *data = nullptr;
    if (!stream.empty()) {
        data = static_cast<char *>(std::malloc(stream.size()));
        std::memcpy(data, stream.data(), stream.size());
    }
    auto args = fence_args(t, PMIX_SUCCESS);
    call_host_modex(
        [this, args, data, n = stream.size()](pmix_modex_cbfunc_t cb, void *cbdata) {
            return host_->fence_nb(args->procs.data(), args->procs.size(), args->info_data(),
                                   args->info_size(), data, n, cb, cbdata);
        },
        [this, id, args](pmix_status_t status, std::vector<std::uint8_t> payload) {
            complete_fence(id, status, payload);
        });
}

std::shared_ptr<HostArgs> Collectives::fence_args(const FenceTracker &t,
                                                  pmix_status_t local_status) const {
    auto args = std::make_shared<HostArgs>();
    args->procs = t.procs;
    if (t.collect) args->add_bool(PMIX_COLLECT_DATA, true);
    if (t.timeout_s > 0) args->add_int(PMIX_TIMEOUT, static_cast<int>(t.timeout_s));
    if (t.ft) {
        // The host goes on without the participants that ended (docs/groups.md,
        // "For host writers"): each server names its own.
        args->add_bool(PMIX_GROUP_FT_COLLECTIVE, true);
        if (!t.ended.empty()) {
            std::vector<pmix_proc_t> ended;
            for (const auto &k : t.ended) ended.push_back(proc_of(k));
            pmix_data_array_t darray{PMIX_PROC, ended.size(), ended.data()};
            args->load(PMIXPP_FENCE_ENDED, &darray, PMIX_DATA_ARRAY);
        }
    }
    if (local_status != PMIX_SUCCESS) {
        args->load(PMIX_LOCAL_COLLECTIVE_STATUS, &local_status, PMIX_STATUS);
    }
    return args;
}

void Collectives::tell_host_failed(const FenceTracker &t, pmix_status_t status) {
    if (t.kind != Collective::fence || t.host_called || host_->fence_nb == nullptr ||
        all_local(t.procs)) {
        return;
    }
    // The other servers' parts may be with the host already: this server's
    // part, with its status, lets the host end the fence everywhere instead
    // of waiting for a part that never comes (spec: PMIX_LOCAL_COLLECTIVE_STATUS).
    FailedFence f{status, {}};
    for (const auto &k : t.expected_local) {
        const ClientRecord *c = clients_.find_client(k);
        if (t.contributed.count(k) == 0 && c != nullptr && !c->gone()) f.latecomers.insert(k);
    }
    if (!f.latecomers.empty()) failed_[t.signature] = std::move(f);
    log()->info("server: fence {} ended here before its hand-over ({}): the host is told",
                t.signature, PMIx_Error_string(status));
    auto args = fence_args(t, status);
    call_host_modex(
        [this, args](pmix_modex_cbfunc_t cb, void *cbdata) {
            return host_->fence_nb(args->procs.data(), args->procs.size(), args->info_data(),
                                   args->info_size(), nullptr, 0, cb, cbdata);
        },
        [args](pmix_status_t, std::vector<std::uint8_t>) {});
}

void Collectives::complete_fence(std::uint64_t id, pmix_status_t status,
                                 const std::vector<std::uint8_t> &host_stream) {
    auto it = fences_.find(id);
    if (it == fences_.end()) return;  // already completed (timeout, lost participant)
    FenceTracker t = std::move(it->second);
    fences_.erase(it);
    if (t.timer != 0) ProgressEngine::instance().cancel(t.timer);
    if (t.kind == Collective::custom) {
        if (t.hooks && t.hooks->finished) t.hooks->finished(t, status);
        return;
    }
    if (t.kind != Collective::fence) {
        finish_connect(t, status);
        return;
    }

    std::vector<std::uint8_t> stream;  // the host's records
    if (status == PMIX_SUCCESS) {
        // Remote data fetched before this fence may have changed since (a Put and
        // Commit before it): later Gets of those procs must ask the host again.
        for (const auto &p : t.procs) remote_.forget_remote(key_of(p));
        std::vector<wire::ModexRecord> records;
        if (!wire::parse_records(host_stream, records)) {
            log()->error("server: the host's fence data for {} is not a modex record stream",
                         t.signature);
            status = PMIX_ERR_UNPACK_FAILURE;
        }
        for (auto &rec : records) {
            const ProcKey k = key_of(rec.proc);
            if (find_client(k) != nullptr) continue;  // our own client: sent its local blob
            auto st = store_->write(
                [&](mca::gds::Module &m) { return m.store_modex(rec.proc, as_bytes(rec.blob)); });
            if (!st.ok()) log()->warn("server: fence data of {}: {}", describe(k), st.message());
            wire::append_record(stream, rec.proc, rec.blob);
            remote_.keep_remote(k, std::move(rec.blob));
        }
    }
    if (status != PMIX_SUCCESS || !t.collect) {
        if (status != PMIX_SUCCESS) stream.clear();
        auto body = BodyWriter().i32(status).bytes(stream).take();
        for (const auto &[k, reply] : t.contributed) send_reply(reply, body);
        return;
    }
    // Each receiver gets the local participants' data it does not hold yet
    // (what they committed since it last received theirs: README "Fence"),
    // then the host's records: what a job committed long ago is not sent
    // again at every fence. Those that map the job's data segment read one
    // copy there (answer_in_shm); the others get theirs through the socket.
    const std::set<ProcKey> in_shm = answer_in_shm(t, stream);
    for (const auto &[k, reply] : t.contributed) {
        if (in_shm.count(k) != 0) continue;
        ClientRecord *receiver = find_client(k);
        std::vector<std::uint8_t> data;
        for (const auto &p : t.expected_local) {
            ClientRecord *c = find_client(p);
            if (p == k || c == nullptr || !c->committed) continue;
            if (receiver == nullptr) {
                wire::append_record(data, c->proc, c->local_blob, true);
                continue;
            }
            std::uint64_t &seen = receiver->seen[p];
            Modex::append_changes(data, *c, seen);
            seen = c->commit_seq;
        }
        data.insert(data.end(), stream.begin(), stream.end());
        send_reply(reply, BodyWriter().i32(status).bytes(data).take());
    }
}

std::set<ProcKey> Collectives::answer_in_shm(FenceTracker &t,
                                             const std::vector<std::uint8_t> &host_records) {
    if (t.shm_readers.empty() || t.procs.size() != 1 || t.procs[0].rank != PMIX_RANK_WILDCARD) {
        return {};
    }
    JobRecord *job = find_job(key_of(t.procs[0]).first);
    if (job == nullptr || !job->fence_data) return {};
    std::vector<std::pair<ProcKey, ClientRecord *>> readers;
    for (const auto &k : t.shm_readers) {
        ClientRecord *c = find_client(k);
        if (c == nullptr || !c->running() || k.first != job->nspace ||
            k.second >= job->fence_data->nprocs() || t.contributed.count(k) == 0) {
            continue;
        }
        readers.emplace_back(k, c);
    }
    // A reader has not read the data written before (several PMIx_Fence_nb
    // in flight): this fence's goes through the sockets.
    if (readers.empty() || !job->fence_data->idle()) return {};
    // One stream for every reader: each participant's changes since the
    // reader that holds the least of them last got them (a receiver merges
    // changes it already holds again, in order: the same values).
    std::vector<std::uint8_t> data;
    for (const auto &p : t.expected_local) {
        ClientRecord *c = find_client(p);
        if (c == nullptr || !c->committed) continue;
        std::uint64_t least = c->commit_seq;
        for (const auto &[k, r] : readers) {
            if (k == p) continue;
            auto it = r->seen.find(p);
            least = std::min(least, it == r->seen.end() ? 0 : it->second);
        }
        Modex::append_changes(data, *c, least);
    }
    data.insert(data.end(), host_records.begin(), host_records.end());
    std::uint64_t seq = 0;
    std::string error;
    if (!job->fence_data->write(data, seq, error)) {
        log()->warn("server: fence data of {} through the sockets: {}", job->nspace, error);
        return {};
    }
    std::set<ProcKey> answered;
    const auto body = BodyWriter()
                          .i32(PMIX_SUCCESS)
                          .bytes(std::vector<std::uint8_t>{})
                          .u64(seq)
                          .u64(data.size())
                          .take();
    for (const auto &[k, r] : readers) {
        for (const auto &p : t.expected_local) {
            ClientRecord *c = find_client(p);
            if (p != k && c != nullptr && c->committed) r->seen[p] = c->commit_seq;
        }
        job->fence_data->given(k.second, seq);
        send_reply(t.contributed.at(k), body);
        answered.insert(k);
    }
    return answered;
}

void Collectives::fail_fences_if(const std::function<bool(const FenceTracker &)> &doomed,
                                 bool tell_host) {
    std::vector<std::uint64_t> ids;
    for (const auto &[id, t] : fences_) {
        if (!t.host_called && doomed(t)) ids.push_back(id);
    }
    for (auto id : ids) {
        if (auto it = fences_.find(id); tell_host && it != fences_.end())
            tell_host_failed(it->second, PMIX_ERR_LOST_CONNECTION);
        complete_fence(id, PMIX_ERR_LOST_CONNECTION, {});
    }
}

void Collectives::fail_fences_of(const ProcKey &gone, bool contributed_too) {
    // Custom collectives whose service goes on without `gone`
    // (CollectiveHooks::departed), and fault-tolerant fences.
    std::vector<std::uint64_t> absorbed;
    for (auto &[id, t] : fences_) {
        if (t.host_called || !t.hooks || !t.hooks->departed || t.expected_local.count(gone) == 0 ||
            (!contributed_too && t.contributed.count(gone) != 0))
            continue;
        if (!t.hooks->departed(t, gone)) continue;
        t.expected_local.erase(gone);
        t.contributed.erase(gone);
        t.ended.insert(gone);
        absorbed.push_back(id);
    }
    for (auto id : absorbed) check_fence(id);
    fail_fences_if(
        [&](const FenceTracker &t) {
            return t.expected_local.count(gone) != 0 &&
                   (contributed_too || t.contributed.count(gone) == 0);
        },
        true);
}

void Collectives::fail_fences_naming(const std::string &nspace) {
    // The job is going: the host knows (no fence upcall for it).
    fail_fences_if(
        [&](const FenceTracker &t) {
            return std::any_of(t.procs.begin(), t.procs.end(),
                               [&](const pmix_proc_t &p) { return key_of(p).first == nspace; });
        },
        false);
}

// ---------------------------------------------------------------------------------------------
// shared-memory fences (wire/shm_fence.hpp)

void Collectives::offer_shm_fence(JobRecord &job) {
    std::string error;
    auto seg = wire::ShmFence::create(job.job_size, error);
    if (!seg) {
        log()->warn("server: no shared-memory fence for {}: {}", job.nspace, error);
        return;
    }
    std::unique_ptr<wire::ShmData> data;
    if (wire::ShmData::enabled()) {
        data = wire::ShmData::create(job.job_size, error);
        if (!data) log()->warn("server: no fence data segment for {}: {}", job.nspace, error);
    }
    pmix_info_t entries[2]{};
    std::strncpy(entries[0].key, wire::PMIXPP_FENCE_SHM_KEY, PMIX_MAX_KEYLEN);
    entries[0].value.type = PMIX_STRING;
    entries[0].value.data.string = const_cast<char *>(seg->name().c_str());
    if (data) {
        std::strncpy(entries[1].key, wire::PMIXPP_FENCE_DATA_KEY, PMIX_MAX_KEYLEN);
        entries[1].value.type = PMIX_STRING;
        entries[1].value.data.string = const_cast<char *>(data->name().c_str());
    }
    auto st = store_->write([&](mca::gds::Module &m) {
        return m.register_job(job.nspace, std::span<const pmix_info_t>(entries, data ? 2 : 1));
    });
    if (!st.ok()) {
        log()->warn("server: no shared-memory fence for {}: {}", job.nspace, st.message());
        return;
    }
    job.fence_shm = std::move(seg);
    job.fence_data = std::move(data);
    offer_fence_areas(job);
}

void Collectives::offer_fence_areas(JobRecord &job) {
    // One area per rank (wire::ShmArea), named from the fence segment: only
    // with fence data on and for jobs whose objects stay few.
    constexpr std::uint32_t kMaxAreas = 1024;
    if (!job.fence_data || job.job_size > kMaxAreas || !wire::ShmArea::enabled()) return;
    std::vector<std::unique_ptr<wire::ShmArea>> areas;
    std::string error;
    for (std::uint32_t r = 0; r < job.job_size; ++r) {
        auto a = wire::ShmArea::create(wire::ShmArea::name_for(job.fence_shm->name(), r), error);
        if (!a) {
            log()->warn("server: no fence areas for {}: {}", job.nspace, error);
            return;  // those created are removed with `areas`
        }
        areas.push_back(std::move(a));
    }
    pmix_info_t entry{};
    std::strncpy(entry.key, wire::PMIXPP_FENCE_AREAS_KEY, PMIX_MAX_KEYLEN);
    entry.value.type = PMIX_STRING;
    entry.value.data.string = const_cast<char *>(job.fence_shm->name().c_str());
    auto st = store_->write([&](mca::gds::Module &m) {
        return m.register_job(job.nspace, std::span<const pmix_info_t>(&entry, 1));
    });
    if (!st.ok()) {
        log()->warn("server: no fence areas for {}: {}", job.nspace, st.message());
        return;
    }
    job.fence_areas = std::move(areas);
}

bool Collectives::join_shm_fence(JobRecord &job, const ProcKey &me,
                                 const std::vector<pmix_proc_t> &procs, bool collect,
                                 std::uint32_t timeout, const PendingReply &reply) {
    if (!job.fence_shm || (collect && job.fence_areas.empty()) || procs.size() != 1 ||
        key_of(procs[0]) != ProcKey{me.first, PMIX_RANK_WILDCARD} ||
        me.second >= job.fence_shm->nprocs()) {
        return false;
    }
    if (std::any_of(job.shm_waiters.begin(), job.shm_waiters.end(),
                    [&](const auto &w) { return w.proc == me; })) {
        job.shm_deferred.push_back({me, collect, timeout, reply});
        return true;
    }
    wire::ShmFence::Arrival arrival;
    for (;;) {
        // A collecting fence: the server writes the client's area for it
        // (everything it committed: its commits came before this request on
        // the socket), then arrives in that generation.
        const std::uint32_t gen = job.fence_shm->current_gen();
        if (collect) publish_for(job, me, gen);
        pmix_status_t st = job.fence_shm->arrive(true, arrival, collect ? &gen : nullptr);
        if (st != PMIX_SUCCESS) {
            send_reply(reply, status_body(st));
            return true;
        }
        if (!arrival.stale) break;  // else a mend started another generation: write again
    }
    JobRecord::ShmWaiter w{arrival.gen, me, reply, 0, collect};
    if (!arrival.completed && timeout > 0) {
        const std::uint32_t gen = arrival.gen;
        w.timer = ProgressEngine::instance().after(std::chrono::seconds(timeout), [this, me, gen] {
            JobRecord *j = find_job(me.first);
            if (j == nullptr) return;
            auto it = std::find_if(j->shm_waiters.begin(), j->shm_waiters.end(),
                                   [&](const auto &x) { return x.gen == gen && x.proc == me; });
            if (it == j->shm_waiters.end()) return;
            it->timer = 0;
            if (j->fence_shm && j->fence_shm->withdraw(gen, true)) {
                log()->warn("server: fence of {} timed out", describe(me));
                send_reply(it->reply, status_body(PMIX_ERR_TIMEOUT));
                j->shm_waiters.erase(it);
            } else {
                answer_shm_waiters(*j);
            }
        });
    }
    job.shm_waiters.push_back(std::move(w));
    if (arrival.completed) answer_shm_waiters(job);  // this one and those the generation held
    return true;
}

void Collectives::answer_shm_waiters(JobRecord &job) {
    if (!job.fence_shm) return;
    const pmix_status_t broken = job.fence_shm->broken();
    const auto ok = BodyWriter().i32(PMIX_SUCCESS).bytes(std::vector<std::uint8_t>{}).take();
    std::erase_if(job.shm_waiters, [&](JobRecord::ShmWaiter &w) {
        const bool done = job.fence_shm->completed(w.gen);
        if (!done && broken == PMIX_SUCCESS) return false;
        if (w.timer != 0) ProgressEngine::instance().cancel(w.timer);
        send_reply(w.reply, !done       ? status_body(broken)
                            : w.collect ? areas_body(job, w.gen, w.proc.second)
                                        : ok);
        return true;
    });
    if (!job.shm_deferred.empty()) {
        // Their previous fences are answered: they join now (or get the broken status).
        auto deferred = std::move(job.shm_deferred);
        job.shm_deferred.clear();
        for (auto &d : deferred) {
            const std::vector<pmix_proc_t> all{proc_of({d.proc.first, PMIX_RANK_WILDCARD})};
            join_shm_fence(job, d.proc, all, d.collect, d.timeout, d.reply);
        }
    }
}

void Collectives::publish_for(JobRecord &job, const ProcKey &proc, std::uint32_t gen) {
    ClientRecord *c = find_client(proc);
    if (c == nullptr || proc.second >= job.fence_areas.size()) return;
    // What it committed since the server last wrote its area, when the
    // deltas reach back so far and are smaller than half the whole (the rule
    // of Modex::append_changes), else the whole: readers holding less ask
    // the server (client/fence_shm.cpp).
    std::vector<std::uint8_t> data;
    std::uint64_t from = 0;
    std::uint32_t flags = wire::ShmArea::kWhole;
    const std::uint64_t since = c->area_to;
    if (c->committed && since > 0 && since <= c->commit_seq && !c->local_deltas.empty() &&
        c->local_deltas.front().first <= since + 1) {
        const auto first =
            c->local_deltas.end() - static_cast<std::ptrdiff_t>(c->commit_seq - since);
        std::size_t bytes = 0;
        for (auto it = first; it != c->local_deltas.end(); ++it) bytes += it->second.size();
        if (2 * bytes < c->local_blob.size()) {
            data.reserve(bytes);
            for (auto it = first; it != c->local_deltas.end(); ++it)
                data.insert(data.end(), it->second.begin(), it->second.end());
            from = since;
            flags = 0;
        }
    }
    if (flags == wire::ShmArea::kWhole && c->committed) data = c->local_blob;
    std::string error;
    if (!job.fence_areas[proc.second]->publish(gen, from, c->commit_seq, flags, data, error)) {
        log()->warn("server: fence area of {}: {} (its peers ask for its data)", describe(proc),
                    error);
    }
    c->area_to = c->commit_seq;
}

std::vector<std::uint8_t> Collectives::areas_body(JobRecord &job, std::uint32_t gen,
                                                  std::uint32_t receiver) {
    // What a proxied participant of a collecting generation reads: every
    // other rank's area for `gen`, as the client reads them itself
    // (client/fence_shm.cpp). Still intact: their writers pass `gen` + 1
    // only once this receiver, answered now, arrives in it.
    BodyWriter w;
    w.i32(PMIX_SUCCESS).bytes(std::vector<std::uint8_t>{}).u64(0);
    std::vector<std::pair<std::uint32_t, wire::ShmArea::View>> views;
    for (std::uint32_t r = 0; r < job.fence_areas.size(); ++r) {
        if (r == receiver) continue;
        wire::ShmArea::View v;
        std::string error;
        if (!job.fence_areas[r]->read(gen, v, error)) {
            log()->warn("server: fence area {} of {}: {}", r, job.nspace, error);
            v.published = true;
            v.flags = wire::ShmArea::kAbsent;
            v.data = {};
        }
        if (v.published) views.emplace_back(r, v);
    }
    w.u32(static_cast<std::uint32_t>(views.size()));
    for (const auto &[r, v] : views) {
        w.u32(r).u64(v.from).u64(v.to).u32(v.flags).bytes(v.data);
    }
    return w.take();
}

void Collectives::break_shm_fence(const std::string &nspace, pmix_status_t status) {
    JobRecord *job = find_job(nspace);
    if (job == nullptr || !job->fence_shm) return;
    job->fence_shm->break_with(status);
    answer_shm_waiters(*job);
}

// A client that finalized (or was lost) and connects again: once every
// participant of the job is connected or yet to connect, fences in the
// segment work again, as over the socket (join_collective looks at the
// participants' states when a fence starts).
void Collectives::mend_shm_fence(const std::string &nspace) {
    JobRecord *job = find_job(nspace);
    if (job == nullptr || !job->fence_shm || job->fence_shm->broken() == PMIX_SUCCESS) return;
    if (job->clients.size() != job->fence_shm->nprocs()) return;  // one was deregistered
    for (const auto &[rank, c] : job->clients) {
        if (c.gone()) return;
    }
    job->fence_shm->mend();
    log()->debug("server: fence segment of {} mended: every participant is back", nspace);
}

void Collectives::handle_fence_shm_done(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::uint32_t gen = 0;
    r.u32(gen);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed fence_shm_done");
        return;
    }
    if (JobRecord *job = find_job(client->proc.nspace)) answer_shm_waiters(*job);
}

}  // namespace pmixpp::server
