// The Credentials service (credentials.hpp).
#include "server/credentials.hpp"

#include <cstring>
#include <memory>
#include <vector>

#include "runtime/progress.hpp"
#include "server/upcall_results.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;
using wire::kCredentialKey;

namespace {

// What a host's completion handed over, copied inside its callback.
struct Outcome {
    pmix_status_t status = PMIX_ERROR;
    wire::InfoArray info;  // the credential first (get), then the host's info
};
using OutcomeDone = std::function<void(Outcome)>;

void post_outcome(OutcomeDone *done, Outcome o) {
    auto shared = std::make_shared<Outcome>(std::move(o));
    auto *fn = done;
    const bool posted = runtime::ProgressEngine::instance().post([fn, shared] {
        (*fn)(std::move(*shared));
        delete fn;
    });
    if (!posted) delete fn;
}

void credential_shift(pmix_status_t status, pmix_byte_object_t *credential, pmix_info_t info[],
                      size_t ninfo, void *cbdata) {
    Outcome o;
    o.status = status;
    if (status == PMIX_SUCCESS && credential != nullptr && credential->bytes != nullptr) {
        pmix_info_t cred{};
        PMIx_Info_load(&cred, kCredentialKey, credential, PMIX_BYTE_OBJECT);
        o.info.adopt(cred);
    }
    for (std::size_t i = 0; info != nullptr && i < ninfo; ++i) {
        pmix_info_t copy{};
        if (wire::copy(PMIX_INFO, &copy, &info[i], 1) == PMIX_SUCCESS) o.info.adopt(copy);
    }
    post_outcome(static_cast<OutcomeDone *>(cbdata), std::move(o));
}

void validation_shift(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *cbdata) {
    Outcome o;
    o.status = status;
    o.info = wire::InfoArray::copy_of(info, info == nullptr ? 0 : ninfo);
    post_outcome(static_cast<OutcomeDone *>(cbdata), std::move(o));
}

// Runs `invoke(cbdata)`; unless it says the callback will come, answers at once.
template <class Invoke>
void call_host(Invoke &&invoke, OutcomeDone done) {
    auto *fn = new OutcomeDone(std::move(done));
    const pmix_status_t rc = invoke(static_cast<void *>(fn));
    if (rc == PMIX_SUCCESS) return;
    OutcomeDone now = std::move(*fn);
    delete fn;
    // OPERATION_SUCCEEDED: done at once, with nothing to hand back.
    now(Outcome{rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, {}});
}

void reply_with(const PendingReply &reply, const Outcome &o) {
    send_reply(reply, BodyWriter().i32(o.status).infos(o.info.data(), o.info.size()).take());
}

}  // namespace

Credentials::Credentials(const HostUpcalls &host, RequestTable &requests) : host_(host) {
    requests.add(
        wire::Command::get_credential,
        [this](Channel &ch, Frame &frame, ClientRecord *client) { handle_get(ch, frame, client); });
    requests.add(wire::Command::validate_credential,
                 [this](Channel &ch, Frame &frame, ClientRecord *client) {
                     handle_validate(ch, frame, client);
                 });
}

void Credentials::handle_get(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    wire::InfoArray info;
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed get_credential request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    if (host_->get_credential == nullptr) {
        reply_with(reply, Outcome{PMIX_ERR_NOT_SUPPORTED, {}});
        return;
    }
    auto args = std::make_shared<HostInfo>();
    args->add_copies_as(info.span(), static_cast<std::uint32_t>(client->uid),
                        static_cast<std::uint32_t>(client->gid));
    const pmix_proc_t requestor = client->proc;
    call_host(
        [this, requestor, args](void *cbdata) {
            return host_->get_credential(&requestor, args->data(), args->size(), &credential_shift,
                                         cbdata);
        },
        [reply, args](Outcome o) {
            // A success must carry a credential: a host that gave none failed.
            const bool has = o.info.size() > 0 && PMIX_CHECK_KEY(&o.info.data()[0], kCredentialKey);
            if (o.status == PMIX_SUCCESS && !has) o.status = PMIX_ERR_NOT_FOUND;
            reply_with(reply, o);
        });
}

void Credentials::handle_validate(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::vector<std::uint8_t> bytes;
    wire::InfoArray info;
    r.bytes(bytes);
    r.infos(info);
    if (!r.finished() || client == nullptr) {
        ch.close("malformed validate_credential request");
        return;
    }
    const auto reply = PendingReply::to(ch, frame);
    if (host_->validate_credential == nullptr) {
        reply_with(reply, Outcome{PMIX_ERR_NOT_SUPPORTED, {}});
        return;
    }
    auto args = std::make_shared<HostInfo>();
    args->add_copies_as(info.span(), static_cast<std::uint32_t>(client->uid),
                        static_cast<std::uint32_t>(client->gid));
    auto cred = std::make_shared<std::vector<char>>(bytes.begin(), bytes.end());
    const pmix_proc_t requestor = client->proc;
    call_host(
        [this, requestor, args, cred](void *cbdata) {
            pmix_byte_object_t bo{cred->empty() ? nullptr : cred->data(), cred->size()};
            return host_->validate_credential(&requestor, &bo, args->data(), args->size(),
                                              &validation_shift, cbdata);
        },
        [reply, args, cred](Outcome o) { reply_with(reply, o); });
}

}  // namespace pmixpp::server
