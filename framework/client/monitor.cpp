// The one-way send of PMIx_Heartbeat (docs/monitoring.md): a `heartbeat`
// message has no reply and no tag to wait on. Progress thread only. Whether
// the server wants this process's heartbeats (heartbeat_wanted). The C
// entry points PMIx_Process_monitor(_nb) are in ../api/monitor_api.cpp.
#include <span>

#include "client/client.hpp"
#include "mca/logging.hpp"
#include "wire/codec.hpp"

namespace pmixpp::client {

bool Client::send_oneway(wire::Command command, std::span<const std::uint8_t> body) {
    flush_held_on_thread();
    return channel_ && channel_->is_open() &&
           channel_->send(static_cast<std::uint16_t>(command), next_tag_++, 0, body);
}

// A monitor of another process started or stopped watching this one's
// heartbeats (wire::Command::heartbeat_wanted): the server says whether any
// still does.
void Client::handle_heartbeat_wanted(wire::Frame &frame) {
    wire::BodyReader r(frame.body);
    std::uint8_t wanted = 0;
    if (!r.u8(wanted) || !r.finished()) {
        mca::framework_logger("psensor")->debug(
            "client: malformed heartbeat_wanted message ignored");
        return;
    }
    heartbeats_wanted_ = wanted != 0;
    mca::framework_logger("psensor")->debug("client: the server {} heartbeats",
                                            wanted != 0 ? "wants" : "no longer wants");
}

}  // namespace pmixpp::client
