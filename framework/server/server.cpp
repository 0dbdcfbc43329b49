#include "server/server.hpp"

#include <event2/event.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <spdlog/fmt/fmt.h>

#include "mca/logging.hpp"
#include "runtime/progress.hpp"
#include "server/upcalls.hpp"
#include "wire/codec.hpp"
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

// How long an accepted connection may stay silent before its handshake.
constexpr std::chrono::seconds kHandshakeTimeout{30};

}  // namespace

Server &Server::instance() {
    static auto *server = new Server;  // never destroyed: callbacks may outlive finalize
    return *server;
}

Server::Server() {
    // Departures reach the services in this order; the server's own part
    // last (a departed tool's record goes there).
    clients_.subscribe(&iof_);
    clients_.subscribe(&cleanup_);
    clients_.subscribe(&events_);
    clients_.subscribe(&modex_);
    clients_.subscribe(&monitoring_);
    clients_.subscribe(&collectives_);
    clients_.subscribe(&groups_);
    clients_.subscribe(&local_support_);
    clients_.subscribe(this);
    clients_.subscribe(&tools_);  // last: a departed tool's record goes
    // Each service registers its own requests (README.md, "Adding a request type").
    on(Command::handshake, &Server::handle_handshake);
    on(Command::finalize, &Server::handle_finalize);
    on(Command::abort, &Server::handle_abort);
    on(Command::query, &Server::handle_query);
}

// ---------------------------------------------------------------------------------------------
// lifecycle

mca::Status Server::start(const pmix_server_module_t *module, std::span<const pmix_info_t> info,
                          std::shared_ptr<ptl_base::Transports> transports,
                          std::shared_ptr<gds_base::Datastore> store) {
    host_.set(module);
    transports_ = std::move(transports);
    store_ = std::move(store);
    modex_.set_store(store_);
    collectives_.set_store(store_);
    if (auto rc = topology_.start(info); rc != PMIX_SUCCESS)  // network: topology_share.hpp
        return mca::Status(rc, "PMIX_TOPOLOGY2 is not an hwloc topology");

    self_ = pmix_proc_t{};
    std::string ns = fmt::format("pmixpp-server-{}", getpid());
    if (const auto *i = find_info(info, PMIX_SERVER_NSPACE);
        i && i->value.type == PMIX_STRING && i->value.data.string != nullptr) {
        ns = i->value.data.string;
    }
    std::memcpy(self_.nspace, ns.data(), std::min<std::size_t>(ns.size(), PMIX_MAX_NSLEN));
    self_.rank = 0;
    if (const auto *i = find_info(info, PMIX_SERVER_RANK)) {
        if (auto r = wire::as_uint(i->value)) self_.rank = static_cast<pmix_rank_t>(*r);
    }

    auto &engine = ProgressEngine::instance();
    for (auto *ptl : transports_->modules()) {
        auto opened = transports_->listen(*ptl, info);
        if (!opened) {
            stop();
            return opened.status();
        }
        for (auto &listener : opened.value()) {
            auto rec = std::make_unique<ListenerRecord>();
            rec->server = this;
            uris_.push_back({ptl->priority(), listener->uri()});
            rec->listener = std::move(listener);
            rec->ev = event_new(engine.base(), rec->listener->fd(), EV_READ | EV_PERSIST,
                                &Server::on_accept, rec.get());
            event_add(rec->ev, nullptr);
            log()->info("server {}: listening on {}", ns, rec->listener->uri());
            listeners_.push_back(std::move(rec));
        }
    }
    std::stable_sort(uris_.begin(), uris_.end(),
                     [](const auto &a, const auto &b) { return a.first > b.first; });
    if (listeners_.empty()) {
        stop();
        std::string names;
        for (const auto &n : transports_ ? transports_->names() : std::vector<std::string>{}) {
            names += (names.empty() ? "" : ", ") + n;
        }
        return mca::Status(PMIX_ERR_NOT_AVAILABLE,
                           "server: no transport opened a listener (modules: " + names + ")");
    }
    tools_.configure(info);  // tools.hpp
    // PMIX_SERVER_ENABLE_MONITORING: the psensor modules (monitoring.hpp)
    monitoring_.configure(info);
    {
        std::vector<std::string> uris;
        for (const auto &[prio, uri] : uris_) uris.push_back(uri);
        if (auto st = rendezvous_.write(info, self_, uris); !st.ok()) {
            stop();
            return st;
        }
    }
    active_ = true;
    return mca::Status::success();
}

void Server::stop() {
    active_ = false;
    groups_.clear();
    collectives_.clear();  // shared-memory waiters, trackers, connect state
    tools_.clear();
    host_attributes_.clear();
    rendezvous_.remove();
    topology_.stop();
    for (auto &[ns, job] : clients_.jobs()) {
        for (auto &[rank, client] : job.clients) {
            client.state = ClientRecord::State::finalized;
            client.channel.reset();
        }
    }
    auto channels = std::move(channels_);
    channels_.clear();
    for (auto &[ptr, entry] : channels) entry.first->close("server finalizing");
    for (auto &rec : listeners_) {
        if (rec->ev != nullptr) event_free(rec->ev);
    }
    listeners_.clear();
    uris_.clear();
    clients_.clear();
    modex_.clear();
    local_support_.clear();
    cleanup_.clear();
    monitoring_.clear();
    events_.clear();
    iof_.clear();
    logging_.clear();
    transports_.reset();
    store_.reset();
}

void Server::on_accept(int, short, void *arg) {
    auto *rec = static_cast<ListenerRecord *>(arg);
    rec->server->accept_all(*rec);
}

void Server::accept_all(ListenerRecord &rec) {
    for (;;) {
        auto accepted = rec.listener->accept();
        if (!accepted) {
            if (accepted.status().code() != PMIX_ERR_WOULD_BLOCK) {
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

void Server::on_frame(Channel &ch, Frame &&frame) {
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
    (*handler)(ch, frame, peer.authenticated ? find_client(peer.proc) : nullptr);
}

void Server::on_close(Channel &ch, const std::string &reason) {
    auto it = channels_.find(&ch);
    if (it == channels_.end()) return;
    auto keep = it->second.first;  // the channel outlives this function
    Peer peer = it->second.second;
    channels_.erase(it);
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
    ClientRecord *client = find_client(peer.proc);
    if (client == nullptr || client->channel.get() != &ch) return;
    client->channel.reset();
    if (client->departed) return;  // finalized (or deregistered) first
    if (!tools_.is_tool(peer.proc)) {
        log()->warn("server: client {} lost its connection ({}) before finalizing",
                    describe(peer.proc), reason);
    }
    clients_.depart(peer.proc, Departure::lost);
}

// ---------------------------------------------------------------------------------------------
// departures (README.md, "Departures")

void Server::client_departed(const ProcKey &key, Departure why) {
    // (Collectives heard it before: README.md, "Departures".)
    ClientRecord *c = find_client(key);
    if (why == Departure::deregistered) {
        if (c != nullptr && c->channel) c->channel->close("client deregistered");
    }
}

// ---------------------------------------------------------------------------------------------
// helpers

void Server::refuse(Channel &ch, const Frame &frame, pmix_status_t status,
                    const std::string &reason) {
    log()->warn("server: refused connection from {}: {} ({})", ch.describe_peer(), reason,
                PMIx_Error_string(status));
    ch.reply(frame, BodyWriter().i32(status).str(reason).take());
    ch.close_after_flush("handshake refused: " + reason, wire::CloseCause::refused);
}

std::vector<std::uint8_t> Server::job_blob(const std::string &nspace) {
    JobRecord *job = find_job(nspace);
    if (job == nullptr || !job->registered) return {};
    // Assembled once per change of the store, not once per client handshake.
    auto blob = store_->job_blob(nspace);
    if (!blob) return {};
    const auto &b = *blob.value();
    return std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t *>(b.data()),
                                     reinterpret_cast<const std::uint8_t *>(b.data()) + b.size());
}

// ---------------------------------------------------------------------------------------------
// handshake, finalize, abort, commit

void Server::handle_handshake(Channel &ch, Frame &frame, ClientRecord *) {
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
    if (protocol != wire::kProtocolVersion) {
        refuse(ch, frame, PMIX_ERR_NOT_SUPPORTED,
               fmt::format("protocol version {}, this server speaks {}", protocol,
                           wire::kProtocolVersion));
        return;
    }
    if (role == static_cast<std::uint8_t>(wire::Role::tool)) {  // tools.hpp
        tools_.handshake(ch, frame, proc, uid, gid, pid, std::move(info));
        return;
    }
    const ProcKey key = key_of(proc);
    JobRecord *job = find_job(key.first);
    if (job == nullptr) {
        refuse(ch, frame, PMIX_ERR_NOT_FOUND, "unknown namespace " + key.first);
        return;
    }
    auto cit = job->clients.find(key.second);
    if (cit == job->clients.end()) {
        refuse(ch, frame, PMIX_ERR_NOT_FOUND,
               fmt::format("rank {} is not a registered client of {}", key.second, key.first));
        return;
    }
    ClientRecord &client = cit->second;
    if (secret != job->secret) {
        refuse(ch, frame, PMIX_ERR_INVALID_CRED,
               fmt::format("wrong job secret for {}", describe(key)));
        return;
    }
    if (auto cred = ch.connection().peer_credentials()) {
        if (cred->uid != client.uid || cred->gid != client.gid) {
            refuse(ch, frame, PMIX_ERR_INVALID_CRED,
                   fmt::format("peer uid/gid {}/{} differ from the registered {}/{} for {}",
                               cred->uid, cred->gid, client.uid, client.gid, describe(key)));
            return;
        }
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

void Server::finish_handshake(std::weak_ptr<Channel> weak, Frame request, ProcKey key,
                              pmix_status_t status) {
    ClientRecord *client = find_client(key);
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
    collectives_.client_connected(key.first);  // it may come back after PMIx_Finalize
    auto &peer = channels_[ch.get()].second;
    peer.authenticated = true;
    peer.proc = key;
    auto blob = job_blob(key.first);
    ch->reply(request, BodyWriter().i32(PMIX_SUCCESS).str("").proc(self_).bytes(blob).take());
    log()->info("server: client {} connected from {}", describe(key), ch->describe_peer());
}

void Server::handle_finalize(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    wire::InfoArray info;
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed finalize request");
        return;
    }
    const ProcKey key = key_of(client->proc);
    const bool tool = tools_.is_tool(key);
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

void Server::handle_abort(Channel &ch, Frame &frame, ClientRecord *client) {
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

// ---------------------------------------------------------------------------------------------
// host calls

pmix_status_t Server::register_nspace(const std::string &nspace, int nlocalprocs,
                                      std::span<const pmix_info_t> info) {
    JobRecord &job = clients_.job(nspace);
    job.registered = true;
    job.nlocalprocs = nlocalprocs;
    if (const auto *i = find_info(info, PMIX_JOB_SIZE)) {
        if (auto n = wire::as_uint(i->value)) job.job_size = static_cast<std::uint32_t>(*n);
    }
    // The server's topology for a job registered without one (topology_share.hpp).
    const auto shared = topology_.job_info(info);
    if (shared) info = shared->span();
    // Every client may ask which server hosts it (PMIX_SERVER_NSPACE and
    // PMIX_SERVER_RANK, job realm), whatever its host registered; a host that
    // names them itself (Open MPI's ORTE does) keeps its own.
    wire::InfoArray with_server;
    if (find_info(info, PMIX_SERVER_NSPACE) == nullptr &&
        find_info(info, PMIX_SERVER_RANK) == nullptr) {
        with_server = wire::InfoArray::copy_of(info);
        if (with_server.size() == info.size()) {
            pmix_info_t added[2];
            PMIX_INFO_LOAD(&added[0], PMIX_SERVER_NSPACE, self_.nspace, PMIX_STRING);
            PMIX_INFO_LOAD(&added[1], PMIX_SERVER_RANK, &self_.rank, PMIX_PROC_RANK);
            for (auto &a : added) with_server.adopt(a);
            info = with_server.span();
        }
    }
    auto st = store_->write([&](mca::gds::Module &m) { return m.register_job(nspace, info); });
    if (!st.ok()) {
        log()->error("server: register_nspace {}: {}", nspace, st.message());
        return st.code();
    }
    collectives_.job_registered(job);
    modex_.job_registered(nspace);
    return PMIX_SUCCESS;
}

void Server::deregister_nspace(const std::string &nspace) {
    clients_.deregister_nspace(nspace);  // each client departs; then job_deregistered()
    auto st = store_->write([&](mca::gds::Module &m) { return m.delete_job(nspace); });
    (void)st;
}

pmix_status_t Server::register_client(const pmix_proc_t &proc, uid_t uid, gid_t gid,
                                      void *server_object) {
    const ProcKey key = key_of(proc);
    clients_.register_client(proc, uid, gid, server_object);
    JobRecord &job = *find_job(key.first);
    collectives_.client_registered(job, uid, gid);
    return PMIX_SUCCESS;
}

void Server::deregister_client(const pmix_proc_t &proc) {
    clients_.deregister_client(key_of(proc));  // departs, then the record goes
}

mca::Result<mca::Environment> Server::fork_environment(const pmix_proc_t &proc) {
    const ProcKey key = key_of(proc);
    JobRecord &job = clients_.job(key.first);
    mca::Environment env;
    env["PMIX_NAMESPACE"] = key.first;
    env["PMIX_RANK"] = std::to_string(key.second);
    std::string all;
    for (const auto &[prio, uri] : uris_) all += (all.empty() ? "" : ",") + uri;
    if (!uris_.empty()) {
        const std::string best =
            fmt::format("{}.{};{}", key_of(self_).first, self_.rank, uris_.front().second);
        for (const char *name : wire::kServerUriVariables) {
            env[name] = best;
        }
    }
    env["PMIXPP_SERVER_URIS"] = all;
    env["PMIXPP_JOB_SECRET"] = job.secret;
    env["PMIX_SECURITY_MODE"] = "native";
    env["PMIX_BFROP_BUFFER_TYPE"] = "PMIX_BFROP_BUFFER_NON_DESC";
    env["PMIX_GDS_MODULE"] = store_->component();
    env["PMIX_VERSION"] = "4.2.2";
    char host[HOST_NAME_MAX + 1] = {};
    if (gethostname(host, sizeof host - 1) == 0) env["PMIX_HOSTNAME"] = host;
    const char *tmp = std::getenv("TMPDIR");
    env["PMIX_SYSTEM_TMPDIR"] = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
    if (auto st = local_support_.setup_fork(proc, env); !st.ok()) return st;
    for (auto *ptl : transports_->modules()) {
        auto st = ptl->setup_fork(proc, env);
        if (!st.ok()) return st;
    }
    return env;
}

}  // namespace pmixpp::server
