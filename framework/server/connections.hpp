// Connections: the server's listeners, the accepted channels and who is on
// each, the handshake that turns a channel into a client's, and the requests
// that end a client's connection life (finalize, abort). Every frame from a
// peer enters here (on_frame) and is dispatched through the RequestTable; a
// channel that ends without a finalize is the client's `lost` departure.
//
// Owns: listeners_ (with their accept events and URIs, best first) and
// channels_ (each accepted channel with its peer record). Depends on
// ClientTable (jobs, records, departures), HostUpcalls (client_connected2 /
// client_connected, client_finalized, abort), RequestTable, and on the rest
// of the server only through ConnectionHooks. Progress thread only.
#pragma once

#include <pmix_server.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ptl/ptl_base.hpp"
#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"
#include "wire/channel.hpp"
#include "wire/message.hpp"

struct event;

namespace pmixpp::server {

// What Connections needs from the rest of the server, as functions.
struct ConnectionHooks {
    // The job-level blob a client's handshake reply carries.
    std::function<std::vector<std::uint8_t>(const std::string &nspace)> job_blob;
    // A client of `nspace` (re)connected (Collectives: it may mend a barrier).
    std::function<void(const std::string &nspace)> client_connected;
    // Whether `key` is a connected tool (tools have no host finalize upcall).
    std::function<bool(const ProcKey &key)> is_tool;
    // A handshake with Role::tool, after the protocol check: the tools'
    // part answers it (refuse() or authenticate() + reply).
    std::function<void(wire::Channel &, wire::Frame &, const pmix_proc_t &requested,
                       std::uint32_t uid, std::uint32_t gid, std::uint32_t pid,
                       wire::InfoArray info)>
        tool_handshake;
};

class Connections : public DepartureListener {
  public:
    Connections(ClientTable &clients, HostUpcalls &host, RequestTable &requests,
                const pmix_proc_t &self, ConnectionHooks hooks);
    Connections(const Connections &) = delete;
    Connections &operator=(const Connections &) = delete;

    // Opens every transport's listeners and watches them. An error (a
    // transport failed, or none opened a listener) leaves nothing open.
    mca::Status listen(ptl_base::Transports &transports, std::span<const pmix_info_t> info,
                       const std::string &server_nspace);
    // The listeners' URIs, best (highest ptl priority) first.
    std::vector<std::string> uris() const;
    // Closes every channel, then every listener (PMIx_server_finalize).
    void close_all();

    // Answers a handshake with `status` and `reason`, then closes the channel.
    void refuse(wire::Channel &ch, const wire::Frame &frame, pmix_status_t status,
                const std::string &reason);
    // The channel's peer is `key` from now on: its frames reach the handlers
    // with that client's record.
    void authenticate(wire::Channel &ch, const ProcKey &key);

  private:
    struct Peer {
        bool authenticated = false;
        ProcKey proc;
    };
    struct ListenerRecord {
        std::unique_ptr<mca::ptl::Listener> listener;
        event *ev = nullptr;
        Connections *owner = nullptr;
        // Out of descriptors (accept_all): the accept event is off until a
        // channel closes or the back-off timer fires. An episode lasts until
        // the pending connections are drained; it is logged once.
        bool paused = false;
        bool exhausted = false;
        std::uint64_t failed_attempts = 0;  // in this episode
        std::chrono::milliseconds backoff{0};
        std::uint64_t retry_timer = 0;
    };

    void client_departed(const ProcKey &client, Departure why) override;

    static void on_accept(int fd, short what, void *arg);
    void accept_all(ListenerRecord &rec);
    // No descriptor for a pending connection: stop watching the listener
    // (it stays readable, so a watched one would fire again at once) and
    // retry after a back-off, or sooner when a channel closes.
    void pause_accepting(ListenerRecord &rec, const std::string &why);
    void resume_accepting(ListenerRecord &rec);
    void on_frame(wire::Channel &ch, wire::Frame &&frame);
    void on_close(wire::Channel &ch, const std::string &reason);

    void handle_handshake(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void finish_handshake(std::weak_ptr<wire::Channel> ch, wire::Frame request, ProcKey key,
                          pmix_status_t status);
    void handle_finalize(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_abort(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);

    ClientTable &clients_;
    HostUpcalls &host_;
    RequestTable &requests_;
    const pmix_proc_t &self_;
    ConnectionHooks hooks_;
    std::vector<std::unique_ptr<ListenerRecord>> listeners_;
    std::vector<std::pair<int, std::string>> uris_;  // (priority, uri), best first
    std::map<wire::Channel *, std::pair<std::shared_ptr<wire::Channel>, Peer>> channels_;
};

}  // namespace pmixpp::server
