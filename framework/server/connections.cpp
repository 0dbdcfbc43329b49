#include "server/connections.hpp"

#include <event2/event.h>

#include <algorithm>
#include <chrono>

#include <spdlog/fmt/fmt.h>

#include "mca/logging.hpp"
#include "runtime/progress.hpp"
#include "server/peer_identity.hpp"
#include "wire/protocol.hpp"

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

// Compares the whole of both secrets whatever differs first, so that the
// time taken does not tell how much of a guess was right.
bool same_secret(const std::string &given, const std::string &expected) {
    unsigned char diff = given.size() == expected.size() ? 0 : 1;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        diff |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
    }
    return diff == 0;
}

// How long an accepted connection may stay silent before its handshake.
constexpr std::chrono::seconds kHandshakeTimeout{30};
// Out of descriptors: the first retry of accept, doubled up to the last.
constexpr std::chrono::milliseconds kFirstAcceptRetry{10};
constexpr std::chrono::milliseconds kLastAcceptRetry{1000};

}  // namespace

Connections::Connections(ClientTable &clients, HostUpcalls &host, RequestTable &requests,
                         const pmix_proc_t &self, ConnectionHooks hooks)
    : clients_(clients), host_(host), requests_(requests), self_(self), hooks_(std::move(hooks)) {
    requests.add(Command::handshake,
                 [this](auto &ch, auto &f, auto *c) { handle_handshake(ch, f, c); });
    requests.add(Command::finalize,
                 [this](auto &ch, auto &f, auto *c) { handle_finalize(ch, f, c); });
    requests.add(Command::abort, [this](auto &ch, auto &f, auto *c) { handle_abort(ch, f, c); });
}

// ---------------------------------------------------------------------------------------------
// listeners

mca::Status Connections::listen(ptl_base::Transports &transports, std::span<const pmix_info_t> info,
                                const std::string &server_nspace) {
    auto &engine = ProgressEngine::instance();
    for (auto *ptl : transports.modules()) {
        auto opened = transports.listen(*ptl, info);
        if (!opened) {
            close_all();
            return opened.status();
        }
        for (auto &listener : opened.value()) {
            auto rec = std::make_unique<ListenerRecord>();
            rec->owner = this;
            uris_.push_back({ptl->priority(), listener->uri()});
            rec->listener = std::move(listener);
            rec->ev = event_new(engine.base(), rec->listener->fd(), EV_READ | EV_PERSIST,
                                &Connections::on_accept, rec.get());
            event_add(rec->ev, nullptr);
            log()->info("server {}: listening on {}", server_nspace, rec->listener->uri());
            listeners_.push_back(std::move(rec));
        }
    }
    std::stable_sort(uris_.begin(), uris_.end(),
                     [](const auto &a, const auto &b) { return a.first > b.first; });
    if (listeners_.empty()) {
        close_all();
        std::string names;
        for (const auto &n : transports.names()) names += (names.empty() ? "" : ", ") + n;
        return mca::Status(PMIX_ERR_NOT_AVAILABLE,
                           "server: no transport opened a listener (modules: " + names + ")");
    }
    return mca::Status::success();
}

std::vector<std::string> Connections::uris() const {
    std::vector<std::string> out;
    for (const auto &[prio, uri] : uris_) out.push_back(uri);
    return out;
}

void Connections::close_all() {
    auto channels = std::move(channels_);
    channels_.clear();
    for (auto &[ptr, entry] : channels) entry.first->close("server finalizing");
    for (auto &rec : listeners_) {
        if (rec->retry_timer != 0) ProgressEngine::instance().cancel(rec->retry_timer);
        if (rec->ev != nullptr) event_free(rec->ev);
    }
    listeners_.clear();
    uris_.clear();
}

void Connections::on_accept(int, short, void *arg) {
    auto *rec = static_cast<ListenerRecord *>(arg);
    rec->owner->accept_all(*rec);
}

void Connections::accept_all(ListenerRecord &rec) {
    for (;;) {
        auto accepted = rec.listener->accept();
        if (!accepted) {
            const pmix_status_t code = accepted.status().code();
            if (code == PMIX_ERR_OUT_OF_RESOURCE) {
                pause_accepting(rec, accepted.status().message());
                return;
            }
            if (code == PMIX_ERR_WOULD_BLOCK && rec.exhausted) {
                // Every pending connection was taken: the episode is over.
                log()->info("server: accepting on {} again ({} attempts found no descriptor)",
                            rec.listener->uri(), rec.failed_attempts);
                rec.exhausted = false;
                rec.failed_attempts = 0;
            } else if (code != PMIX_ERR_WOULD_BLOCK) {
                log()->warn("server: accept on {} failed: {}", rec.listener->uri(),
                            accepted.status().message());
            }
            return;
        }
        auto ch = Channel::open(
            std::move(accepted).value(),
            [this](Channel &c, Frame &&f) { on_frame(c, std::move(f)); },
            [this](Channel &c, const std::string &reason) { on_close(c, reason); });
        if (!ch) continue;
        // Until its handshake succeeds a peer is held to the tight limits:
        // checked on each header, before its body is buffered or inflated.
        ch->set_receive_limits(wire::FrameLimits::before_handshake());
        log()->debug("server: accepted {}", ch->describe_peer());
        channels_[ch.get()] = {ch, Peer{}};
        std::weak_ptr<Channel> weak = ch;
        ProgressEngine::instance().after(kHandshakeTimeout, [this, weak] {
            auto c = weak.lock();
            if (!c) return;
            auto it = channels_.find(c.get());
            if (it != channels_.end() && !it->second.second.authenticated) {
                c->close("no handshake within " + std::to_string(kHandshakeTimeout.count()) + " s");
            }
        });
    }
}

void Connections::pause_accepting(ListenerRecord &rec, const std::string &why) {
    ++rec.failed_attempts;
    if (!rec.exhausted) {
        // Once per episode: a peer holding many connections must not fill the log.
        rec.exhausted = true;
        rec.backoff = kFirstAcceptRetry;
        log()->warn(
            "server: {}; accepting on {} pauses until a connection closes (retried "
            "every {} ms at most)",
            why, rec.listener->uri(), kLastAcceptRetry.count());
    } else {
        rec.backoff = std::min(rec.backoff * 2, kLastAcceptRetry);
    }
    if (rec.paused) return;
    event_del(rec.ev);
    rec.paused = true;
    ListenerRecord *r = &rec;
    rec.retry_timer = ProgressEngine::instance().after(rec.backoff, [this, r] {
        r->retry_timer = 0;
        resume_accepting(*r);
    });
}

void Connections::resume_accepting(ListenerRecord &rec) {
    if (!rec.paused) return;
    if (rec.retry_timer != 0) ProgressEngine::instance().cancel(rec.retry_timer);
    rec.retry_timer = 0;
    rec.paused = false;
    event_add(rec.ev, nullptr);  // fires at once while connections are pending
}

void Connections::on_frame(Channel &ch, Frame &&frame) {
    auto it = channels_.find(&ch);
    if (it == channels_.end()) return;
    if (frame.is_reply()) {
        ch.close("protocol error: unexpected reply frame from a client");
        return;
    }
    if (!it->second.second.authenticated &&
        frame.command != static_cast<std::uint16_t>(Command::handshake)) {
        log()->warn("server: dropping {}: request {} before the handshake", ch.describe_peer(),
                    frame.command);
        ch.close("request before handshake");
        return;
    }
    const RequestHandler *handler = requests_.find(frame.command);
    if (handler == nullptr) {
        log()->warn("server: dropping {}: unknown command {}", ch.describe_peer(), frame.command);
        ch.close("unknown command");
        return;
    }
    const Peer &peer = it->second.second;
    (*handler)(ch, frame, peer.authenticated ? clients_.find_client(peer.proc) : nullptr);
}

void Connections::on_close(Channel &ch, const std::string &reason) {
    auto it = channels_.find(&ch);
    if (it == channels_.end()) return;
    auto keep = it->second.first;  // the channel outlives this function
    Peer peer = it->second.second;
    channels_.erase(it);
    // Its descriptor is free once `keep` goes: a paused listener may accept again.
    for (auto &rec : listeners_) resume_accepting(*rec);
    if (!peer.authenticated) {
        if (ch.close_cause() == wire::CloseCause::peer_closed ||
            ch.close_cause() == wire::CloseCause::refused) {
            log()->info("server: connection from {} closed before handshake: {}",
                        ch.describe_peer(), reason);
        } else {
            log()->warn("server: dropped connection from {}: {}", ch.describe_peer(), reason);
        }
        return;
    }
    ClientRecord *client = clients_.find_client(peer.proc);
    if (client == nullptr || client->channel.get() != &ch) return;
    client->channel.reset();
    if (client->departed) return;  // finalized (or deregistered) first
    if (!hooks_.is_tool(peer.proc)) {
        log()->warn("server: client {} lost its connection ({}) before finalizing",
                    describe(peer.proc), reason);
    }
    clients_.depart(peer.proc, Departure::lost);
}

// ---------------------------------------------------------------------------------------------
// departures: a deregistered client's channel closes

void Connections::client_departed(const ProcKey &key, Departure why) {
    ClientRecord *c = clients_.find_client(key);
    if (why == Departure::deregistered) {
        if (c != nullptr && c->channel) c->channel->close("client deregistered");
    }
}

// ---------------------------------------------------------------------------------------------
// helpers

void Connections::refuse(Channel &ch, const Frame &frame, pmix_status_t status,
                         const std::string &reason) {
    log()->warn("server: refused connection from {}: {} ({})", ch.describe_peer(), reason,
                PMIx_Error_string(status));
    ch.reply(frame, BodyWriter().i32(status).str(reason).take());
    ch.close_after_flush("handshake refused: " + reason, wire::CloseCause::refused);
}

void Connections::authenticate(Channel &ch, const ProcKey &key) {
    auto &peer = channels_[&ch].second;
    peer.authenticated = true;
    peer.proc = key;
    ch.set_receive_limits(wire::FrameLimits::process_wide());
}

// ---------------------------------------------------------------------------------------------
// handshake, finalize, abort

void Connections::handle_handshake(Channel &ch, Frame &frame, ClientRecord *) {
    BodyReader r(frame.body);
    std::uint32_t protocol = 0, uid = 0, gid = 0, pid = 0;
    std::uint8_t role = 0;
    pmix_proc_t proc{};
    std::string secret;
    wire::InfoArray info;
    r.u32(protocol);
    r.u8(role);
    r.proc(proc);
    r.str(secret);
    r.u32(uid);
    r.u32(gid);
    r.u32(pid);
    r.infos(info);
    if (!r.finished()) {
        log()->warn("server: dropping {}: malformed handshake", ch.describe_peer());
        ch.close("malformed handshake");
        return;
    }
    if (channels_[&ch].second.authenticated) {
        ch.close("second handshake on one connection");
        return;
    }
    if (protocol < wire::kOldestProtocolVersion || protocol > wire::kProtocolVersion) {
        refuse(ch, frame, PMIX_ERR_NOT_SUPPORTED,
               fmt::format("protocol version {}, this server speaks {} to {}", protocol,
                           wire::kOldestProtocolVersion, wire::kProtocolVersion));
        return;
    }
    if (role == static_cast<std::uint8_t>(wire::Role::tool)) {  // tool.cpp
        hooks_.tool_handshake(ch, frame, proc, uid, gid, pid, std::move(info));
        return;
    }
    if (role != static_cast<std::uint8_t>(wire::Role::client)) {
        refuse(ch, frame, PMIX_ERR_BAD_PARAM, fmt::format("unknown role {}", role));
        return;
    }
    const ProcKey key = key_of(proc);
    JobRecord *job = clients_.find_job(key.first);
    // The secret first, and one answer whether the namespace is unknown or
    // the secret wrong: a peer without the secret learns nothing about what
    // is registered here (docs/security.md). The log says which.
    if (job == nullptr || !same_secret(secret, job->secret)) {
        log()->warn("server: handshake from {} for {}: {}", ch.describe_peer(), describe(key),
                    job == nullptr ? "unknown namespace" : "wrong job secret");
        refuse(ch, frame, PMIX_ERR_INVALID_CRED, "unknown namespace or wrong job secret");
        return;
    }
    auto cit = job->clients.find(key.second);
    if (cit == job->clients.end()) {
        refuse(ch, frame, PMIX_ERR_NOT_FOUND,
               fmt::format("rank {} is not a registered client of {}", key.second, key.first));
        return;
    }
    ClientRecord &client = cit->second;
    // The OS's word on the peer's user: SO_PEERCRED (usock), the kernel's
    // socket table for a TCP peer on this host; a peer it cannot vouch for
    // (not on this host) is refused as a tool is.
    if (auto cred = ch.connection().peer_credentials()) {
        if (cred->uid != client.uid || cred->gid != client.gid) {
            refuse(ch, frame, PMIX_ERR_INVALID_CRED,
                   fmt::format("peer uid/gid {}/{} differ from the registered {}/{} for {}",
                               cred->uid, cred->gid, client.uid, client.gid, describe(key)));
            return;
        }
    } else if (auto tcp_uid = tcp_peer_uid(ch.connection().fd())) {
        if (*tcp_uid != client.uid) {
            refuse(ch, frame, PMIX_ERR_INVALID_CRED,
                   fmt::format("peer uid {} differs from the registered {} for {}", *tcp_uid,
                               client.uid, describe(key)));
            return;
        }
    } else {
        refuse(ch, frame, PMIX_ERR_INVALID_CRED,
               "cannot verify the client's user over this transport (not a local peer)");
        return;
    }
    if (client.running()) {
        refuse(ch, frame, PMIX_ERR_INVALID_CRED, describe(key) + " is already connected");
        return;
    }
    client.state = ClientRecord::State::connecting;
    client.departed = false;  // a new connection life
    client.committed = false;
    client.pid = pid;
    std::weak_ptr<Channel> weak = ch.weak_from_this();
    Frame request{frame.command, frame.tag, frame.flags, {}};
    auto done = [this, weak, request, key](pmix_status_t status) {
        finish_handshake(weak, request, key, status);
    };
    if (host_->client_connected2 != nullptr) {
        auto copied = std::make_shared<wire::InfoArray>(std::move(info));
        call_host_op(
            [this, proc, &client, copied](pmix_op_cbfunc_t cb, void *cbdata) {
                return host_->client_connected2(&proc, client.server_object, copied->data(),
                                                copied->size(), cb, cbdata);
            },
            [done, copied](pmix_status_t s) { done(s); });
    } else if (host_->client_connected != nullptr) {
        // The superseded upcall is synchronous in PMIx 4.2: called without a
        // callback, its return is the answer (PMIX_SUCCESS or
        // PMIX_OPERATION_SUCCEEDED: accepted). Slurm's mpi/pmix_v4 returns
        // PMIX_SUCCESS and never calls a callback it is given.
        const pmix_status_t rc =
            host_->client_connected(&proc, client.server_object, nullptr, nullptr);
        done(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc);
    } else {
        done(PMIX_SUCCESS);
    }
}

void Connections::finish_handshake(std::weak_ptr<Channel> weak, Frame request, ProcKey key,
                                   pmix_status_t status) {
    ClientRecord *client = clients_.find_client(key);
    auto ch = weak.lock();
    if (client == nullptr) {
        if (ch) refuse(*ch, request, PMIX_ERR_NOT_FOUND, describe(key) + " was deregistered");
        return;
    }
    if (!ch || !ch->is_open()) {
        client->state = ClientRecord::State::registered;
        return;
    }
    if (status != PMIX_SUCCESS) {
        client->state = ClientRecord::State::registered;
        refuse(*ch, request, status, "the host refused the client");
        return;
    }
    client->state = ClientRecord::State::connected;
    client->channel = ch;
    hooks_.client_connected(key.first);  // it may come back after PMIx_Finalize
    authenticate(*ch, key);
    auto blob = hooks_.job_blob(key.first);
    ch->reply(request, BodyWriter().i32(PMIX_SUCCESS).str("").proc(self_).bytes(blob).take());
    log()->info("server: client {} connected from {}", describe(key), ch->describe_peer());
}

void Connections::handle_finalize(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    wire::InfoArray info;
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed finalize request");
        return;
    }
    const ProcKey key = key_of(client->proc);
    const bool tool = hooks_.is_tool(key);
    const pmix_proc_t proc = client->proc;
    void *object = client->server_object;
    clients_.depart(key, Departure::finalized);  // `client` may be gone now (a tool's)
    const auto reply = PendingReply::to(ch, frame);
    auto done = [reply, tool](pmix_status_t) {
        if (auto c = reply.channel.lock()) {
            c->reply(reply.request, status_body(PMIX_SUCCESS));
            c->close_after_flush(tool ? "tool finalized" : "client finalized");
        }
    };
    if (!tool && host_->client_finalized != nullptr) {
        call_host_op(
            [this, proc, object](pmix_op_cbfunc_t cb, void *cbdata) {
                return host_->client_finalized(&proc, object, cb, cbdata);
            },
            done);
    } else {
        done(PMIX_SUCCESS);
    }
}

void Connections::handle_abort(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::int32_t status = 0;
    auto msg = std::make_shared<std::string>();
    auto procs = std::make_shared<std::vector<pmix_proc_t>>();
    r.i32(status);
    r.str(*msg);
    r.procs(*procs);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed abort request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    log()->info("server: client {} aborts with status {}: {}", describe(key_of(client->proc)),
                status, *msg);
    if (host_->abort == nullptr) {
        send_reply(reply, status_body(PMIX_ERR_NOT_SUPPORTED));
        return;
    }
    pmix_proc_t proc = client->proc;
    void *object = client->server_object;
    call_host_op(
        [this, proc, object, status, msg, procs](pmix_op_cbfunc_t cb, void *cbdata) {
            return host_->abort(&proc, object, status, msg->c_str(),
                                procs->empty() ? nullptr : procs->data(), procs->size(), cb,
                                cbdata);
        },
        [reply, msg, procs](pmix_status_t s) { send_reply(reply, status_body(s)); });
}

}  // namespace pmixpp::server
