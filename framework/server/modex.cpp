// The Modex service (modex.hpp): commit, get (direct modex), PMIx_server_dmodex_request.
//
// Get of a local peer: its last committed LOCAL blob (waiting for its commit
// unless PMIX_IMMEDIATE). Remote: from the blobs host fences and direct
// modex gave us, else the host's direct_modex upcall (answer: the record
// stream the remote server's PMIx_server_dmodex_request produced).
#include "server/modex.hpp"

#include <algorithm>

#include "mca/logging.hpp"
#include "runtime/progress.hpp"
#include "wire/codec.hpp"
#include "wire/commit_flags.hpp"
#include "wire/message.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using runtime::ProgressEngine;
using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;

namespace {

auto log() {
    return mca::framework_logger("server");
}

}  // namespace

Modex::Modex(ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
             JobBlobFn job_blob)
    : clients_(clients), host_(host), job_blob_(std::move(job_blob)) {
    requests.add(wire::Command::commit, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_commit(ch, frame, client);
    });
    requests.add(wire::Command::get, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_get(ch, frame, client);
    });
}

void Modex::clear() {
    remote_blobs_.clear();
    pending_->clear();
    waiters_.clear();
    for (auto &[nspace, waiting] : deferred_) {
        for (const auto &d : waiting) d.cbfunc(PMIX_ERR_NOT_FOUND, nullptr, 0, d.cbdata);
    }
    deferred_.clear();
    store_.reset();
}

std::size_t Modex::waiting_on(const ProcKey &client) const {
    auto it = waiters_.find(client);
    return it == waiters_.end() ? 0 : it->second.size();
}

void Modex::client_departed(const ProcKey &client, Departure) {
    // A process that connects again with this rank starts with an empty store.
    if (ClientRecord *c = clients_.find_client(client)) c->seen.clear();
    // Get / dmodex requests waiting for its commit: answered now (NOT_FOUND
    // unless it committed before).
    run_waiters(client);
}

void Modex::job_deregistered(const std::string &nspace) {
    std::erase_if(remote_blobs_, [&](const auto &e) { return e.first.first == nspace; });
    pending_->forget(nspace);
}

void Modex::job_registered(const std::string &nspace) {
    if (auto it = deferred_.find(nspace); it != deferred_.end()) {
        auto waiting = std::move(it->second);
        deferred_.erase(it);
        for (const auto &d : waiting) dmodex_request(d.proc, d.cbfunc, d.cbdata);
    }
}

void Modex::keep_remote(const ProcKey &proc, std::vector<std::uint8_t> blob) {
    remote_blobs_[proc] = std::move(blob);
}

void Modex::forget_remote(const ProcKey &proc) {
    std::erase_if(remote_blobs_, [&](const auto &entry) {
        return entry.first.first == proc.first &&
               (proc.second == PMIX_RANK_WILDCARD || entry.first.second == proc.second);
    });
}

// ---------------------------------------------------------------------------------------------
// commit

void Modex::handle_commit(Channel &ch, Frame &frame, ClientRecord *client) {
    // bytes local, bytes remote[, u8 flags[, bytes global]] (wire/commit_flags.hpp):
    // without the flags, a client that never marks a commit `whole`.
    BodyReader r(frame.body);
    std::vector<std::uint8_t> local, remote, global;
    std::uint8_t flags = 0;
    r.bytes(local);
    r.bytes(remote);
    const bool legacy = r.finished();
    std::uint32_t count = 1;
    if (!legacy) r.u8(flags);
    if (!legacy && (flags & wire::kCommitGlobal) != 0) r.bytes(global);
    if (!legacy && (flags & wire::kCommitCount) != 0 && !r.u32(count)) count = 0;
    if (!r.finished() || client == nullptr || (flags & ~wire::kCommitKnownFlags) != 0 ||
        count == 0) {
        log()->warn("server: malformed commit from {}: its connection closes",
                    client != nullptr ? describe(key_of(client->proc)) : std::string("a peer"));
        ch.close("malformed commit");
        return;
    }
    commit(*client, std::move(local), std::move(remote), std::move(global),
           (flags & wire::kCommitWhole) != 0, legacy, count);
}

void Modex::commit(ClientRecord &c, std::vector<std::uint8_t> local,
                   std::vector<std::uint8_t> remote, std::vector<std::uint8_t> global, bool whole,
                   bool legacy, std::uint32_t count) {
    // Not decoded here (issue 17 item 1: with the fences through shared
    // memory, decoding every commit's two parts kept the server busy long
    // after the fences, and a Finalize waited behind it). The datastore's
    // readers decode a process when they ask for it (pending()); its GLOBAL
    // values once when the client sent them once.
    // Each audience's blob: its own values, then the GLOBAL ones (blobs
    // concatenate); the pending copies take the parts as they came, the
    // GLOBAL one moved (decoded once).
    std::vector<wire::ModexRecord> records;
    const bool fresh = whole || !c.committed;
    if (store_) {
        records.push_back(wire::ModexRecord{c.proc, local, fresh});
        if (!remote.empty()) records.push_back(wire::ModexRecord{c.proc, remote, false});
    }
    if (!global.empty()) {
        local.insert(local.end(), global.begin(), global.end());
        remote.insert(remote.end(), global.begin(), global.end());
        if (store_) records.push_back(wire::ModexRecord{c.proc, std::move(global), false});
    }
    if (store_) pending_->add(std::move(records), pmix_proc_t{}, store_);
    record_commit(c, std::move(local), std::move(remote), whole, count);
    if (legacy) compact(c, true);
}

void Modex::record_commit(ClientRecord &c, std::vector<std::uint8_t> local,
                          std::vector<std::uint8_t> remote, bool whole, std::uint32_t count) {
    // A commit's blobs hold what changed since the client's previous commit
    // (gds assemble_modex_pending; a whole history from an older client is
    // fine too): they are appended, and a receiver merges them in order.
    // A `whole` one holds everything the client committed: it replaces them
    // (the client sends one once its changes add up to what it last sent
    // whole: client.cpp, Client::commit), so re-Put values do not pile up.
    // The commits a `whole` one stands for were never sent (held back by the
    // client): numbered all the same, as the fence area counts them.
    c.commit_seq += count;
    if (count > 1) {
        // On the gds logger (gds_base_verbose 5), with the fence data's lines.
        mca::framework_logger("gds")->debug(
            "server: a commit of {} stands for {} commits (held back by the client)",
            describe(key_of(c.proc)), count);
    }
    if (!c.committed || whole) {
        // The first commit of this connection life starts afresh.
        c.local_blob = std::move(local);
        c.remote_blob = std::move(remote);
        c.local_deltas.clear();
        c.local_deltas_bytes = 0;
        c.compacted_bytes = c.local_blob.size() + c.remote_blob.size();
    } else {
        c.local_blob.insert(c.local_blob.end(), local.begin(), local.end());
        c.remote_blob.insert(c.remote_blob.end(), remote.begin(), remote.end());
        c.local_deltas_bytes += local.size();
        c.local_deltas.emplace_back(c.commit_seq, std::move(local));
        compact(c, false);
    }
    c.committed = true;
    c.commits_received += count;
    run_waiters(key_of(c.proc));
}

void Modex::compact(ClientRecord &c, bool legacy) {
    // A client that never sends `whole`: once re-Put values have doubled
    // the concatenated blobs, rebuild them from the datastore (amortised:
    // O(1) per byte), its pending commits decoded first.
    if (legacy && store_ &&
        c.local_blob.size() + c.remote_blob.size() > 2 * c.compacted_bytes + 4096) {
        const pmix_proc_t proc = c.proc;
        pending_->materialize(proc, store_);
        auto local = store_->read(
            [&](const mca::gds::Module &m) { return m.assemble_modex(proc, PMIX_LOCAL); });
        auto remote = store_->read(
            [&](const mca::gds::Module &m) { return m.assemble_modex(proc, PMIX_REMOTE); });
        if (local && remote) {
            c.local_blob.assign(reinterpret_cast<const std::uint8_t *>(local.value().data()),
                                reinterpret_cast<const std::uint8_t *>(local.value().data()) +
                                    local.value().size());
            c.remote_blob.assign(reinterpret_cast<const std::uint8_t *>(remote.value().data()),
                                 reinterpret_cast<const std::uint8_t *>(remote.value().data()) +
                                     remote.value().size());
            c.compacted_bytes = c.local_blob.size() + c.remote_blob.size();
        }
    }
    // Deltas adding up to more than the whole are never worth sending.
    while (!c.local_deltas.empty() && c.local_deltas_bytes > c.local_blob.size()) {
        c.local_deltas_bytes -= c.local_deltas.front().second.size();
        c.local_deltas.erase(c.local_deltas.begin());
    }
}

void Modex::append_changes(std::vector<std::uint8_t> &stream, const ClientRecord &c,
                           std::uint64_t seen) {
    if (seen >= c.commit_seq) return;  // the receiver holds it all
    if (!c.local_deltas.empty() && c.local_deltas.front().first <= seen + 1) {
        // The deltas are contiguous up to commit_seq: those after `seen` are
        // the last (commit_seq - seen), found without walking the history
        // (a job that commits a new key every round keeps them all: walking
        // them made every fence cost grow with the rounds, issue 19 item 7).
        const auto first = c.local_deltas.end() - static_cast<std::ptrdiff_t>(c.commit_seq - seen);
        std::size_t bytes = 0;
        for (auto it = first; it != c.local_deltas.end(); ++it) bytes += it->second.size();
        // Changes of at least half the whole go as the whole, marked so: a
        // client drops that peer's older data it has not decoded yet (lazy
        // decode, gds/lazy_modex.hpp), so re-Put values do not pile up.
        // At most twice the changes travel; a new key per round stays a delta.
        if (2 * bytes < c.local_blob.size()) {
            std::vector<std::uint8_t> changes;
            changes.reserve(bytes);
            for (auto it = first; it != c.local_deltas.end(); ++it)
                changes.insert(changes.end(), it->second.begin(), it->second.end());
            wire::append_record(stream, c.proc, changes);
            return;
        }
    }
    wire::append_record(stream, c.proc, c.local_blob, true);
}

void Modex::run_waiters(const ProcKey &client) {
    auto it = waiters_.find(client);
    if (it == waiters_.end()) return;
    auto waiters = std::move(it->second);
    waiters_.erase(it);
    for (auto &w : waiters) w();
}

bool Modex::commit_in_flight(const ClientRecord &c) {
    JobRecord *job = clients_.find_job(c.proc.nspace);
    return job != nullptr && job->fence_shm &&
           job->fence_shm->commits(c.proc.rank) > c.commits_received;
}

void Modex::ask_for_commits(ClientRecord &c) {
    // The flag first: a commit the client makes after it read the flag goes
    // out at once; one it held before goes at this message.
    JobRecord *job = clients_.find_job(c.proc.nspace);
    if (job == nullptr || c.proc.rank >= job->fence_areas.size()) return;
    job->fence_areas[c.proc.rank]->want_commits();
    if (c.channel && c.channel->is_open()) {
        (void)c.channel->send(static_cast<std::uint16_t>(wire::Command::commit_flush), 0, 0,
                              std::vector<std::uint8_t>{});
    }
}

// ---------------------------------------------------------------------------------------------
// get (direct modex)

void Modex::reply_get_local(const PendingReply &reply, const ProcKey &target, bool wait,
                            std::uint32_t timeout_s) {
    ClientRecord *c = clients_.find_client(target);
    if (c == nullptr) {
        send_reply(reply, status_body(PMIX_ERR_NOT_FOUND));
        return;
    }
    if (c->running() && commit_in_flight(*c)) {
        // It committed before a shared-memory fence that the requester has
        // passed: answer with that commit, not an older one.
        ask_for_commits(*c);
        waiters_[target].push_back([this, reply, target, wait, timeout_s] {
            reply_get_local(reply, target, wait, timeout_s);
        });
        return;
    }
    if (c->committed) {
        std::vector<std::uint8_t> stream;
        wire::append_record(stream, c->proc, c->local_blob);
        send_reply(
            reply,
            BodyWriter().i32(PMIX_SUCCESS).bytes(std::vector<std::uint8_t>{}).bytes(stream).take());
        return;
    }
    if (!wait || c->gone()) {
        send_reply(reply, status_body(PMIX_ERR_NOT_FOUND));
        return;
    }
    ask_for_commits(*c);  // its next commit, when it makes one
    auto done = std::make_shared<bool>(false);
    std::uint64_t timer = 0;
    if (timeout_s > 0) {
        timer = ProgressEngine::instance().after(std::chrono::seconds(timeout_s), [reply, done] {
            if (*done) return;
            *done = true;
            send_reply(reply, status_body(PMIX_ERR_TIMEOUT));
        });
    }
    waiters_[target].push_back([this, reply, target, done, timer] {
        if (*done) return;
        *done = true;
        if (timer != 0) ProgressEngine::instance().cancel(timer);
        reply_get_local(reply, target, false, 0);
    });
}

void Modex::handle_get(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    pmix_proc_t proc{};
    std::string key;
    bool immediate = false;
    std::uint32_t timeout = 0;
    wire::InfoArray info;
    r.proc(proc);
    r.str(key);
    r.boolean(immediate);
    r.u32(timeout);
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed get request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    const ProcKey target = key_of(proc);
    const ProcKey me = key_of(client->proc);
    const std::vector<std::uint8_t> none;

    if (target.second == PMIX_RANK_WILDCARD || target.second == PMIX_RANK_UNDEF) {
        auto blob =
            target.first == me.first ? std::vector<std::uint8_t>{} : job_blob_(target.first);
        if (blob.empty()) {
            send_reply(reply, status_body(PMIX_ERR_NOT_FOUND));
        } else {
            send_reply(reply, BodyWriter().i32(PMIX_SUCCESS).bytes(blob).bytes(none).take());
        }
        return;
    }
    if (clients_.find_client(target) != nullptr) {
        reply_get_local(reply, target, !immediate, timeout);
        return;
    }
    const auto jb =
        target.first == me.first ? std::vector<std::uint8_t>{} : job_blob_(target.first);
    if (auto it = remote_blobs_.find(target); it != remote_blobs_.end()) {
        std::vector<std::uint8_t> stream;
        wire::append_record(stream, proc, it->second);
        send_reply(reply, BodyWriter().i32(PMIX_SUCCESS).bytes(jb).bytes(stream).take());
        return;
    }
    if (host_->direct_modex == nullptr) {
        send_reply(reply, status_body(PMIX_ERR_NOT_FOUND));
        return;
    }
    auto args = std::make_shared<HostArgs>();
    args->procs.push_back(proc);
    if (!key.empty()) args->add_string(PMIX_REQUIRED_KEY, key);
    if (timeout > 0) args->add_int(PMIX_TIMEOUT, static_cast<int>(timeout));
    call_host_modex(
        [this, args](pmix_modex_cbfunc_t cb, void *cbdata) {
            return host_->direct_modex(args->procs.data(), args->info_data(), args->info_size(), cb,
                                       cbdata);
        },
        [this, reply, target, args, jb](pmix_status_t status, std::vector<std::uint8_t> payload) {
            std::vector<wire::ModexRecord> records;
            if (status == PMIX_SUCCESS && !wire::parse_records(payload, records)) {
                log()->error("server: the host's direct-modex data for {} is malformed",
                             describe(target));
                status = PMIX_ERR_UNPACK_FAILURE;
            }
            if (status != PMIX_SUCCESS) {
                send_reply(reply, status_body(status));
                return;
            }
            std::vector<std::uint8_t> stream;
            for (auto &rec : records) {
                wire::append_record(stream, rec.proc, rec.blob);
                keep_remote(key_of(rec.proc), std::move(rec.blob));
            }
            send_reply(reply, BodyWriter().i32(PMIX_SUCCESS).bytes(jb).bytes(stream).take());
        });
}

// ---------------------------------------------------------------------------------------------
// PMIx_server_dmodex_request

void Modex::dmodex_request(const pmix_proc_t &proc, pmix_dmodex_response_fn_t cbfunc,
                           void *cbdata) {
    const ProcKey key = key_of(proc);
    auto respond = [this, key, cbfunc, cbdata] {
        ClientRecord *c = clients_.find_client(key);
        if (c == nullptr || !c->committed) {
            cbfunc(PMIX_ERR_NOT_FOUND, nullptr, 0, cbdata);
            return;
        }
        std::vector<std::uint8_t> stream;
        wire::append_record(stream, c->proc, c->remote_blob);
        // Ours: the host copies what it keeps before returning.
        cbfunc(PMIX_SUCCESS, reinterpret_cast<char *>(stream.data()), stream.size(), cbdata);
    };
    ClientRecord *c = clients_.find_client(key);
    if (const JobRecord *job = clients_.find_job(key.first);
        c == nullptr && (job == nullptr || !job->registered)) {
        // Another node asks before our host registered this job here.
        deferred_[key.first].push_back({proc, cbfunc, cbdata});
        return;
    }
    if (c != nullptr && c->running() && commit_in_flight(*c)) {
        // A commit counted and not received (held back): that one, not an older one.
        ask_for_commits(*c);
        waiters_[key].push_back(respond);
        return;
    }
    if (c == nullptr || c->committed || c->gone()) {
        respond();
        return;
    }
    ask_for_commits(*c);
    waiters_[key].push_back(respond);
}

}  // namespace pmixpp::server
