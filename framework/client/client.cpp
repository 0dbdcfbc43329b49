#include "client/client.hpp"
#include "client/get_refresh.hpp"
#include "client/groups.hpp"
#include "client/request_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "event/process_events.hpp"
#include "mca/logging.hpp"
#include "pmixpp/mca/info.hpp"
#include "runtime/progress.hpp"
#include "wire/codec.hpp"
#include "wire/commit_flags.hpp"

namespace pmixpp::client {

using runtime::Completion;
using runtime::ProgressEngine;
using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Command;
using wire::Frame;

namespace {

auto log() {
    return mca::framework_logger("client");
}

// The same logger, kept: each request logs at debug (client_base_verbose >= 5)
// without taking the loggers' lock.
spdlog::logger &request_log() {
    static const auto logger = mca::framework_logger("client");
    return *logger;
}

bool same_proc(const pmix_proc_t &a, const pmix_proc_t &b) {
    return a.rank == b.rank && std::strncmp(a.nspace, b.nspace, PMIX_MAX_NSLEN) == 0;
}

using events::info_true;  // a bare attribute means "true"

pmix_value_t *copy_value(const pmix_value_t &v) {
    auto *out = static_cast<pmix_value_t *>(std::calloc(1, sizeof(pmix_value_t)));
    if (out == nullptr) return nullptr;
    if (wire::copy(PMIX_VALUE, out, &v, 1) != PMIX_SUCCESS) {
        std::free(out);
        return nullptr;
    }
    return out;
}

void release_value(pmix_value_t *v) {
    if (v == nullptr) return;
    wire::destruct(PMIX_VALUE, v, 1);
    std::free(v);
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        auto pos = s.find(sep, start);
        if (pos == std::string::npos) pos = s.size();
        if (pos > start) out.push_back(s.substr(start, pos - start));
        start = pos + 1;
    }
    return out;
}

}  // namespace

GetDirectives GetDirectives::from(const pmix_info_t *info, std::size_t ninfo) {
    GetDirectives d;
    for (std::size_t i = 0; info != nullptr && i < ninfo; ++i) {
        const pmix_info_t &x = info[i];
        if (PMIX_CHECK_KEY(&x, PMIX_OPTIONAL)) {
            d.optional = info_true(x);
        } else if (PMIX_CHECK_KEY(&x, PMIX_IMMEDIATE)) {
            d.immediate = info_true(x);
        } else if (PMIX_CHECK_KEY(&x, PMIX_GET_STATIC_VALUES)) {
            d.static_values = info_true(x);
        } else if (PMIX_CHECK_KEY(&x, PMIX_TIMEOUT)) {
            if (x.value.type == PMIX_INT && x.value.data.integer > 0) {
                d.timeout_s = static_cast<std::uint32_t>(x.value.data.integer);
            } else if (x.value.type == PMIX_UINT32) {
                d.timeout_s = x.value.data.uint32;
            }
        }
    }
    return d;
}

Client &Client::instance() {
    static auto *client = new Client;  // never destroyed: callbacks may outlive finalize
    return *client;
}

Client::Client() {
    unsolicited_[static_cast<std::uint16_t>(Command::event)] = &Client::handle_event;
    unsolicited_[static_cast<std::uint16_t>(Command::iof)] = &Client::handle_iof;
    unsolicited_[static_cast<std::uint16_t>(Command::heartbeat_wanted)] =
        &Client::handle_heartbeat_wanted;  // monitor.cpp
    unsolicited_[static_cast<std::uint16_t>(Command::group_ask)] = &Client::handle_group_ask;
    unsolicited_[static_cast<std::uint16_t>(Command::commit_flush)] = &Client::handle_commit_flush;
}

// ---------------------------------------------------------------------------------------------
// view

bool Client::has_view() const {
    std::shared_lock lock(view_mutex_);
    return store_ != nullptr;
}

pmix_proc_t Client::self() const {
    std::shared_lock lock(view_mutex_);
    return self_;
}

bool Client::connected() const {
    std::shared_lock lock(view_mutex_);
    return store_ != nullptr && !self_hosted_;
}

void Client::attach_server_view(std::shared_ptr<gds_base::Datastore> store, const pmix_proc_t &self,
                                std::shared_ptr<gds_base::LazyModex> pending) {
    std::unique_lock lock(view_mutex_);
    // One datastore per process (gds_base::Datastore::acquire): the server's
    // clients' commits decode into the view a client face keeps too.
    server_lazy_ = std::move(pending);
    if (store_ != nullptr) return;  // a client face already connected: keep its view
    store_ = std::move(store);
    self_ = self;
    self_hosted_ = true;
    runtime::ProgressEngine::instance().post(
        [self] { events::ProcessEvents::instance().set_self(self); });
}

void Client::settle_held_for(const pmix_proc_t &target) const {
    // A peer's bytes held in its fence area (fence_shm.cpp) go to lazy_
    // before it is decoded; job-level data is never in an area.
    if (held_count_.load() == 0 || target.rank == PMIX_RANK_WILDCARD) return;
    if (std::strncmp(target.nspace, self().nspace, PMIX_MAX_NSLEN) != 0) return;
    const pmix_rank_t r = target.rank;
    settle_held([r](const Held &h) { return r == PMIX_RANK_UNDEF || h.rank == r; }, "for a Get");
}

void Client::detach_server_view() {
    std::unique_lock lock(view_mutex_);
    server_lazy_.reset();
    if (!self_hosted_) return;
    store_.reset();
    self_hosted_ = false;
}

pmix_status_t Client::lookup(const pmix_proc_t &target, const char *key,
                             std::span<const pmix_info_t> qualifiers, pmix_value_t **out) const {
    settle_held_for(target);
    std::shared_lock lock(view_mutex_);
    if (store_ == nullptr) return PMIX_ERR_INIT;
    lazy_.materialize(target, store_);
    if (server_lazy_) server_lazy_->materialize(target, store_);
    if (key != nullptr) {
        pmix_value_t *copy = nullptr;
        auto st = store_->read([&](const mca::gds::Module &m) {
            return m.fetch(target, key, qualifiers,
                           [&](const pmix_value_t &v) { copy = copy_value(v); });
        });
        if (!st.ok()) return st.code() == PMIX_SUCCESS ? PMIX_ERR_NOT_FOUND : st.code();
        if (copy == nullptr) return PMIX_ERR_NOMEM;
        *out = copy;
        return PMIX_SUCCESS;
    }
    // NULL key: everything held for the process, as a DATA_ARRAY of INFO.
    std::vector<std::pair<std::string, pmix_value_t *>> all;
    auto st = store_->read([&](const mca::gds::Module &m) {
        return m.fetch_all(target, [&](std::string_view k, const pmix_value_t &v) {
            all.emplace_back(std::string(k), copy_value(v));
        });
    });
    auto cleanup = [&] {
        for (auto &[k, v] : all) release_value(v);
    };
    if (!st.ok()) {
        cleanup();
        return st.code();
    }
    auto *infos =
        static_cast<pmix_info_t *>(std::calloc(all.empty() ? 1 : all.size(), sizeof(pmix_info_t)));
    auto *darray = static_cast<pmix_data_array_t *>(std::calloc(1, sizeof(pmix_data_array_t)));
    auto *value = static_cast<pmix_value_t *>(std::calloc(1, sizeof(pmix_value_t)));
    if (infos == nullptr || darray == nullptr || value == nullptr) {
        std::free(infos);
        std::free(darray);
        std::free(value);
        cleanup();
        return PMIX_ERR_NOMEM;
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
        std::strncpy(infos[i].key, all[i].first.c_str(), PMIX_MAX_KEYLEN);
        if (all[i].second != nullptr) {
            infos[i].value = *all[i].second;  // move the payload
            std::free(all[i].second);
        }
    }
    darray->type = PMIX_INFO;
    darray->size = all.size();
    darray->array = infos;
    value->type = PMIX_DATA_ARRAY;
    value->data.darray = darray;
    *out = value;
    return PMIX_SUCCESS;
}

bool Client::should_ask_server(const pmix_proc_t &target, const char *key,
                               const GetDirectives &d) const {
    std::shared_lock lock(view_mutex_);
    if (store_ == nullptr || self_hosted_ || d.optional) return false;
    if (same_proc(target, self_)) return false;  // our own data is all here
    const bool own_job = std::strncmp(target.nspace, self_.nspace, PMIX_MAX_NSLEN) == 0;
    if (own_job) {
        // Job info arrived whole at connect: a miss on job-level or reserved
        // keys of our own job is final.
        if (target.rank == PMIX_RANK_WILDCARD || target.rank == PMIX_RANK_UNDEF) return false;
        if (key != nullptr && std::strncmp(key, "pmix.", 5) == 0) return false;
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// lifecycle

pmix_status_t Client::init(std::span<const pmix_info_t> info, pmix_proc_t *proc) {
    const char *ns = std::getenv("PMIX_NAMESPACE");
    const char *rank = std::getenv("PMIX_RANK");
    if (ns == nullptr || rank == nullptr) {
        log()->error(
            "PMIx_Init: no PMIx server to connect to (PMIX_NAMESPACE/PMIX_RANK not "
            "set: run under a PMIx server such as pmixrun)");
        return PMIX_ERR_UNREACH;
    }
    std::vector<std::string> uris;
    if (const char *all = std::getenv("PMIXPP_SERVER_URIS")) uris = split(all, ',');
    if (uris.empty()) {
        for (const char *name : wire::kServerUriVariables) {
            const char *v = std::getenv(name);
            if (v == nullptr) continue;
            const char *semi = std::strchr(v, ';');
            uris.emplace_back(semi != nullptr ? semi + 1 : v);
            break;
        }
    }
    const char *secret_env = std::getenv("PMIXPP_JOB_SECRET");
    const std::string secret = secret_env != nullptr ? secret_env : "";
    pmix_proc_t me{};
    std::strncpy(me.nspace, ns, PMIX_MAX_NSLEN);
    char *end = nullptr;
    me.rank = static_cast<pmix_rank_t>(std::strtoul(rank, &end, 10));
    if (end == rank || *end != '\0') {
        log()->error("PMIx_Init: PMIX_RANK={} is not a rank", rank);
        return PMIX_ERR_BAD_PARAM;
    }

    auto transports = ptl_base::Transports::acquire();
    if (!transports) {
        log()->error("PMIx_Init: {}", transports.status().message());
        return transports.status().code();
    }
    // The handshake is done here, in the caller's thread, before the progress
    // thread watches the connection: the caller sleeps once, until the reply
    // arrives, instead of handing the request to the progress thread and waiting
    // for it to hand the reply back (with 16 processes starting on 2 cores,
    // each hand-off is a wait for the scheduler). The progress thread starts,
    // and the datastore's component is loaded, while the server works on it.
    auto &engine = ProgressEngine::instance();
    bool engine_held = false;
    std::shared_ptr<gds_base::Datastore> store;
    std::vector<std::uint8_t> blob;
    HandshakeRequest request;
    request.uris = uris;
    request.body = handshake_body(wire::Role::client, me, secret, info);
    request.read_payload = [&blob](BodyReader &r) { return r.bytes(blob); };
    const bool external = mca::info_flag(info, PMIX_EXTERNAL_PROGRESS).value_or(false);
    request.while_waiting = [&]() -> mca::Status {
        if (auto st = engine.acquire(external); !st.ok()) return st;
        engine_held = true;
        auto acquired = gds_base::Datastore::acquire();
        if (!acquired) return acquired.status();
        store = acquired.value();
        return mca::Status::success();
    };
    auto connected = handshake(*transports.value(), request);
    if (connected && !blob.empty()) {
        auto st = store->write([&](mca::gds::Module &m) {
            return m.store_job(std::string_view(me.nspace),
                               std::span<const std::byte>(
                                   reinterpret_cast<const std::byte *>(blob.data()), blob.size()));
        });
        if (!st.ok()) connected = mca::Status(st.code(), "job info refused: " + st.message());
    }
    if (!connected) {
        log()->error("PMIx_Init: {}:{}: {} ({})", me.nspace, me.rank, connected.status().message(),
                     PMIx_Error_string(connected.status().code()));
        if (engine_held) engine.release();
        return connected.status().code();  // the connection closes here, never watched
    }
    adopt(std::move(connected).value(), transports.value(), wire::Role::client, "PMIx_Init");
    {
        std::unique_lock lock(view_mutex_);
        store_ = store;
        self_ = me;
        self_hosted_ = false;
    }
    engine.post([me] { events::ProcessEvents::instance().set_self(me); });
    if (proc != nullptr) *proc = me;
    return PMIX_SUCCESS;
}

void Client::adopt(Handshaken &&connected, std::shared_ptr<ptl_base::Transports> transports,
                   wire::Role role, const char *who) {
    auto handover = std::make_shared<Handshaken>(std::move(connected));
    const bool client_role = role == wire::Role::client;
    ProgressEngine::instance().post(
        [this, transports = std::move(transports), handover, who, client_role] {
            transports_ = transports;
            finalizing_ = false;
            lost_event_.reset();    // a new connection: no standing loss
            pending_regs_.clear();  // failed with the last connection, if any
            deliver_held();         // what they held, before the new connection's events
            server_ = handover->server;
            channel_ = Channel::open(
                std::move(handover->connection),
                [this](Channel &c, Frame &&f) { on_frame(c, std::move(f)); },
                [this](Channel &c, const std::string &why) { on_close(c, why); });
            if (!channel_) {
                log()->error("{}: cannot watch the connection to {}", who, handover->uri);
                lost_ = true;
                raise_lost_connection(server_);
                return;
            }
            if (client_role) {
                std::lock_guard lock(direct_mutex_);
                direct_channel_ = channel_;
            }
            for (auto &f : handover->early) on_frame(*channel_, std::move(f));
        });
}

pmix_status_t Client::finalize(std::span<const pmix_info_t> info) {
    bool hosted = false;
    {
        std::shared_lock lock(view_mutex_);
        hosted = self_hosted_;
    }
    if (hosted) return PMIX_SUCCESS;  // the server face owns the view
    GroupTable::instance().clear();   // groups.hpp: a new init starts with none
    auto &engine = ProgressEngine::instance();
    // This Finalize is the engine's last user (no server or tool face in the
    // process, the library's own thread): the progress thread ends itself
    // once the connections are closed, and this thread sleeps once, until
    // that thread has exited (bench/README.md, "Finalize ends the loop from
    // the answer"). Otherwise it sleeps until the answer and release() only
    // drops its reference.
    const bool retiring = engine.retire();
    auto done = std::make_shared<Completion<pmix_status_t>>();
    // On the progress thread, outside the channel's callbacks.
    auto finish = [this, done, retiring](pmix_status_t s) {
        close_connections();
        done->complete(s);
        if (retiring) ProgressEngine::instance().end_loop();
    };
    auto on_reply = [finish](pmix_status_t s, BodyReader &) {
        if (s == PMIX_SUCCESS) {
            finish(s);  // the frame's callback may close its channel
            return;
        }
        // Failed from inside the connection's close (the server died):
        // close the rest once that returns.
        ProgressEngine::instance().post([finish, s] { finish(s); });
    };
    auto body = BodyWriter().infos(info.data(), info.size()).take();
    finalizing_ = true;
    // From this thread when nothing is pending: the progress thread is not
    // woken to send it.
    if (!send_direct(Command::finalize, body, on_reply)) {
        engine.post([this, on_reply, finish, b = std::move(body)]() mutable {
            // Already without a server: finalized here, nothing to tell it.
            if (lost_.load()) return finish(PMIX_SUCCESS);
            request(Command::finalize, std::move(b), std::move(on_reply));
        });
    }
    const auto limit = connect_timeout() * 3;
    if (retiring) {
        if (!engine.await_end(limit)) {
            // No answer in time: close here; release() joins the thread.
            engine.post([finish] { finish(PMIX_ERR_TIMEOUT); });
        }
    } else if (!done->wait(limit)) {
        engine.run_sync([finish] { finish(PMIX_ERR_TIMEOUT); });
    }
    {
        std::unique_lock lock(view_mutex_);
        store_.reset();
    }
    drop_fence_segment();
    engine.release();
    return done->is_done() ? done->value() : PMIX_ERR_TIMEOUT;
}

void Client::close_connections() {
    fail_direct(nullptr);
    if (channel_) channel_->close("finalized");
    channel_.reset();
    lost_event_.reset();
    pending_regs_.clear();
    held_live_.clear();  // finalized: no handler runs any more
    held_replays_.clear();
    auto others = std::move(others_);
    others_.clear();
    for (auto &[server, ch] : others) ch->close("finalized");
    transports_.reset();
}

// ---------------------------------------------------------------------------------------------
// messaging (progress thread)

void Client::request(Command command, std::vector<std::uint8_t> body, ReplyHandler handler) {
    flush_held_on_thread();
    const std::uint32_t tag = next_tag_++;
    if (!channel_ || !channel_->is_open() ||
        !channel_->send(static_cast<std::uint16_t>(command), tag, 0, body)) {
        BodyReader empty({});
        handler(PMIX_ERR_LOST_CONNECTION, empty);
        return;
    }
    pending_[tag] = std::move(handler);
    pending_on_[tag] = channel_.get();
    request_log().debug("client: request {} sent (command {}, {} bytes)", tag,
                        static_cast<unsigned>(command), body.size());
}

void Client::on_frame(Channel &, Frame &&frame) {
    if (!frame.is_reply()) {
        auto it = unsolicited_.find(frame.command);
        if (it == unsolicited_.end()) {
            log()->debug("client: ignoring unsolicited command {} from the server", frame.command);
            return;
        }
        (this->*(it->second))(frame);
        return;
    }
    ReplyHandler handler;
    if (auto it = pending_.find(frame.tag); it != pending_.end()) {
        handler = std::move(it->second);
        pending_.erase(it);
        pending_on_.erase(frame.tag);
    } else {
        std::lock_guard lock(direct_mutex_);
        if (auto d = direct_pending_.find(frame.tag); d != direct_pending_.end()) {
            handler = std::move(d->second);
            direct_pending_.erase(d);
        }
    }
    if (!handler) {
        log()->warn("client: reply with unknown tag {} (command {})", frame.tag, frame.command);
        return;
    }
    BodyReader r(frame.body);
    std::int32_t status = PMIX_ERR_UNPACK_FAILURE;
    if (!r.i32(status)) status = PMIX_ERR_UNPACK_FAILURE;
    if (request_log().should_log(spdlog::level::debug))
        request_log().debug("client: reply to request {}: {}", frame.tag,
                            PMIx_Error_string(status));
    handler(status, r);
}

bool Client::send_direct(Command command, std::span<const std::uint8_t> body,
                         ReplyHandler handler) {
    std::lock_guard held(held_commit_mutex_);
    if (held_commit_) {
        // The commit held back goes first, or neither does.
        const auto b = held_frame(*held_commit_);
        if (!send_direct_now(Command::commit, b, ReplyHandler())) return false;
        held_commit_.reset();
    }
    return send_direct_now(command, body, std::move(handler));
}

namespace {

// A commit's body: bytes local, bytes remote, u8 flags[, bytes global]
// (kCommitGlobal); a held one's count follows (held_frame).
BodyWriter commit_body(const mca::gds::Blob &local, const mca::gds::Blob &remote,
                       const mca::gds::Blob &global, std::uint8_t flags) {
    BodyWriter w;
    w.bytes(std::span<const std::byte>(local)).bytes(std::span<const std::byte>(remote)).u8(flags);
    if ((flags & wire::kCommitGlobal) != 0) w.bytes(std::span<const std::byte>(global));
    return w;
}

}  // namespace

std::vector<std::uint8_t> Client::held_frame(const HeldCommit &h) {
    // Flagged kCommitCount: the count goes last.
    return commit_body(h.local, h.remote, h.global, h.flags).u32(h.count).take();
}

bool Client::flush_held_locked() {
    if (!held_commit_) return true;
    auto body = held_frame(*held_commit_);
    held_commit_.reset();
    if (send_direct_now(Command::commit, body, ReplyHandler())) return true;
    return ProgressEngine::instance().post([this, b = std::move(body)] {
        if (!channel_ ||
            !channel_->send(static_cast<std::uint16_t>(Command::commit), next_tag_++, 0, b)) {
            log()->warn("client: commit not sent: the connection to the server is gone");
        }
    });
}

void Client::flush_held_on_thread() {
    std::lock_guard held(held_commit_mutex_);
    if (!held_commit_) return;
    const auto body = held_frame(*held_commit_);
    held_commit_.reset();
    if (!channel_ ||
        !channel_->send(static_cast<std::uint16_t>(Command::commit), next_tag_++, 0, body)) {
        log()->warn("client: commit not sent: the connection to the server is gone");
    }
}

void Client::handle_commit_flush(wire::Frame &) {
    // A Get at the server waits for a commit this process holds back.
    flush_held_on_thread();
}

bool Client::send_direct_now(Command command, std::span<const std::uint8_t> body,
                             ReplyHandler handler) {
    if (ProgressEngine::instance().unfinished() != 0) return false;
    std::lock_guard lock(direct_mutex_);
    if (!direct_channel_) return false;
    const std::uint32_t tag = next_tag_++;
    // Registered before the write: the reply may come at once.
    const bool answered = static_cast<bool>(handler);
    if (answered) direct_pending_[tag] = std::move(handler);
    if (!direct_channel_->send_from_any_thread(static_cast<std::uint16_t>(command), tag, body)) {
        if (answered) direct_pending_.erase(tag);
        return false;
    }
    return true;
}

void Client::fail_direct(const Channel *ch) {
    std::map<std::uint32_t, ReplyHandler> failed;
    {
        std::lock_guard lock(direct_mutex_);
        if (ch != nullptr && direct_channel_.get() != ch) return;
        direct_channel_.reset();
        failed.swap(direct_pending_);
    }
    for (auto &[tag, handler] : failed) {
        BodyReader empty({});
        handler(PMIX_ERR_LOST_CONNECTION, empty);
    }
}

void Client::on_close(Channel &ch, const std::string &reason) {
    fail_direct(&ch);
    if (channel_.get() == &ch) {
        std::lock_guard held(held_commit_mutex_);
        held_commit_.reset();  // nowhere to go
    }
    // Requests sent on it fail, whichever server it was.
    std::vector<ReplyHandler> failed;
    for (auto it = pending_on_.begin(); it != pending_on_.end();) {
        if (it->second != &ch) {
            ++it;
            continue;
        }
        if (auto p = pending_.find(it->first); p != pending_.end()) {
            failed.push_back(std::move(p->second));
            pending_.erase(p);
        }
        it = pending_on_.erase(it);
    }
    auto fail_all = [&failed] {
        for (auto &handler : failed) {
            BodyReader empty({});
            handler(PMIX_ERR_LOST_CONNECTION, empty);
        }
    };
    if (channel_.get() != &ch) {
        // One of a tool's other servers (or one it dropped).
        const auto gone = std::find_if(others_.begin(), others_.end(),
                                       [&](const auto &o) { return o.second.get() == &ch; });
        // A tool's other server that went away (one it disconnected from
        // is no longer listed): its handlers hear of it, with that server as
        // the source; the current server stays current (docs/tools.md).
        std::optional<pmix_proc_t> lost;
        if (gone != others_.end()) {
            log()->warn("client: lost the connection to server {}:{}: {}", gone->first.nspace,
                        gone->first.rank, reason);
            lost = gone->first;
            others_.erase(gone);
        }
        fail_all();
        if (lost && !finalizing_) raise_lost_connection(*lost, false);
        return;
    }
    if (!finalizing_) log()->warn("client: lost the connection to the server: {}", reason);
    lost_ = true;
    wake_fence_waiters();  // a caller may sleep in its barrier
    fail_all();
    if (!finalizing_) raise_lost_connection(server_);
}

void Client::store_stream(std::span<const std::uint8_t> stream) {
    std::vector<wire::ModexRecord> records;
    if (!wire::parse_records(stream, records)) {
        log()->warn("client: malformed modex data from the server");
    }
    const pmix_proc_t me = self();
    std::shared_ptr<gds_base::Datastore> store;
    {
        std::shared_lock lock(view_mutex_);
        store = store_;
    }
    if (!store) return;
    // Bytes of these processes still held in their fence areas are older:
    // they go first.
    if (held_count_.load() != 0) {
        std::vector<pmix_rank_t> ranks;
        for (const auto &rec : records) {
            if (std::strncmp(rec.proc.nspace, me.nspace, PMIX_MAX_NSLEN) == 0)
                ranks.push_back(rec.proc.rank);
        }
        settle_held(
            [&ranks](const Held &h) {
                return std::find(ranks.begin(), ranks.end(), h.rank) != ranks.end();
            },
            "before data from the server");
    }
    // Decoded when a Get asks for the process (lazy_modex.hpp).
    lazy_.add(std::move(records), me, store);
}

// ---------------------------------------------------------------------------------------------
// operations

// Put, Store_internal and Commit work in the caller's thread: the datastore
// has its own reader/writer lock, and only the frame to the server goes
// through the progress thread, without the caller waiting for it (FIFO
// posting keeps a later Fence behind this Commit on the wire).

namespace {

// About what a Put value adds to the next commit's blob (gds_hash's format
// on our codec: ~48 bytes of framing per item besides its key and payload;
// Client::commit adds a segment header's ~72): Client::commit decides on it
// whether to send everything instead of the changes.
constexpr std::size_t kCommitHeaderWeight = 72;

std::size_t put_weight(const char *key, const pmix_value_t &v) {
    std::size_t payload = 48 + 8;
    switch (v.type) {
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
            payload += v.data.bo.size;
            break;
        case PMIX_STRING:
            payload += v.data.string != nullptr ? std::strlen(v.data.string) : 0;
            break;
        case PMIX_DATA_ARRAY:
            payload += v.data.darray != nullptr ? 16 * v.data.darray->size : 0;
            break;
        default:
            break;
    }
    return payload + (key != nullptr ? std::strlen(key) : 0);
}

}  // namespace

pmix_status_t Client::put(pmix_scope_t scope, const char *key, const pmix_value_t &value) {
    std::shared_lock lock(view_mutex_);
    if (!store_) return PMIX_ERR_INIT;
    const pmix_status_t rc =
        store_->write([&](mca::gds::Module &m) { return m.store(self_, scope, key, value); })
            .code();
    if (rc == PMIX_SUCCESS && scope != PMIX_INTERNAL) {
        put_weight_ += put_weight(key, value);
        scopes_put_.fetch_or(1u << scope);
    }
    return rc;
}

pmix_status_t Client::store_internal(const pmix_proc_t &proc, const char *key,
                                     const pmix_value_t &value) {
    settle_held_for(proc);
    std::shared_lock lock(view_mutex_);
    if (!store_) return PMIX_ERR_INIT;
    // Received data of `proc` is older than this value: decode it first.
    lazy_.materialize(proc, store_);
    if (server_lazy_) server_lazy_->materialize(proc, store_);
    return store_
        ->write([&](mca::gds::Module &m) { return m.store(proc, PMIX_INTERNAL, key, value); })
        .code();
}

pmix_status_t Client::commit() {
    std::shared_ptr<gds_base::Datastore> store;
    pmix_proc_t me{};
    bool hosted = false;
    {
        std::shared_lock lock(view_mutex_);
        store = store_;
        me = self_;
        hosted = self_hosted_;
    }
    if (!store) return PMIX_ERR_INIT;
    // The server is gone: nothing committed would reach a peer.
    if (!hosted && lost_.load()) return PMIX_ERR_LOST_CONNECTION;
    // From the datastore to the frame posted, one commit at a time (client.hpp).
    std::lock_guard order(commit_order_mutex_);
    // What this commit adds (interface 1.1), taken with the commit under one
    // writer lock so that a concurrent Put is in this commit or the next;
    // the server and every peer merge it into what they hold, so a job that
    // commits a new key per round sends one key per round, not its history.
    mca::Result<mca::gds::Blob> local = mca::gds::Blob{}, remote = mca::gds::Blob{},
                                global = mca::gds::Blob{};
    const bool pending = store->has_pending_blobs() && !hosted;
    // Interface 1.2: the values put with exactly each scope, GLOBAL ones
    // once (they were in both the LOCAL and the REMOTE part).
    const bool split = store->has_scoped_blobs() && !hosted;
    // Once the changes sent since the last `whole` commit reach half of it,
    // this one sends everything committed instead, marked `whole`: the
    // server replaces what it keeps of this process rather than appending,
    // without decoding anything (server/modex.hpp), so values Put again and
    // again do not pile up there, and its fence area is published whole
    // (the rule fence_shm.cpp applies). Decided under the writer lock (the
    // commits' order), before assembling: only what goes is assembled.
    bool whole = !pending;
    auto assemble = [&](const mca::gds::Module &m, bool changes) {
        if (split) {
            // A scope never Put with has nothing to assemble.
            const unsigned used = scopes_put_.load();
            auto scoped = [&](pmix_scope_t scope) {
                return (used & (1u << scope)) != 0 ? m.assemble_modex_scope(me, scope, changes)
                                                   : mca::Result<mca::gds::Blob>(mca::gds::Blob{});
            };
            local = scoped(PMIX_LOCAL);
            remote = scoped(PMIX_REMOTE);
            global = scoped(PMIX_GLOBAL);
        } else if (changes) {
            local = m.assemble_modex_pending(me, PMIX_LOCAL);
            remote = m.assemble_modex_pending(me, PMIX_REMOTE);
        } else {
            local = m.assemble_modex(me, PMIX_LOCAL);
            remote = m.assemble_modex(me, PMIX_REMOTE);
        }
    };
    auto size = [&] {
        return local && remote && global
                   ? local.value().size() + remote.value().size() + global.value().size()
                   : std::size_t{0};
    };
    // Decided before assembling, on what the Puts since the last commit
    // weigh (put_weight), so that only the blobs that go are assembled: a
    // job that Puts its whole data again every round assembles it once.
    auto st = store->write([&](mca::gds::Module &m) {
        std::size_t weight = put_weight_.exchange(0);
        if (weight != 0) weight += kCommitHeaderWeight;
        const bool first = sent_whole_ + sent_changes_ == 0;
        if (pending && !first && 2 * (sent_changes_ + weight) >= sent_whole_) whole = true;
        if (pending && !whole) assemble(m, true);
        auto committed = m.commit(me);
        if (!committed.ok() || !pending) return committed;
        if (whole) {
            assemble(m, false);
            sent_whole_ = size();
            sent_changes_ = 0;
        } else if (first) {
            sent_whole_ = size();  // the first commit's changes are all it committed
        } else {
            sent_changes_ += size();
        }
        return committed;
    });
    if (!st.ok() || hosted) return st.code();
    if (!pending) {
        store->read([&](const mca::gds::Module &m) {
            assemble(m, false);
            return 0;
        });
    }
    if (!local || !remote || !global) {
        return !local ? local.status().code()
                      : (!remote ? remote.status().code() : global.status().code());
    }
    // Counted before the frame leaves: a peer's Get after a shared-memory
    // fence waits at the server for this commit (wire/shm_fence.hpp).
    wire::ShmArea *mine = nullptr;
    if (auto seg = fence_segment()) {
        {
            std::lock_guard lock(shm_mutex_);
            if (me.rank < areas_.size()) mine = areas_[me.rank].get();  // fixed until finalize
        }
        // With fence areas: kept for this process's next collecting fence
        // through the barrier (fence_shm.cpp), counted under the same lock.
        // What its peers on this node see: the LOCAL values and the GLOBAL ones.
        std::lock_guard pub(pub_mutex_);
        seg->count_commit(me.rank);
        if (pub_on_) {
            const auto *l = reinterpret_cast<const std::uint8_t *>(local.value().data());
            const auto *g = reinterpret_cast<const std::uint8_t *>(global.value().data());
            if (whole) {
                // The whole of what it committed.
                pub_bytes_.assign(l, l + local.value().size());
                pub_whole_ = true;
                ++pub_epoch_;
            } else {
                pub_bytes_.insert(pub_bytes_.end(), l, l + local.value().size());
            }
            pub_bytes_.insert(pub_bytes_.end(), g, g + global.value().size());
            if (whole) pub_total_ = pub_bytes_.size();
        }
    }
    std::lock_guard held(held_commit_mutex_);
    bool hold = false;
    if (whole && mine != nullptr && !mine->commits_wanted()) {
        std::lock_guard pub(pub_mutex_);
        hold = pub_on_;  // its peers read it in its area
    }
    // A held commit carries its count (held_frame appends it when it goes).
    const auto flags = static_cast<std::uint8_t>((whole ? wire::kCommitWhole : 0) |
                                                 (split ? wire::kCommitGlobal : 0) |
                                                 (hold ? wire::kCommitCount : 0));
    if (hold) {
        // Held back: the next whole one replaces it, the next frame takes it.
        const std::uint32_t before = held_commit_ ? held_commit_->count : 0;
        held_commit_ = HeldCommit{std::move(local).value(), std::move(remote).value(),
                                  std::move(global).value(), flags, before + 1};
        // The server asked for this process's commits meanwhile
        // (Modex::ask_for_commits sets the flag, then says so).
        if (!mine->commits_wanted()) return PMIX_SUCCESS;
        return flush_held_locked() ? PMIX_SUCCESS : PMIX_ERR_LOST_CONNECTION;
    }
    if (!flush_held_locked()) return PMIX_ERR_LOST_CONNECTION;
    auto body = commit_body(local.value(), remote.value(), global.value(), flags).take();
    // Written from the caller's thread when nothing is queued before it (the
    // order of frames is kept, send_direct): the progress thread is not woken.
    if (send_direct_now(Command::commit, body, ReplyHandler())) return PMIX_SUCCESS;
    const bool posted = ProgressEngine::instance().post([this, b = std::move(body)] {
        if (!channel_ ||
            !channel_->send(static_cast<std::uint16_t>(Command::commit), next_tag_++, 0, b)) {
            log()->warn("client: commit not sent: the connection to the server is gone");
        }
    });
    return posted ? PMIX_SUCCESS : PMIX_ERR_LOST_CONNECTION;
}

void Client::fence_async(std::vector<pmix_proc_t> procs, bool collect, std::uint32_t timeout_s,
                         std::shared_ptr<wire::InfoArray> info,
                         std::function<void(pmix_status_t)> done) {
    if (!connected()) {
        // A server process fencing with itself only: nothing to wait for.
        done(has_view() ? PMIX_SUCCESS : PMIX_ERR_INIT);
        return;
    }
    // The server may arrive in the barrier for this process: the peers'
    // bytes held in their areas are copied first (fence_shm.cpp).
    settle_held([](const Held &) { return true; }, "before a fence through the server");
    // The caller's directives, and (a collecting fence, the job's data
    // segment mapped) that the server may answer with data in the segment.
    std::vector<pmix_info_t> directives;
    if (info) directives.assign(info->data(), info->data() + info->size());
    if (collect && fence_data_segment()) {
        pmix_info_t reads{};
        std::strncpy(reads.key, wire::PMIXPP_FENCE_DATA_KEY, PMIX_MAX_KEYLEN);
        reads.value.type = PMIX_BOOL;
        reads.value.data.flag = true;
        directives.push_back(reads);
    }
    auto body = BodyWriter()
                    .procs(procs.data(), procs.size())
                    .boolean(collect)
                    .u32(timeout_s)
                    .infos(directives.data(), directives.size())
                    .take();
    // The server enforces the timeout too; bounded_request is the backstop.
    bounded_request(Command::fence, std::move(body), timeout_s,
                    [this, done = std::move(done)](pmix_status_t s, BodyReader &r) {
                        std::vector<std::uint8_t> stream;
                        std::vector<pmix_rank_t> refetch;
                        if (s == PMIX_SUCCESS && !r.bytes(stream)) s = PMIX_ERR_UNPACK_FAILURE;
                        if (s == PMIX_SUCCESS) s = store_fence_data(stream, r, refetch);
                        if (refetch.empty()) {
                            done(s);
                            return;
                        }
                        // Peers whose data this process missed: asked of the server first.
                        refetch_peers(std::move(refetch), [done, s] { done(s); });
                    });
}

void Client::get_async(const pmix_proc_t &target, std::string key, GetDirectives d,
                       std::shared_ptr<wire::InfoArray> info, ValueDone done) {
    const char *k = key.empty() ? nullptr : key.c_str();
    std::span<const pmix_info_t> quals = info ? info->span() : std::span<const pmix_info_t>{};
    pmix_value_t *value = nullptr;
    // PMIX_GET_REFRESH_CACHE: a remote process's data is asked of the server again.
    const bool refresh = refresh_cache_requested(quals) && should_ask_server(target, k, d);
    pmix_status_t rc = refresh ? PMIX_ERR_NOT_FOUND : lookup(target, k, quals, &value);
    if (rc == PMIX_SUCCESS || !should_ask_server(target, k, d)) {
        done(rc, value);
        release_value(value);
        return;
    }
    auto once = std::make_shared<ValueDone>(std::move(done));
    std::uint64_t timer = 0;
    if (d.timeout_s > 0) {
        timer = ProgressEngine::instance().after(std::chrono::seconds(d.timeout_s), [once] {
            if (*once) {
                auto fn = std::move(*once);
                *once = nullptr;
                fn(PMIX_ERR_TIMEOUT, nullptr);
            }
        });
    }
    auto body = BodyWriter()
                    .proc(target)
                    .str(key)
                    .boolean(d.immediate)
                    .u32(d.timeout_s)
                    .infos(info ? info->data() : nullptr, info ? info->size() : 0)
                    .take();
    request(
        Command::get, std::move(body),
        [this, once, timer, target, key, info](pmix_status_t s, BodyReader &r) {
            if (timer != 0) ProgressEngine::instance().cancel(timer);
            if (!*once) return;
            auto fn = std::move(*once);
            *once = nullptr;
            if (s == PMIX_SUCCESS) {
                std::vector<std::uint8_t> job, stream;
                r.bytes(job);
                r.bytes(stream);
                if (!r.finished()) {
                    fn(PMIX_ERR_UNPACK_FAILURE, nullptr);
                    return;
                }
                if (!job.empty()) {
                    std::shared_ptr<gds_base::Datastore> store;
                    {
                        std::shared_lock lock(view_mutex_);
                        store = store_;
                    }
                    if (store) {
                        auto st = store->write([&](mca::gds::Module &m) {
                            return m.store_job(
                                std::string_view(target.nspace,
                                                 strnlen(target.nspace, PMIX_MAX_NSLEN)),
                                std::span<const std::byte>(
                                    reinterpret_cast<const std::byte *>(job.data()), job.size()));
                        });
                        (void)st;
                    }
                }
                store_stream(stream);
            }
            pmix_value_t *v = nullptr;
            pmix_status_t rc2 = s;
            if (s == PMIX_SUCCESS) {
                rc2 = lookup(target, key.empty() ? nullptr : key.c_str(),
                             info ? info->span() : std::span<const pmix_info_t>{}, &v);
            }
            fn(rc2, v);
            release_value(v);
        });
}

}  // namespace pmixpp::client
