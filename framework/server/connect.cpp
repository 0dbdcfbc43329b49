// PMIx_Connect / PMIx_Disconnect on the server side: collectives over procs
// that may span nspaces, gathered among the local clients by the fence
// machinery of collectives.cpp (join_collective / check_fence / complete_fence).
//
// When every participant is a local client the library completes the
// collective itself; otherwise the host's connect / disconnect upcall gets
// one call per collective once all local participants joined (as ORTE
// expects: its connect only registers the nspaces it did not know, it is not
// a barrier, OPENMPI-CONTRACT §2.6). A completed connect answers each local
// participant with the job blob of every participating nspace registered
// here and the committed data of the participants this server holds, so a
// client reads the other job's job-level info and keys from its own store.
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstring>

#include "mca/logging.hpp"
#include "server/collectives.hpp"
#include "server/upcalls.hpp"
#include "wire/codec.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;

namespace {

auto log() {
    return mca::framework_logger("server");
}

bool has_key(const wire::InfoArray *info, const char *key) {
    return info != nullptr && find_info(info->span(), key) != nullptr;
}

struct CollectiveRequest {
    std::vector<pmix_proc_t> procs;
    std::uint32_t timeout = 0;
    std::shared_ptr<wire::InfoArray> info;
};

// Reads procs, u32 timeout, infos. False: malformed (or an empty procs list,
// which the client never sends).
bool read_request(Frame &frame, CollectiveRequest &req) {
    BodyReader r(frame.body);
    wire::InfoArray info;
    r.procs(req.procs);
    r.u32(req.timeout);
    r.infos(info);
    req.info = std::make_shared<wire::InfoArray>(std::move(info));
    return r.finished() && !req.procs.empty();
}

}  // namespace

void Collectives::handle_connect(Channel &ch, Frame &frame, ClientRecord *client) {
    CollectiveRequest req;
    if (!read_request(frame, req) || client == nullptr) {
        ch.close("malformed connect request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    const ProcKey me = key_of(client->proc);
    if (FenceTracker *t = join_collective(Collective::connect, std::move(req.procs), me, reply,
                                          req.timeout, true, req.info)) {
        check_fence(t->id);
    }
}

void Collectives::handle_disconnect(Channel &ch, Frame &frame, ClientRecord *client) {
    CollectiveRequest req;
    if (!read_request(frame, req) || client == nullptr) {
        ch.close("malformed disconnect request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    const ProcKey me = key_of(client->proc);
    if (!may_disconnect(me, req.procs)) {
        send_reply(reply, status_body(PMIX_ERR_INVALID_OPERATION));
        return;
    }
    if (FenceTracker *t = join_collective(Collective::disconnect, std::move(req.procs), me, reply,
                                          req.timeout, false, req.info)) {
        check_fence(t->id);
    }
}

// The spec's PMIX_ERR_INVALID_OPERATION: the procs were never connected. We
// check by nspace (every named nspace is the caller's own, one it connected
// to, its parent or a job it spawned), so that a disconnect naming the
// processes differently from the connect (wildcard vs. ranks) still works.
bool Collectives::may_disconnect(const ProcKey &me, const std::vector<pmix_proc_t> &procs) const {
    auto it = connected_.find(me);
    auto parent = spawned_by_.find(me.first);
    for (const auto &p : procs) {
        const std::string ns = key_of(p).first;
        if (ns == me.first) continue;
        if (it != connected_.end() && it->second.count(ns) != 0) continue;
        if (parent != spawned_by_.end() && parent->second == ns) continue;
        if (auto child = spawned_by_.find(ns);
            child != spawned_by_.end() && child->second == me.first)
            continue;
        return false;
    }
    return true;
}

void Collectives::call_host_connect(FenceTracker &t) {
    const bool connect = t.kind == Collective::connect;
    auto fn = connect ? host_->connect : host_->disconnect;
    const std::uint64_t id = t.id;
    if (fn == nullptr) {
        log()->warn("server: {} spans other servers and the host has no {} upcall", t.signature,
                    connect ? "connect" : "disconnect");
        complete_fence(id, PMIX_ERR_NOT_SUPPORTED, {});
        return;
    }
    t.host_called = true;
    // The client's directives go up as given (the spec requires passing them
    // through), plus our timeout when the client gave none itself.
    auto args = std::make_shared<HostArgs>();
    args->procs = t.procs;
    for (const auto &i : t.info ? t.info->span() : std::span<const pmix_info_t>{}) {
        args->info.emplace_back();
        std::memset(&args->info.back(), 0, sizeof(pmix_info_t));
        if (wire::copy(PMIX_INFO, &args->info.back(), &i, 1) != PMIX_SUCCESS) args->info.pop_back();
    }
    if (t.timeout_s > 0 && !has_key(t.info.get(), PMIX_TIMEOUT)) {
        args->add_int(PMIX_TIMEOUT, static_cast<int>(t.timeout_s));
    }
    call_host_op(
        [fn, args](pmix_op_cbfunc_t cb, void *cbdata) {
            return fn(args->procs.data(), args->procs.size(), args->info_data(), args->info_size(),
                      cb, cbdata);
        },
        [this, id, args](pmix_status_t status) { complete_fence(id, status, {}); });
}

void Collectives::finish_connect(const FenceTracker &t, pmix_status_t status) {
    const bool connect = t.kind == Collective::connect;
    if (status != PMIX_SUCCESS) {
        log()->warn("server: {} failed: {}", t.signature, PMIx_Error_string(status));
        for (const auto &[k, reply] : t.contributed) send_reply(reply, status_body(status));
        return;
    }
    std::set<std::string> nspaces;
    for (const auto &p : t.procs) nspaces.insert(key_of(p).first);
    for (const auto &[k, reply] : t.contributed) {
        auto &peers = connected_[k];
        for (const auto &ns : nspaces) {
            if (ns == k.first) continue;
            if (connect) {
                peers.insert(ns);
            } else {
                peers.erase(ns);
            }
        }
    }
    if (!connect) {
        for (const auto &[k, reply] : t.contributed) send_reply(reply, status_body(PMIX_SUCCESS));
        return;
    }
    // Every participant's committed data we hold: local clients' LOCAL blobs
    // and whatever a host fence or direct modex gave us for remote ones.
    std::vector<std::uint8_t> stream;
    for (const auto &[ns, job] : clients_.jobs()) {
        if (nspaces.count(ns) == 0) continue;
        for (const auto &[rank, c] : job.clients) {
            const bool named = std::any_of(t.procs.begin(), t.procs.end(), [&](const auto &p) {
                const ProcKey k = key_of(p);
                return k.first == ns && (k.second == PMIX_RANK_WILDCARD || k.second == rank);
            });
            if (named && c.committed) wire::append_record(stream, c.proc, c.local_blob);
        }
    }
    for (const auto &[k, blob] : remote_.remote_blobs()) {
        if (nspaces.count(k.first) != 0 && find_client(k) == nullptr) {
            wire::append_record(stream, proc_of(k), blob);
        }
    }
    std::vector<std::pair<std::string, std::vector<std::uint8_t>>> blobs;
    for (const auto &ns : nspaces) {
        auto blob = job_blob_(ns);
        if (!blob.empty()) blobs.emplace_back(ns, std::move(blob));
    }
    for (const auto &[k, reply] : t.contributed) {
        BodyWriter w;
        std::uint32_t n = 0;
        for (const auto &[ns, blob] : blobs) n += ns != k.first ? 1 : 0;
        w.i32(PMIX_SUCCESS).u32(n);
        for (const auto &[ns, blob] : blobs) {
            if (ns != k.first) w.str(ns).bytes(blob);  // its own job info it has
        }
        send_reply(reply, w.bytes(stream).take());
    }
}

}  // namespace pmixpp::server
