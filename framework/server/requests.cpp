#include "server/requests.hpp"

#include "wire/message.hpp"

namespace pmixpp::server {

bool RequestTable::add(wire::Command command, RequestHandler handler) {
    return handlers_.emplace(static_cast<std::uint16_t>(command), std::move(handler)).second;
}

const RequestHandler *RequestTable::find(std::uint16_t command) const {
    auto it = handlers_.find(command);
    return it == handlers_.end() ? nullptr : &it->second;
}

void send_reply(const PendingReply &reply, std::span<const std::uint8_t> body) {
    if (reply.sink) {
        reply.sink(body);
        return;
    }
    if (auto ch = reply.channel.lock()) ch->reply(reply.request, body);
}

std::vector<std::uint8_t> status_body(pmix_status_t status) {
    return wire::BodyWriter().i32(status).take();
}

}  // namespace pmixpp::server
