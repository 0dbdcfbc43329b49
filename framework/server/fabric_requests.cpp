// The FabricRequests service (fabric_requests.hpp).
#include "server/fabric_requests.hpp"

#include <memory>

#include "server/upcall_results.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;

FabricRequests::FabricRequests(const HostUpcalls &host, RequestTable &requests) : host_(host) {
    requests.add(wire::Command::fabric, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_fabric(ch, frame, client);
    });
}

void FabricRequests::handle_fabric(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::uint8_t op = 0;
    wire::InfoArray directives;
    r.u8(op);
    r.infos(directives);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed fabric request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    if (op != PMIX_FABRIC_REQUEST_INFO && op != PMIX_FABRIC_UPDATE_INFO) {
        send_reply(reply, BodyWriter().i32(PMIX_ERR_BAD_PARAM).infos(nullptr, 0).take());
        return;
    }
    if (host_->fabric == nullptr) {
        send_reply(reply, BodyWriter().i32(PMIX_ERR_NOT_SUPPORTED).infos(nullptr, 0).take());
        return;
    }
    auto args = std::make_shared<wire::InfoArray>(std::move(directives));
    const pmix_proc_t requestor = client->proc;
    const auto operation = static_cast<pmix_fabric_operation_t>(op);
    call_host_info(
        [this, requestor, operation, args](pmix_info_cbfunc_t cb, void *cbdata) {
            return host_->fabric(&requestor, operation, args->data(), args->size(), cb, cbdata);
        },
        [reply, args](pmix_status_t s, wire::InfoArray results) {
            send_reply(reply, BodyWriter().i32(s).infos(results.data(), results.size()).take());
        });
}

}  // namespace pmixpp::server
