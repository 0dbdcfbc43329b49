// The one-way send of PMIx_Heartbeat (docs/monitoring.md): a `heartbeat`
// message has no reply and no tag to wait on. Progress thread only. The C
// entry points PMIx_Process_monitor(_nb) are in ../api/monitor_api.cpp.
#include <span>

#include "client/client.hpp"

namespace pmixpp::client {

bool Client::send_oneway(wire::Command command, std::span<const std::uint8_t> body) {
    return channel_ && channel_->is_open() &&
           channel_->send(static_cast<std::uint16_t>(command), next_tag_++, 0, body);
}

}  // namespace pmixpp::client
