// The request dispatch table and the replies owed to clients.
//
// Each service registers the commands it handles (README.md, "Adding a
// request type"); the connections layer (server.cpp) looks the command of
// every frame from an authenticated peer up here and calls the handler with
// the caller's record (nullptr: its record went meanwhile). Progress thread only.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

#include "server/client_table.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using RequestHandler = std::function<void(wire::Channel &, wire::Frame &, ClientRecord *caller)>;

class RequestTable {
  public:
    // One handler per command; a second registration of a command replaces
    // nothing and returns false.
    bool add(wire::Command command, RequestHandler handler);
    const RequestHandler *find(std::uint16_t command) const;

  private:
    std::unordered_map<std::uint16_t, RequestHandler> handlers_;
};

// Sends `body` as the answer to `reply` (nothing when its channel is gone).
void send_reply(const PendingReply &reply, std::span<const std::uint8_t> body);
// A body holding only `status`.
std::vector<std::uint8_t> status_body(pmix_status_t status);

}  // namespace pmixpp::server
