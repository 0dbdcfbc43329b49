// The Publishing service (publish.hpp).
//
// The library adds the client's effective uid as PMIX_USERID ("pmix.euid",
// PMIX_UINT32; OPENMPI-CONTRACT rule 7: ORTE's data server finds nothing
// without it), taken from the uid the host registered for the client; a
// client-supplied euid/egid is dropped. PMIX_GRPID is not added: ORTE treats
// every info it does not know as data to publish, and the OpenPMIx it
// replaces added only the euid (traces/sn_connacc_mpirun.log).
#include "server/publish.hpp"

#include <memory>

#include "server/upcall_results.hpp"
#include "server/upcalls.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;

namespace {

bool read_keys(BodyReader &r, std::vector<std::string> &keys) {
    std::uint32_t n = 0;
    if (!r.u32(n) || n > r.remaining()) return false;  // each key takes at least 4 bytes
    keys.resize(n);
    for (auto &k : keys) {
        if (!r.str(k)) return false;
    }
    return true;
}

std::shared_ptr<HostInfo> with_identity(const ClientRecord &client,
                                        std::span<const pmix_info_t> info) {
    auto out = std::make_shared<HostInfo>();
    out->add_copies(info, {PMIX_USERID, PMIX_GRPID});
    out->add_uint32(PMIX_USERID, static_cast<std::uint32_t>(client.uid));
    return out;
}

}  // namespace

Publishing::Publishing(const HostUpcalls &host, RequestTable &requests) : host_(host) {
    requests.add(wire::Command::publish, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_publish(ch, frame, client);
    });
    requests.add(wire::Command::lookup, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_lookup(ch, frame, client);
    });
    requests.add(wire::Command::unpublish, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_unpublish(ch, frame, client);
    });
}

void Publishing::handle_publish(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    wire::InfoArray info;
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed publish request");
        return;
    }
    publish(PendingReply::to(ch, frame), *client, info.span());
}

void Publishing::publish(const PendingReply &reply, const ClientRecord &client,
                         std::span<const pmix_info_t> info) {
    if (host_->publish == nullptr) {
        send_reply(reply, status_body(PMIX_ERR_NOT_SUPPORTED));
        return;
    }
    auto args = with_identity(client, info);
    const pmix_proc_t proc = client.proc;
    call_host_op(
        [this, proc, args](pmix_op_cbfunc_t cb, void *cbdata) {
            return host_->publish(&proc, args->data(), args->size(), cb, cbdata);
        },
        [reply, args](pmix_status_t s) { send_reply(reply, status_body(s)); });
}

void Publishing::handle_lookup(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::vector<std::string> keys;
    wire::InfoArray info;
    read_keys(r, keys);
    r.infos(info);
    if (!r.finished() || client == nullptr || keys.empty()) {
        ch.close("malformed lookup request");
        return;
    }
    lookup(PendingReply::to(ch, frame), *client, std::move(keys), info.span());
}

void Publishing::lookup(const PendingReply &reply, const ClientRecord &client,
                        std::vector<std::string> keys, std::span<const pmix_info_t> info) {
    if (host_->lookup == nullptr) {
        send_reply(reply, status_body(PMIX_ERR_NOT_SUPPORTED));
        return;
    }
    auto args = with_identity(client, info);
    auto list = std::make_shared<KeyList>(std::move(keys));
    const pmix_proc_t proc = client.proc;
    call_host_lookup(
        [this, proc, args, list](pmix_lookup_cbfunc_t cb, void *cbdata) {
            return host_->lookup(&proc, list->argv(), args->data(), args->size(), cb, cbdata);
        },
        [reply, args, list](pmix_status_t s, LookupResult res) {
            if (s != PMIX_SUCCESS && s != PMIX_ERR_PARTIAL_SUCCESS) {
                send_reply(reply, status_body(s));
                return;
            }
            // The host's status, checked against what it returned.
            if (res.data.size() == 0) {
                s = PMIX_ERR_NOT_FOUND;
            } else if (s == PMIX_SUCCESS) {
                for (const auto &k : list->keys()) {
                    bool found = false;
                    for (const auto &i : res.data.span())
                        found = found || PMIX_CHECK_KEY(&i, k.c_str());
                    if (!found) s = PMIX_ERR_PARTIAL_SUCCESS;
                }
            }
            if (s == PMIX_ERR_NOT_FOUND) {
                send_reply(reply, status_body(s));
                return;
            }
            send_reply(reply, BodyWriter()
                                  .i32(s)
                                  .procs(res.procs.data(), res.procs.size())
                                  .infos(res.data.data(), res.data.size())
                                  .take());
        });
}

void Publishing::handle_unpublish(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::vector<std::string> keys;
    wire::InfoArray info;
    read_keys(r, keys);
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed unpublish request");
        return;
    }
    unpublish(PendingReply::to(ch, frame), *client, std::move(keys), info.span());
}

void Publishing::unpublish(const PendingReply &reply, const ClientRecord &client,
                           std::vector<std::string> keys, std::span<const pmix_info_t> info) {
    if (host_->unpublish == nullptr) {
        send_reply(reply, status_body(PMIX_ERR_NOT_SUPPORTED));
        return;
    }
    auto args = with_identity(client, info);
    // No keys: NULL, "everything this process published".
    auto list = keys.empty() ? nullptr : std::make_shared<KeyList>(std::move(keys));
    const pmix_proc_t proc = client.proc;
    call_host_op(
        [this, proc, args, list](pmix_op_cbfunc_t cb, void *cbdata) {
            return host_->unpublish(&proc, list ? list->argv() : nullptr, args->data(),
                                    args->size(), cb, cbdata);
        },
        [reply, args, list](pmix_status_t s) { send_reply(reply, status_body(s)); });
}

}  // namespace pmixpp::server
