// Tools: the server's side of tool connections (PMIx_tool_init; docs/tools.md).
//
// A tool is not registered by the host beforehand: it sends the handshake
// with Role::tool, which the connection part (server.cpp) hands to
// handshake() here. The service checks the tool's uid/gid as the transport
// allows and asks the host's tool_connected upcall to approve it and settle
// its identity (standard, Chap_API_Tools and Chap_API_Security: a host that
// does not provide the upcall, or passed none of PMIX_SERVER_TOOL_SUPPORT,
// _SYSTEM_SUPPORT, _SESSION_SUPPORT, gets every tool refused). An accepted
// tool is kept as a ClientRecord of its own nspace in the ClientTable, so
// event registration, notification and routing treat it as any local client
// whose nspace is its own; this service owns which records are tools and
// which nspaces were made for them, and removes both when the tool departs.
//
// Threads: progress thread only; the host's tool_connected callback (any
// thread, any time, or inline) is thread-shifted before it touches anything.
#pragma once

#include <pmix_server.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>

#include "server/client_table.hpp"
#include "server/upcalls.hpp"
#include "wire/channel.hpp"
#include "wire/message.hpp"

namespace pmixpp::server {

// What the connection part does with a handshake's outcome (server.cpp owns
// the channels and their peers).
struct HandshakeOutcome {
    // Answers `request` with `status` and `reason`, then closes the channel.
    std::function<void(wire::Channel &, const wire::Frame &request, pmix_status_t status,
                       const std::string &reason)>
        refuse;
    // The channel's peer is now `key` (authenticated).
    std::function<void(wire::Channel &, const ProcKey &key)> accepted;
};

class Tools final : public DepartureListener {
  public:
    // `self`: the server's identity (read at each handshake; it is set at start).
    Tools(ClientTable &clients, const HostUpcalls &host, const pmix_proc_t &self,
          HandshakeOutcome outcome);

    // PMIx_server_init: whether the host accepts tools (any of
    // PMIX_SERVER_TOOL_SUPPORT, _SYSTEM_SUPPORT, _SESSION_SUPPORT true).
    void configure(std::span<const pmix_info_t> info);
    // PMIx_server_finalize: every tool is forgotten (the client table is cleared too).
    void clear();

    bool is_tool(const ProcKey &key) const { return tools_.count(key) != 0; }
    bool accepts_tools() const noexcept { return support_; }

    // A Role::tool handshake asking for `requested` (empty nspace: the host
    // names it), with the uid/gid/pid it claims and its PMIx_tool_init info.
    void handshake(wire::Channel &ch, const wire::Frame &frame, const pmix_proc_t &requested,
                   std::uint32_t uid, std::uint32_t gid, std::uint32_t pid, wire::InfoArray info);

    // The host approved a tool as `proc`: kept as a connected ClientRecord of
    // its own nspace (the tool's nspace made here). PMIX_ERR_BAD_PARAM: an
    // empty nspace; PMIX_ERR_INVALID_CRED: the identity is in use (a job's
    // nspace, or a connected tool's); `reason` says which.
    pmix_status_t admit(const pmix_proc_t &proc, uid_t uid, gid_t gid, std::uint32_t pid,
                        std::shared_ptr<wire::Channel> channel, std::string &reason);
    // A departed tool: its record goes (and its nspace's, when empty).
    void client_departed(const ProcKey &client, Departure why) override;

  private:
    ClientTable &clients_;
    const HostUpcalls &host_;
    const pmix_proc_t &self_;
    HandshakeOutcome outcome_;
    bool support_ = false;
    std::set<ProcKey> tools_;          // connected tools (each a ClientRecord of its nspace)
    std::set<std::string> tool_jobs_;  // the nspaces created for them
};

}  // namespace pmixpp::server
