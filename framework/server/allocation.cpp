// The Allocation service (allocation.hpp).
#include "server/allocation.hpp"

#include <memory>

#include "server/upcall_results.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;

Allocation::Allocation(const HostUpcalls &host, RequestTable &requests) : host_(host) {
    requests.add(wire::Command::allocate, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_allocate(ch, frame, client);
    });
}

void Allocation::handle_allocate(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::uint8_t directive = 0;
    wire::InfoArray info;
    r.u8(directive);
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed allocate request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    if (host_->allocate == nullptr) {
        send_reply(reply, BodyWriter().i32(PMIX_ERR_NOT_SUPPORTED).infos(nullptr, 0).take());
        return;
    }
    auto args = std::make_shared<HostInfo>();
    args->add_copies_as(info.span(), static_cast<std::uint32_t>(client->uid),
                        static_cast<std::uint32_t>(client->gid));
    const pmix_proc_t requestor = client->proc;
    const auto dir = static_cast<pmix_alloc_directive_t>(directive);
    call_host_info(
        [this, requestor, dir, args](pmix_info_cbfunc_t cb, void *cbdata) {
            return host_->allocate(&requestor, dir, args->data(), args->size(), cb, cbdata);
        },
        [reply, args](pmix_status_t s, wire::InfoArray results) {
            send_reply(reply, BodyWriter().i32(s).infos(results.data(), results.size()).take());
        });
}

}  // namespace pmixpp::server
