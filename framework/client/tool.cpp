// The tool face (pmix_tool.h; docs/tools.md): tool_init, attach, the list of
// servers, switching, disconnecting, finalize (C entry points: api/tool_api.cpp). A tool connects
// like a client, through the same connector (connector.hpp), with Role::tool in the handshake and
// no registration by the host: the server's host approves it and settles its identity
// (server/tool.cpp). Once connected, the tool uses the client's machinery
// (event registration, notification, lost-connection event). The server is
// found by the standard's precedence chain (Chap_API_Tools, "Rendezvousing
// with a local server"), reduced to what one node needs.
#include <pmix_tool.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <spdlog/fmt/fmt.h>

#include "client/client.hpp"
#include "event/process_events.hpp"
#include "mca/logging.hpp"
#include "runtime/init_state.hpp"
#include "runtime/progress.hpp"
#include "wire/codec.hpp"
#include "wire/rendezvous.hpp"

namespace pmixpp::client {

using runtime::ProgressEngine;
using wire::BodyReader;
using wire::Channel;
using wire::Frame;

namespace {

auto log() {
    return mca::framework_logger("client");
}

using events::info_true;

std::optional<std::string> info_string(const pmix_info_t &i) {
    if (i.value.type != PMIX_STRING || i.value.data.string == nullptr) return std::nullopt;
    return std::string(i.value.data.string);
}

// "nspace.rank;uri" (the PMIX_SERVER_URI* form) or a bare URI.
std::string bare_uri(const std::string &s) {
    const auto semi = s.find(';');
    const auto scheme = s.find("://");
    if (semi != std::string::npos && (scheme == std::string::npos || semi < scheme))
        return s.substr(semi + 1);
    return s;
}

std::string dir_or_tmp(const std::optional<std::string> &given) {
    if (given) return *given;
    if (const char *e = std::getenv("TMPDIR"); e != nullptr && *e != '\0') return e;
    return "/tmp";
}

// The rendezvous file at `path` when its server runs.
std::optional<wire::Rendezvous> live_file(const std::string &path) {
    auto r = wire::read_rendezvous(path);
    if (!r || !wire::process_alive(r->pid)) return std::nullopt;
    return r;
}

std::vector<std::string> split_commas(const std::string &s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        auto pos = s.find(',', start);
        if (pos == std::string::npos) pos = s.size();
        if (pos > start) out.push_back(s.substr(start, pos - start));
        start = pos + 1;
    }
    return out;
}

// What PMIx_tool_init was asked (Chap_API_Tools, tool attributes).
struct ToolOptions {
    std::optional<std::string> nspace;
    std::optional<pmix_rank_t> rank;
    bool do_not_connect = false;
    bool connect_optional = false;
    bool launcher = false;  // PMIX_LAUNCHER: the tool starts jobs (PMIx_Spawn)
    std::optional<std::string> attachment_file;
    std::optional<std::string> server_uri;
    std::optional<std::string> tcp_uri;
    std::optional<pid_t> server_pid;
    std::optional<std::string> server_nspace;
    bool to_system = false;
    bool system_first = false;
    std::optional<std::string> server_tmpdir;
    std::optional<std::string> system_tmpdir;
    std::uint32_t max_retries = 0;
    std::uint32_t retry_delay_s = 1;
    bool external_progress = false;  // PMIX_EXTERNAL_PROGRESS: the tool drives PMIx_Progress
};

struct Failure {
    pmix_status_t status;
    std::string message;
};

// Reads the attributes; unsupported ones fail only when marked required.
std::optional<Failure> parse_options(std::span<const pmix_info_t> info, ToolOptions &o) {
    for (const auto &i : info) {
        auto is = [&](const char *key) { return PMIX_CHECK_KEY(&i, key); };
        auto bad = [&](const char *what) {
            return Failure{PMIX_ERR_BAD_PARAM, fmt::format("{} must be {}", i.key, what)};
        };
        if (is(PMIX_TOOL_NSPACE)) {
            auto s = info_string(i);
            if (!s || s->empty() || s->size() > PMIX_MAX_NSLEN) return bad("a non-empty string");
            o.nspace = *s;
        } else if (is(PMIX_TOOL_RANK)) {
            auto r = wire::as_uint(i.value);
            if (!r || *r > PMIX_RANK_VALID) return bad("a valid rank");
            o.rank = static_cast<pmix_rank_t>(*r);
        } else if (is(PMIX_TOOL_DO_NOT_CONNECT)) {
            o.do_not_connect = info_true(i);
        } else if (is(PMIX_TOOL_CONNECT_OPTIONAL)) {
            o.connect_optional = info_true(i);
        } else if (is(PMIX_LAUNCHER)) {
            o.launcher = info_true(i);
        } else if (is(PMIX_EXTERNAL_PROGRESS)) {
            o.external_progress = info_true(i);
        } else if (is(PMIX_TOOL_ATTACHMENT_FILE)) {
            auto s = info_string(i);
            if (!s) return bad("a path");
            o.attachment_file = *s;
        } else if (is(PMIX_SERVER_URI)) {
            auto s = info_string(i);
            if (!s) return bad("a URI string");
            o.server_uri = bare_uri(*s);
        } else if (is(PMIX_TCP_URI)) {
            auto s = info_string(i);
            if (!s) return bad("a URI string");
            o.tcp_uri = bare_uri(*s);
        } else if (is(PMIX_SERVER_PIDINFO)) {
            auto p = wire::as_uint(i.value);
            if (!p || *p == 0) return bad("a pid");
            o.server_pid = static_cast<pid_t>(*p);
        } else if (is(PMIX_CONNECT_MAX_RETRIES)) {
            auto n = wire::as_uint(i.value);
            if (!n) return bad("a count");
            o.max_retries = static_cast<std::uint32_t>(std::min<std::uint64_t>(*n, 1000));
        } else if (is(PMIX_CONNECT_RETRY_DELAY)) {
            auto n = wire::as_uint(i.value);
            if (!n) return bad("a number of seconds");
            o.retry_delay_s = static_cast<std::uint32_t>(std::min<std::uint64_t>(*n, 3600));
        } else if (is(PMIX_SERVER_NSPACE)) {
            auto s = info_string(i);
            if (!s || s->empty() || s->size() > PMIX_MAX_NSLEN) return bad("a namespace");
            o.server_nspace = *s;
        } else if (is(PMIX_CONNECT_TO_SYSTEM)) {
            o.to_system = info_true(i);
        } else if (is(PMIX_CONNECT_SYSTEM_FIRST)) {
            o.system_first = info_true(i);
        } else if (is(PMIX_SERVER_TMPDIR) || is(PMIX_SYSTEM_TMPDIR)) {
            auto s = info_string(i);
            if (!s || s->empty()) return bad("a directory");
            (is(PMIX_SERVER_TMPDIR) ? o.server_tmpdir : o.system_tmpdir) = *s;
        } else if (PMIX_INFO_IS_REQUIRED(&i)) {
            return Failure{PMIX_ERR_NOT_SUPPORTED,
                           fmt::format("required attribute {} is not supported", i.key)};
        }
    }
    if (o.server_uri && o.tcp_uri)
        return Failure{PMIX_ERR_BAD_PARAM, "PMIX_SERVER_URI and PMIX_TCP_URI are exclusive"};
    if (o.tcp_uri && o.tcp_uri->rfind("tcp", 0) != 0)
        return Failure{PMIX_ERR_BAD_PARAM, "PMIX_TCP_URI " + *o.tcp_uri + " is not a tcp URI"};
    return std::nullopt;
}

// Finds the server `opt` directs to and handshakes with it as `requested`
// (caller's thread; blocks). nullopt: connected (`out`, `assigned`).
std::optional<Failure> reach_server(const ToolOptions &opt, std::span<const pmix_info_t> info,
                                    const pmix_proc_t &requested,
                                    const ptl_base::Transports &transports, Handshaken &out,
                                    pmix_proc_t &assigned) {
    // The candidates, by the standard's precedence (docs/tools.md, "How a
    // tool finds its server"); `insist`: the caller named this server, so its
    // failure is the answer (no fall-through).
    const std::string system_file =
        dir_or_tmp(opt.system_tmpdir) + "/" + wire::system_rendezvous_name();
    const std::string session_dir = dir_or_tmp(opt.server_tmpdir);
    std::vector<std::string> uris;
    std::string source;
    bool insist = true;
    auto use = [&](const wire::Rendezvous &r, std::string what) {
        uris = r.uris;
        source = fmt::format("{} ({}, server {} pid {})", what, r.path, r.nspace, r.pid);
    };
    auto discover = [&]() -> std::optional<Failure> {
        uris.clear();
        insist = true;
        if (opt.attachment_file) {
            auto r = wire::read_rendezvous(*opt.attachment_file);
            if (!r)
                return Failure{PMIX_ERR_NOT_FOUND,
                               "cannot read a server URI from the attachment "
                               "file " +
                                   *opt.attachment_file};
            use(*r, "the attachment file");
        } else if (opt.server_uri || opt.tcp_uri) {
            uris.push_back(opt.server_uri ? *opt.server_uri : *opt.tcp_uri);
            source = "PMIX_SERVER_URI " + uris.back();
        } else if (opt.server_pid || opt.server_nspace) {
            const std::string tag =
                opt.server_pid ? std::to_string(*opt.server_pid) : *opt.server_nspace;
            auto matches = [&](const wire::Rendezvous &r) {
                return opt.server_pid ? r.pid == *opt.server_pid : r.nspace == *opt.server_nspace;
            };
            auto r = live_file(session_dir + "/" + wire::session_rendezvous_name(tag));
            if (!r || !matches(*r)) r = live_file(system_file);
            if (!r || !matches(*r))
                return Failure{PMIX_ERR_NOT_FOUND,
                               fmt::format("no live PMIx server with {} {} on this node (no "
                                           "rendezvous file {}/{} nor a matching {}; the server "
                                           "needs PMIX_SERVER_TOOL_SUPPORT, _SESSION_SUPPORT or "
                                           "_SYSTEM_SUPPORT)",
                                           opt.server_pid ? "pid" : "namespace", tag, session_dir,
                                           wire::session_rendezvous_name(tag), system_file)};
            use(*r, opt.server_pid ? "the rendezvous file of server pid " + tag
                                   : "the rendezvous file of server namespace " + tag);
        } else if (opt.to_system) {
            auto r = live_file(system_file);
            if (!r)
                return Failure{PMIX_ERR_UNREACH,
                               "PMIX_CONNECT_TO_SYSTEM: no system server on this node (no live "
                               "rendezvous file " +
                                   system_file + ")"};
            use(*r, "the system server");
        } else if (auto r = opt.system_first ? live_file(system_file) : std::nullopt) {
            use(*r, "the system server (PMIX_CONNECT_SYSTEM_FIRST)");
        } else if (const char *all = std::getenv("PMIXPP_SERVER_URIS"); all && *all) {
            uris = split_commas(all);
            source = "PMIXPP_SERVER_URIS";
        } else {
            for (const char *name : wire::kServerUriVariables) {
                if (const char *v = std::getenv(name); v != nullptr && *v != '\0') {
                    uris.push_back(bare_uri(v));
                    source = name;
                    break;
                }
            }
            if (!uris.empty()) return std::nullopt;
            // No direction: the system server, then the one session server.
            if (auto sys = live_file(system_file)) {
                use(*sys, "the system server");
                return std::nullopt;
            }
            auto servers = wire::list_session_servers(session_dir);
            if (servers.empty())
                return Failure{PMIX_ERR_UNREACH,
                               "no PMIx server found: no PMIX_SERVER_URI* in the environment, no "
                               "system server (" +
                                   system_file +
                                   ") and no session server's "
                                   "rendezvous file in " +
                                   session_dir + " (give PMIX_SERVER_URI or PMIX_SERVER_PIDINFO)"};
            if (servers.size() > 1) {
                std::string names;
                for (const auto &r : servers)
                    names += fmt::format("{}pid {} (namespace {})", names.empty() ? "" : ", ",
                                         r.pid, r.nspace);
                return Failure{PMIX_ERR_BAD_PARAM,
                               fmt::format("{} session servers on this node and no "
                                           "PMIX_SERVER_PIDINFO or PMIX_SERVER_NSPACE to choose "
                                           "one: {}",
                                           servers.size(), names)};
            }
            use(servers.front(), "the only session server");
        }
        return std::nullopt;
    };

    HandshakeRequest request;
    request.body = handshake_body(wire::Role::tool, requested, "", info);
    request.read_payload = [&assigned](BodyReader &r) { return r.proc(assigned); };
    Failure result{PMIX_ERR_UNREACH, ""};
    const std::uint32_t attempts = opt.max_retries + 1;
    for (std::uint32_t n = 0; n < attempts; ++n) {
        if (n > 0) std::this_thread::sleep_for(std::chrono::seconds(opt.retry_delay_s));
        if (auto f = discover()) {
            result = *f;
            continue;
        }
        request.uris = uris;
        request.search = insist ? Search::first_server : Search::until_accepted;
        auto r = handshake(transports, request);
        if (r) {
            out = std::move(r).value();
            return std::nullopt;
        }
        result = {r.status().code(),
                  fmt::format("cannot connect to {}: {}", source, r.status().message())};
        // A server that answered and refused: retrying will not change its mind.
        if (result.status != PMIX_ERR_UNREACH && result.status != PMIX_ERR_TIMEOUT) break;
    }
    return result;
}

}  // namespace

pmix_status_t Client::tool_init(std::span<const pmix_info_t> info, pmix_proc_t *proc) {
    ToolOptions opt;
    if (auto f = parse_options(info, opt)) {
        log()->error("PMIx_tool_init: {}", f->message);
        return f->status;
    }
    pmix_proc_t requested{};
    requested.rank = PMIX_RANK_UNDEF;
    if (opt.nspace) {
        std::memcpy(requested.nspace, opt.nspace->data(), opt.nspace->size());
        requested.rank = opt.rank.value_or(0);
    }
    auto &engine = ProgressEngine::instance();
    auto standalone = [&]() -> pmix_status_t {
        if (auto st = engine.acquire(opt.external_progress); !st.ok()) {
            log()->error("PMIx_tool_init: {}", st.message());
            return st.code();
        }
        {
            std::unique_lock lock(view_mutex_);
            self_ = requested;
            self_hosted_ = false;
        }
        engine.post([requested] { events::ProcessEvents::instance().set_self(requested); });
        if (proc != nullptr) *proc = requested;
        return PMIX_SUCCESS;
    };
    if (opt.do_not_connect) return standalone();

    auto transports = ptl_base::Transports::acquire();
    if (!transports) {
        log()->error("PMIx_tool_init: {}", transports.status().message());
        return transports.status().code();
    }
    auto store = gds_base::Datastore::acquire();
    if (!store) {
        log()->error("PMIx_tool_init: {}", store.status().message());
        return store.status().code();
    }

    if (auto st = engine.acquire(opt.external_progress); !st.ok()) {
        log()->error("PMIx_tool_init: {}", st.message());
        return st.code();
    }
    pmix_proc_t assigned{};
    std::optional<Handshaken> connected{Handshaken{}};
    auto failed = reach_server(opt, info, requested, *transports.value(), *connected, assigned);
    if (failed) connected.reset();
    const Failure result = failed.value_or(Failure{PMIX_SUCCESS, ""});
    if (!connected) {
        engine.release();
        if (opt.connect_optional) {
            log()->info("PMIx_tool_init: continuing unconnected (PMIX_TOOL_CONNECT_OPTIONAL): {}",
                        result.message);
            return standalone();
        }
        log()->error("PMIx_tool_init: {} ({})", result.message, PMIx_Error_string(result.status));
        return result.status;
    }
    adopt(std::move(*connected), transports.value(), wire::Role::tool, "PMIx_tool_init");
    const pmix_proc_t me = assigned;
    {
        std::unique_lock lock(view_mutex_);
        store_ = store.value();
        self_ = me;
        self_hosted_ = false;
    }
    engine.post([me] { events::ProcessEvents::instance().set_self(me); });
    // Launches need PMIX_LAUNCHER (standard, "Launching Applications with
    // Tools"; docs/tools.md, "Launchers").
    tool_launcher_ = opt.launcher;
    if (proc != nullptr) *proc = me;
    return PMIX_SUCCESS;
}

namespace {

bool same_proc(const pmix_proc_t &a, const pmix_proc_t &b) {
    return a.rank == b.rank && std::strncmp(a.nspace, b.nspace, PMIX_MAX_NSLEN) == 0;
}

}  // namespace

pmix_status_t Client::tool_attach(std::span<const pmix_info_t> info, pmix_proc_t *myproc,
                                  pmix_proc_t *server) {
    ToolOptions opt;
    if (auto f = parse_options(info, opt)) {
        log()->error("PMIx_tool_attach_to_server: {}", f->message);
        return f->status;
    }
    bool primary = false;
    for (const auto &i : info) {
        if (PMIX_CHECK_KEY(&i, PMIX_PRIMARY_SERVER)) primary = info_true(i);
    }
    auto transports = ptl_base::Transports::acquire();
    if (!transports) return transports.status().code();
    // The tool keeps its identity: the next server is asked for the same one.
    pmix_proc_t requested = self();
    if (strnlen(requested.nspace, PMIX_MAX_NSLEN) == 0) requested.rank = PMIX_RANK_UNDEF;
    Handshaken link;
    pmix_proc_t assigned{};
    if (auto f = reach_server(opt, info, requested, *transports.value(), link, assigned)) {
        log()->error("PMIx_tool_attach_to_server: {} ({})", f->message,
                     PMIx_Error_string(f->status));
        return f->status;
    }
    const pmix_proc_t srv = link.server;
    if (!connected()) {
        // An unconnected tool: this server becomes its only one.
        auto store = gds_base::Datastore::acquire();
        if (!store) return store.status().code();
        adopt(std::move(link), transports.value(), wire::Role::tool, "PMIx_tool_attach_to_server");
        {
            std::unique_lock lock(view_mutex_);
            store_ = store.value();
            self_ = assigned;
        }
        ProgressEngine::instance().post(
            [assigned] { events::ProcessEvents::instance().set_self(assigned); });
    } else {
        auto handover = std::make_shared<Handshaken>(std::move(link));
        pmix_status_t rc = PMIX_SUCCESS;
        ProgressEngine::instance().run_sync([&] {
            auto ch = Channel::open(
                std::move(handover->connection),
                [this](Channel &c, Frame &&f) { on_frame(c, std::move(f)); },
                [this](Channel &c, const std::string &why) { on_close(c, why); });
            if (!ch) {
                rc = PMIX_ERR_UNREACH;
                return;
            }
            others_.emplace_back(srv, ch);
            for (auto &f : handover->early) on_frame(*ch, std::move(f));
        });
        if (rc != PMIX_SUCCESS) return rc;
        if (primary) tool_set_server(srv);
    }
    if (myproc != nullptr) *myproc = assigned;
    if (server != nullptr) *server = srv;
    return PMIX_SUCCESS;
}

std::vector<pmix_proc_t> Client::tool_servers() {
    std::vector<pmix_proc_t> out;
    if (!connected()) return out;
    ProgressEngine::instance().run_sync([&] {
        if (channel_ && channel_->is_open()) out.push_back(server_);
        for (const auto &[srv, ch] : others_) out.push_back(srv);
    });
    return out;
}

pmix_status_t Client::tool_set_server(const pmix_proc_t &server) {
    if (!connected()) return PMIX_ERR_UNREACH;
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;
    ProgressEngine::instance().run_sync([&] {
        if (channel_ && channel_->is_open() && same_proc(server_, server)) {
            rc = PMIX_SUCCESS;
            return;
        }
        auto it = std::find_if(others_.begin(), others_.end(),
                               [&](const auto &o) { return same_proc(o.first, server); });
        if (it == others_.end()) return;
        auto next = std::move(*it);
        others_.erase(it);
        if (channel_ && channel_->is_open()) others_.emplace_back(server_, channel_);
        server_ = next.first;
        channel_ = std::move(next.second);
        lost_event_.reset();  // a live current server again (client.hpp)
        rc = PMIX_SUCCESS;
    });
    return rc;
}

pmix_status_t Client::tool_disconnect(const pmix_proc_t &server) {
    if (!connected()) return PMIX_ERR_UNREACH;
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;
    ProgressEngine::instance().run_sync([&] {
        std::shared_ptr<Channel> gone;
        if (channel_ && same_proc(server_, server)) {
            // The current server: the next one (if any) takes its place.
            gone = std::move(channel_);
            channel_.reset();
            if (!others_.empty()) {
                server_ = others_.front().first;
                channel_ = std::move(others_.front().second);
                others_.erase(others_.begin());
                lost_event_.reset();
            }  // else: no channel, requests fail with PMIX_ERR_LOST_CONNECTION
        } else {
            auto it = std::find_if(others_.begin(), others_.end(),
                                   [&](const auto &o) { return same_proc(o.first, server); });
            if (it == others_.end()) return;
            gone = std::move(it->second);
            others_.erase(it);
        }
        gone->close("disconnected by the tool");  // its pending requests fail (on_close)
        rc = PMIX_SUCCESS;
    });
    return rc;
}

pmix_status_t Client::tool_finalize() {
    tool_launcher_ = true;                 // a later PMIx_Init's process is no tool
    if (connected()) return finalize({});  // releases the progress engine
    ProgressEngine::instance().release();
    return PMIX_SUCCESS;
}

}  // namespace pmixpp::client
