// PMIx_Log on the server side: the request goes to the host's log upcall with
// PMIX_USERID/PMIX_GRPID added to the directives; NULL upcall:
// PMIX_ERR_NOT_SUPPORTED. (The coming logging service, plog, takes it over:
// README.md.)
#include "server/server.hpp"
#include "server/upcall_results.hpp"
#include "server/upcalls.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using wire::BodyReader;
using wire::Channel;
using wire::Frame;

void Server::handle_log(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    wire::InfoArray data, directives;
    r.infos(data);
    r.infos(directives);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed log request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    if (host_->log == nullptr) {
        send_reply(reply, status_body(PMIX_ERR_NOT_SUPPORTED));
        return;
    }
    auto dirs = std::make_shared<HostInfo>();
    dirs->add_copies_as(directives.span(), static_cast<std::uint32_t>(client->uid),
                        static_cast<std::uint32_t>(client->gid));
    auto payload = std::make_shared<wire::InfoArray>(std::move(data));
    const pmix_proc_t proc = client->proc;
    // The 4.x log upcall returns nothing: the host always calls back.
    call_host_op(
        [this, proc, payload, dirs](pmix_op_cbfunc_t cb, void *cbdata) {
            host_->log(&proc, payload->data(), payload->size(), dirs->data(), dirs->size(), cb,
                       cbdata);
            return PMIX_SUCCESS;
        },
        [reply, payload, dirs](pmix_status_t s) { send_reply(reply, status_body(s)); });
}

}  // namespace pmixpp::server
