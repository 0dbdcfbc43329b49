// Framework interface "ptl": transports between PMIx processes
// (see framework/ptl/README.md for the contract).
//
// A ptl module hands the core connected, non-blocking stream sockets and what
// the kernel says about the peer. The core owns everything above that: the
// libevent loop that watches the descriptors, reading and writing, framing,
// compression and the handshake. Every usable module listens (a server offers
// one URI per transport); a client tries the URIs it was given by priority().
#pragma once

#include "pmixpp/mca/sdk_types.hpp"

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pmixpp::mca::ptl {

inline constexpr const char *kFrameworkName = "ptl";
// Interface version a component of this framework is built against. The major
// must match the core's exactly; a component minor newer than the core's is refused.
// 2.0: listen() takes a ListenRequest (1.0 took the server info alone).
inline constexpr unsigned kInterfaceMajor = 2;
inline constexpr unsigned kInterfaceMinor = 0;

// The peer's identity as vouched for by the kernel (SO_PEERCRED on AF_UNIX).
struct PeerCredentials {
    uid_t uid;
    gid_t gid;
    pid_t pid;
};

// The scheme of a URI: the text before "://" ("usock" in "usock:///tmp/s",
// "tcp4" in "tcp4://10.0.0.1:4711"); empty if the URI has none.
constexpr std::string_view uri_scheme(std::string_view uri) noexcept {
    const auto end = uri.find("://");
    return end == std::string_view::npos ? std::string_view{} : uri.substr(0, end);
}

// One connected stream socket. Destroyed on the progress thread, after the
// core has removed its events from the loop.
class PMIXPP_SDK_EXPORT Connection {
  public:
    // Closes the socket.
    virtual ~Connection() = default;

    // The socket: connected, O_NONBLOCK, FD_CLOEXEC, owned by this object
    // (the core reads, writes and polls it, and never closes it).
    virtual int fd() const = 0;

    // Who is at the other end, when the transport can prove it (AF_UNIX:
    // SO_PEERCRED, read once at accept/connect). std::nullopt when it cannot
    // (TCP): the server then relies on the per-job secret of the handshake.
    virtual std::optional<PeerCredentials> peer_credentials() const = 0;

    // The peer's address for log messages: "usock:///tmp/pmix-1000/s",
    // "tcp4://10.0.0.2:40112".
    virtual std::string describe_peer() const = 0;
};

// A listening socket. Destroyed on the progress thread, after the core has
// removed its event from the loop.
class PMIXPP_SDK_EXPORT Listener {
  public:
    // Closes the socket and removes every file the listener created (socket
    // path, rendezvous files).
    virtual ~Listener() = default;

    // The listening socket: O_NONBLOCK, FD_CLOEXEC, owned by this object. The
    // core watches it for readability and then calls accept().
    virtual int fd() const = 0;

    // How a peer reaches this listener: "<scheme>://<address>", one of the
    // module's uri_schemes(). Stable for the listener's lifetime.
    virtual std::string uri() const = 0;

    // Accept one pending connection (progress thread).
    // Errors: PMIX_ERR_WOULD_BLOCK when nothing is pending (a spurious wake-up;
    // the core just waits again); anything else is an accept failure that the
    // core logs with the message; the listener stays usable either way.
    virtual Result<std::unique_ptr<Connection>> accept() = 0;
};

// What a server asks of a transport when it starts listening (Module::listen).
struct ListenRequest {
    // The caller's init info array (PMIx_server_init, or a tool's), borrowed
    // for the call.
    std::span<const pmix_info_t> server_info;
    // Whether the framework base counts on this transport for the server's
    // local clients: the user named it in PMIX_MCA_ptl, or it is the
    // highest-priority transport selected. A transport that otherwise listens
    // only on demand (ptl_tcp, for tools) listens then; one that always
    // listens (ptl_usock) may ignore it.
    bool serve_local_clients = false;
};

// The module interface: what a component's create_module() returns.
//
// Threads: listen(), Listener and Connection methods and setup_fork() run on
// the progress thread. connect() and find_servers() run on the thread that
// initializes the process or attaches a tool (PMIx_Init, PMIx_tool_init,
// PMIx_tool_attach_to_server), which may block; they may overlap with
// progress-thread calls on this module, so state they share with those must be
// immutable after creation or guarded by the module.
class PMIXPP_SDK_EXPORT Module {
  public:
    virtual ~Module() = default;

    // The URI schemes this transport produces and connects to, e.g. {"usock"}
    // or {"tcp4", "tcp6"}. Never empty; constant for the module's lifetime.
    virtual std::vector<std::string> uri_schemes() const = 0;

    // Whether connect() understands `uri`. Default: its scheme is one of
    // uri_schemes(). Override only to refuse URIs of a known scheme that this
    // module still cannot reach (e.g. tcp6 on a host without IPv6).
    virtual bool handles_uri(std::string_view uri) const {
        const std::string_view scheme = uri_scheme(uri);
        if (scheme.empty()) return false;
        for (const std::string &own : uri_schemes()) {
            if (own == scheme) return true;
        }
        return false;
    }

    // Preference when a client holds several server URIs: the URI of the
    // module with the highest priority is tried first. Constant for the
    // module's lifetime (usually the component parameter <fw>_<comp>_priority).
    virtual int priority() const = 0;

    // Start listening as a server (PMIx_server_init) or as a tool that accepts
    // connections. The module reads what concerns it in the request's
    // server_info (PMIX_SERVER_TMPDIR, PMIX_SERVER_TOOL_SUPPORT,
    // PMIX_SERVER_SYSTEM_SUPPORT, PMIX_TCP_* ...) and writes the rendezvous
    // files those ask for; serve_local_clients says whether local clients
    // depend on it.
    // Returns the listeners opened; an empty vector means "nothing to listen
    // on in this configuration" (e.g. a TCP module when no tool support was
    // requested): not an error. An error fails server init with its message.
    virtual Result<std::vector<std::unique_ptr<Listener>>> listen(const ListenRequest &request) = 0;

    // Connect to `uri` (for which handles_uri() is true), waiting at most
    // `timeout`. One attempt: retries and the order of URIs are the core's.
    // Errors: PMIX_ERR_UNREACH (nobody listening / refused), PMIX_ERR_TIMEOUT,
    // PMIX_ERR_BAD_PARAM (malformed URI), each with a message naming the URI.
    virtual Result<std::unique_ptr<Connection>> connect(std::string_view uri,
                                                        std::chrono::milliseconds timeout) = 0;

    // The URIs of servers this transport can discover without being given a
    // URI (a tool looking for a server: rendezvous files under the tmpdirs,
    // honouring PMIX_SERVER_PIDINFO, PMIX_CONNECT_TO_SYSTEM,
    // PMIX_CONNECT_SYSTEM_FIRST, PMIX_SERVER_NSPACE in `directives`, borrowed
    // for the call). Default: none; transports without rendezvous keep it.
    virtual Result<std::vector<std::string>> find_servers(std::span<const pmix_info_t> directives) {
        (void)directives;
        return std::vector<std::string>{};
    }

    // Add what a child of this server needs from this transport to `env`
    // (PMIx_server_setup_fork). The core itself exports the listeners' URIs,
    // ordered by priority(), and the handshake secret; modules add only
    // transport-specific settings. Asked once per namespace, with child.rank
    // PMIX_RANK_WILDCARD: what it adds goes to every child of the namespace
    // (the core keeps a per-namespace template that setup_fork copies in the
    // host's thread). Default: adds nothing.
    virtual Status setup_fork(const pmix_proc_t &child, Environment &env) {
        (void)child;
        (void)env;
        return Status::success();
    }
};

}  // namespace pmixpp::mca::ptl
