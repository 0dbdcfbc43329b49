// The connector: how a client (PMIx_Init) and a tool (PMIx_tool_init) reach
// their server. One place for connect -> handshake -> reply -> status, the
// timeout and the error texts (README.md in this folder, "The connector").
//
// Threads: the caller's (PMIx_Init / PMIx_tool_init), which blocks. The
// connection it returns is not watched by the progress thread yet: the caller
// hands it over (Client::adopt), with the frames that arrived ahead of the reply.
#pragma once

#include <pmix.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pmixpp/mca/ptl.hpp"
#include "pmixpp/mca/sdk_types.hpp"
#include "ptl/ptl_base.hpp"
#include "wire/frame.hpp"
#include "wire/message.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::client {

// How long a client or a tool gives one server URI to connect and answer its
// handshake, both together (MCA parameter ptl_base_connect_timeout, default 10 s).
std::chrono::seconds connect_timeout();
// The handshake request a client and a tool open their connection with.
std::vector<std::uint8_t> handshake_body(wire::Role role, const pmix_proc_t &proc,
                                         const std::string &secret,
                                         std::span<const pmix_info_t> info);

// Which failures end the search through the candidates.
enum class Search {
    // The first server reached gives the answer: a candidate that cannot be
    // connected to (or whose handshake cannot be sent) passes to the next;
    // once connected, a refusal, a lost connection, a malformed reply or no
    // reply in time is the result. A client; a tool that named its server.
    first_server,
    // Every failure passes to the next candidate: a tool trying every server
    // of the rendezvous files until one accepts it.
    until_accepted,
};

struct HandshakeRequest {
    // The candidates; tried in the transports' priority order
    // (ptl_base::Transports::order), stable for equal priorities.
    std::vector<std::string> uris;
    std::vector<std::uint8_t> body;  // handshake_body()
    Search search = Search::first_server;
    // Each candidate's budget, connect and reply together.
    std::chrono::milliseconds per_uri = connect_timeout();
    // Reads what follows `i32 status, str reason, proc server` in an accepted
    // reply (protocol.hpp, Command::handshake: it depends on the role). False,
    // or anything left unread, is a malformed reply. Runs at most once per
    // candidate; what it stores belongs to the candidate that is returned.
    std::function<bool(wire::BodyReader &)> read_payload;
    // Runs once, in the caller's thread, right after the first handshake was
    // sent, while the server works on it (PMIx_Init starts the progress thread
    // and loads its datastore there: bench/README.md, "Where PMIx_Init's time
    // goes"). A failure ends the connect with that status.
    std::function<mca::Status()> while_waiting;
};

// A connection whose handshake the server accepted.
struct Handshaken {
    std::unique_ptr<mca::ptl::Connection> connection;
    std::vector<wire::Frame> early;  // unsolicited frames ahead of the reply, in order
    pmix_proc_t server{};            // who answered
    std::string uri;                 // the candidate that answered
};

// Connects to the candidates in order and handshakes (tag 0 on the wire:
// Client::request numbers from 1). Caller's thread; blocks at most `per_uri`
// per candidate tried. Failures, with a reason naming the URI:
//   PMIX_ERR_UNREACH          no candidate handled by a selected transport,
//                             nobody listening, handshake not sent
//   PMIX_ERR_TIMEOUT          no connection or no reply within `per_uri`
//   PMIX_ERR_LOST_CONNECTION  the server closed the connection before answering
//   PMIX_ERR_UNPACK_FAILURE   a malformed reply (frame or body)
//   PMIX_ERR_BAD_PARAM        the handshake does not fit in a frame
//   the server's status       the server refused (its reason attached)
//   while_waiting's status
// With several candidates failing, the status is the last one's and the
// reason lists each ("; ").
mca::Result<Handshaken> handshake(const ptl_base::Transports &transports,
                                  const HandshakeRequest &request);

}  // namespace pmixpp::client
