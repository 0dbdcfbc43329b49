// The commands of the client/server protocol and the layout of their bodies.
//
// Every request is answered by one reply frame (same command and tag,
// kFlagReply). A reply body always starts with an i32 PMIx status; the rest
// is present only on success unless stated. Requests are sent in order on one
// connection and the server handles them in order, so a COMMIT is always seen
// before a FENCE that follows it.
//
// Adding a request type: one value here, one server handler registered in
// server/handlers table (framework/server/README.md) and one client function
// that sends it and handles the reply (framework/client/README.md).
#pragma once

#include <array>
#include <cstdint>

namespace pmixpp::wire {

// The connection protocol a client or tool speaks, sent first in its
// handshake. 2: a commit's body carries the flags byte and, flagged, the GLOBAL
// values once (wire/commit_flags.hpp). A server accepts every version from
// kOldestProtocolVersion to its own (it still reads a version-1 commit, the
// two blobs alone) and refuses a newer one with PMIX_ERR_NOT_SUPPORTED and
// both numbers, so a client newer than its server fails in PMIx_Init, not
// at its first commit ("malformed commit": a version-1 server's reading).
inline constexpr std::uint32_t kProtocolVersion = 2;
inline constexpr std::uint32_t kOldestProtocolVersion = 1;

// The environment variables that carry a server's URI ("<nspace>.<rank>;<uri>")
// to the processes it starts, one per generation of the PMIx connection
// protocol, newest first: 4.1, 4.0, 3, 2.1, 2.0. The PMIx standard defines
// only the PMIX_SERVER_URI attribute; these names are the convention PMIx
// clients look for (OpenPMIx's v4.1 client reads PMIX_SERVER_URI41 first).
// A server sets every one; a client or tool takes the first that is set.
inline constexpr std::array<const char *, 5> kServerUriVariables = {
    "PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3", "PMIX_SERVER_URI21",
    "PMIX_SERVER_URI2"};

enum class Command : std::uint16_t {
    // req: u32 protocol, u8 role (Role), proc (nspace, rank), str secret,
    //      u32 uid, u32 gid, u32 pid, infos (the PMIx_Init info)
    // rep: i32 status, str reason (always), then on success:
    //      proc server, bytes job blob (gds assemble_job of the client's nspace)
    //      Role::tool (server/tool.cpp): proc = the identity asked for (empty
    //      nspace: none), secret empty, infos = the PMIx_tool_init info;
    //      rep on success: proc server, proc the tool's identity.
    handshake = 1,
    // req: infos. rep: i32 status. The server closes the connection after it.
    finalize = 2,
    // req: i32 status, str message, procs. rep: i32 status.
    abort = 3,
    // req: bytes local blob, bytes remote blob (what changed since the
    //      previous commit), u8 flags [, bytes global blob] [, u32 count]
    //      (wire/commit_flags.hpp; no flags from an older client). no reply.
    //      Kept undecoded (server/modex.hpp).
    commit = 4,
    // req: procs (empty: the caller's whole nspace), u8 collect, u32 timeout s
    //      (0: none), infos. rep: i32 status, bytes modex record stream.
    fence = 5,
    // req: proc, str key (empty: all keys), u8 immediate, u32 timeout s, infos.
    // rep: i32 status, bytes job blob (may be empty: nspace of proc),
    //      bytes modex record stream.
    get = 6,
    // req: u32 generation: a shared-memory fence generation with proxied
    //      arrivals completed (wire/shm_fence.hpp). no reply.
    fence_shm_done = 7,
    // Server to client, unsolicited: a Get (or direct modex) waits for a
    // commit the fence segment counts and the server has not received: send
    // the commits held back (client/README.md, "Commits held back"). No body,
    // no reply; a client that holds none (or an older one) ignores it.
    commit_flush = 8,

    // Publish/lookup, query, job control, log (server/publish.cpp,
    // server/query.cpp, server/job_control.cpp). Numbered from 16.
    // req: infos (data + directives). rep: i32 status.
    publish = 16,
    // req: u32 n, n x str key, infos. rep: i32 status, then (also on
    //      PMIX_ERR_PARTIAL_SUCCESS) procs publishers, infos key=value (parallel).
    lookup = 17,
    // req: u32 n, n x str key (n = 0: every key of the caller), infos. rep: i32 status.
    unpublish = 18,
    // req: u32 n, n x (u32 m, m x str key, infos qualifiers).
    // rep: i32 status, then (also on PMIX_ERR_PARTIAL_SUCCESS) u32 n, n x infos
    //      (the key=value results of each query, in order).
    query = 19,
    // req: procs targets (empty: the caller's nspace), infos directives.
    // rep: i32 status, infos results.
    job_control = 20,
    // req: infos data, infos directives. rep: i32 status.
    log = 21,

    // Process management (server/spawn.cpp, server/connect.cpp). Numbered
    // from 32 so that request types added above do not collide with these.
    // req: infos job_info, bytes apps (u64 count + codec encode() of that many
    //      PMIX_APP elements).
    // rep: i32 status, str nspace of the new job, bytes its job blob (may be
    //      empty).
    spawn = 32,
    // req: procs (never empty), u32 timeout s (0: none), infos.
    // rep: i32 status, u32 n, n x (str nspace, bytes job blob), bytes modex
    //      record stream (the committed data of the participants).
    connect = 33,
    // req: procs (never empty), u32 timeout s (0: none), infos. rep: i32 status.
    disconnect = 34,

    // Events (server/events.cpp, client/events.cpp; framework/event/README.md).
    // An event payload is: i32 status, proc source, u8 range, infos.
    // req: u64 registration id (the client's), u32 n, n x i32 code, infos
    //      (the registration's filters: RegistrationSpec::filter_info).
    // rep: i32 status. Matching cached events follow as `event` messages.
    register_events = 48,
    // req: u64 registration id. rep: i32 status.
    deregister_events = 49,
    // req: event payload (range never PROC_LOCAL). rep: i32 status.
    notify = 50,
    // Server -> client, no reply: u8 targeted, u64 registration id (targeted:
    // a cached event replayed to that registration only), event payload.
    event = 51,

    // IO forwarding (server/iof.cpp, client/iof.cpp; docs/iof.md). Numbered from 64.
    // req: u64 registration id (the client's), procs sources (never empty),
    //      u32 channel mask, infos directives.
    // rep: i32 status. Cached matching output follows as `iof` messages.
    iof_pull = 64,
    // req: u64 registration id, infos directives. rep: i32 status
    //      (PMIX_ERR_NOT_FOUND: no such registration).
    iof_deregister = 65,
    // Server -> client, no reply: u64 registration id, proc source,
    //      u32 channel, bytes payload, infos (the deliverer's metadata).
    iof = 66,
    // req: procs targets, bytes payload (empty: end of stream, with
    //      PMIX_IOF_COMPLETE among the directives), infos directives.
    // rep: i32 status (the host's push_stdin answer; no upcall: NOT_SUPPORTED).
    iof_push = 67,

    // Allocation requests (server/allocation.cpp, client/allocation.cpp).
    // Numbered from 88 (job control's range).
    // req: u8 directive (pmix_alloc_directive_t), infos.
    // rep: i32 status, infos results (also on an error: the host's reason).
    allocate = 88,
    // Fabric requests of a client or tool (server/fabric_requests.cpp,
    // api/network_api.cpp; docs/network.md). Numbered from 128 (128-135).
    // req: u8 op (pmix_fabric_operation_t), infos directives.
    // rep: i32 status, infos results (the host's fabric info; on an error its reason).
    fabric = 128,
    // Monitoring (server/monitoring.cpp, client/monitor.cpp; docs/monitoring.md).
    // Numbered from 80 (80-87).
    // req: infos (exactly one: the monitor), i32 error (the alert's status),
    //      infos directives.
    // rep: i32 status, infos results (granted: PMIX_MONITOR_ID of the monitor).
    monitor = 80,
    // req: empty. no reply. A PMIX_SEND_HEARTBEAT from the sender; dropped
    //      when nothing monitors the sender's heartbeats.
    heartbeat = 81,
    // Server to client, no reply: u8 wanted (1: a monitor watches this
    //      process's heartbeats, send them; 0: none does any more). Sent when
    //      a monitor of another requestor (PMIX_MONITOR_TARGET_PROCS) starts
    //      or stops watching the client, after any reply it follows.
    heartbeat_wanted = 82,
    // Process groups (server/groups.cpp, client/groups.cpp; docs/groups.md).
    // Numbered from 96 (96-111 are the groups' range).
    // req: str group id, procs (never empty), u32 timeout s (0: none), infos
    //      directives.
    // rep: i32 status, then on success: infos results (PMIX_GROUP_ID,
    //      PMIX_GROUP_MEMBERSHIP in group-rank order, PMIX_GROUP_CONTEXT_ID
    //      when one was assigned), u32 n, n x (proc, u64 PMIX_GROUP_LOCAL_CID),
    //      u32 n, n x (str nspace, bytes job blob), bytes modex record stream
    //      (the committed data of the members).
    group_construct = 96,
    // req: str group id, u32 timeout s (0: none), infos. rep: i32 status.
    group_destruct = 97,
    // req: str group id, infos. rep: i32 status (the PMIX_GROUP_LEFT event
    //      was generated).
    group_leave = 98,
    // Invite method (server/group_invite.cpp, client/groups.cpp). All
    // participants are clients of one server.
    // req: str group id, procs invitees (never empty), u32 timeout s (0:
    //      none), infos directives. rep (when the group is complete, or its
    //      construction failed): as group_construct's, the status
    //      PMIX_SUCCESS or PMIX_ERR_PARTIAL_SUCCESS (some did not join).
    //      A second invite of the leader under the same id adds invitees.
    group_invite = 99,
    // req: str group id, proc leader (empty nspace: any), u8 opt
    //      (pmix_group_opt_t), u32 timeout s, infos. rep: accept: as
    //      group_construct's, when the group is complete; decline: i32 status at once.
    group_join = 100,
    // req: str group id, i32 event code answered, proc about, i32 decision
    //      (PMIX_SUCCESS: go on, PMIX_GROUP_CONSTRUCT_ABORT: abort), u8
    //      volunteer (a handler returned PMIX_GROUP_LEADER true). rep: i32 status.
    group_decision = 101,
    // Server -> client, no reply: str group id, event payload. The client
    // runs the event's chain among its handlers (registered or not with the
    // server) and answers with group_decision: the invitees' answers to the
    // leader (PMIX_GROUP_INVITE_ACCEPTED/_DECLINED/_FAILED) and
    // PMIX_GROUP_LEADER_FAILED to the participants.
    group_ask = 102,

    // Credentials (server/credentials.cpp, api/credential_api.cpp;
    // docs/security.md "Credentials"). Numbered from 156 (156-159).
    // req: infos directives.
    // rep: i32 status, infos: on success the credential first (key
    //      "pmixpp.cred", a PMIX_BYTE_OBJECT), then the host's info.
    get_credential = 156,
    // req: bytes credential, infos directives.
    // rep: i32 status, infos results (the host's).
    validate_credential = 157,

    // The notify area's (148-151).
    // req: event payload (range never PROC_LOCAL), as `notify`. No reply: the
    // blocking PMIx_Notify_event returns once its request is written or
    // queued (the standard: its operation is complete when the message is
    // queued, whatever becomes of the event; docs/events.md).
    notify_unanswered = 148,
};

enum class Role : std::uint8_t { client = 1, tool = 2, launcher = 3 };

// The key under which a get_credential reply carries the credential itself
// (a PMIX_BYTE_OBJECT) ahead of the host's info.
inline constexpr const char *kCredentialKey = "pmixpp.cred";

}  // namespace pmixpp::wire
