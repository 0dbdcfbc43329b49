// The Spawn service (spawn.hpp).
//
// The job_info and apps go up exactly as the client gave them. The spec
// lists PMIX_USERID, PMIX_GRPID, PMIX_SPAWNED, PMIX_PARENT_ID and
// PMIX_REQUESTOR_IS_CLIENT as required additions, but ORTE prints a
// "bad-key" warning for every job-level key it does not know, and the
// OpenPMIx it replaces passed only the client's keys (OPENMPI-CONTRACT §2.6,
// traces/sn_spawn_mpirun.log). The requester is the upcall's `proc`; the host
// puts PMIX_PARENT_ID / PMIX_SPAWNED in the child job's registration.
#include "server/spawn.hpp"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "mca/logging.hpp"
#include "runtime/progress.hpp"
#include "wire/codec.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using runtime::ProgressEngine;
using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;

namespace {

auto log() {
    return mca::framework_logger("server");
}

// An owned, decoded pmix_app_t array.
struct AppArray {
    pmix_app_t *apps = nullptr;
    std::size_t n = 0;
    AppArray() = default;
    AppArray(const AppArray &) = delete;
    AppArray &operator=(const AppArray &) = delete;
    ~AppArray() {
        if (apps != nullptr) {
            wire::destruct(PMIX_APP, apps, n);
            std::free(apps);
        }
    }
    bool decode(const std::vector<std::uint8_t> &bytes) {
        wire::Decoder dec(bytes);
        std::size_t count = 0;
        // A bound on the count before allocating: every encoded app takes
        // more than 16 bytes (cmd, argv, env, cwd, maxprocs, info).
        if (!dec.get_count(count, 16)) return false;
        if (count == 0) return dec.remaining() == 0;
        apps = static_cast<pmix_app_t *>(std::calloc(count, sizeof(pmix_app_t)));
        if (apps == nullptr) return false;
        n = count;
        return wire::decode(dec, PMIX_APP, apps, n) == PMIX_SUCCESS && dec.ok() &&
               dec.remaining() == 0;
    }
};

// The host's spawn completion: thread-shifted to the progress thread, the
// nspace copied (it is the host's only for the duration of the call).
using SpawnDone = std::function<void(pmix_status_t, std::string)>;
struct SpawnShift {
    SpawnDone done;
};
void spawn_shift(pmix_status_t status, pmix_nspace_t nspace, void *cbdata) {
    auto *s = static_cast<SpawnShift *>(cbdata);
    std::string ns = nspace != nullptr ? std::string(nspace, strnlen(nspace, PMIX_MAX_NSLEN)) : "";
    ProgressEngine::instance().post([s, status, ns = std::move(ns)]() mutable {
        s->done(status, std::move(ns));
        delete s;
    });
}

}  // namespace

Spawn::Spawn(const HostUpcalls &host, RequestTable &requests, JobBlobFn job_blob, SpawnedFn spawned)
    : host_(host), job_blob_(std::move(job_blob)), spawned_(std::move(spawned)) {
    requests.add(wire::Command::spawn, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_spawn(ch, frame, client);
    });
}

void Spawn::handle_spawn(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    wire::InfoArray job_info;
    std::vector<std::uint8_t> app_bytes;
    r.infos(job_info);
    r.bytes(app_bytes);
    if (!r.finished() || client == nullptr ||
        !request(PendingReply::to(ch, frame), *client, std::move(job_info), app_bytes)) {
        ch.close("malformed spawn request");
    }
}

bool Spawn::request(const PendingReply &reply, const ClientRecord &client, wire::InfoArray info,
                    const std::vector<std::uint8_t> &app_bytes) {
    auto apps = std::make_shared<AppArray>();
    if (!apps->decode(app_bytes)) return false;
    auto job_info = std::make_shared<wire::InfoArray>(std::move(info));
    const pmix_proc_t requester = client.proc;
    const ProcKey parent = key_of(requester);
    if (apps->n == 0) {
        send_reply(reply, status_body(PMIX_ERR_BAD_PARAM));
        return true;
    }
    if (host_->spawn == nullptr) {
        send_reply(reply, status_body(PMIX_ERR_NOT_SUPPORTED));
        return true;
    }
    auto done = [this, reply, parent, job_info, apps](pmix_status_t status, std::string ns) {
        if (status == PMIX_SUCCESS && (ns.empty() || ns.size() > PMIX_MAX_NSLEN)) {
            log()->error("server: the host's spawn succeeded without a valid nspace");
            status = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
        }
        if (status != PMIX_SUCCESS) {
            log()->info("server: spawn requested by {}:{} failed: {}", parent.first, parent.second,
                        PMIx_Error_string(status));
            send_reply(reply, status_body(status));
            return;
        }
        spawned_(parent, ns);  // connected to its parent (spec, PMIx_Spawn)
        send_reply(reply, BodyWriter().i32(PMIX_SUCCESS).str(ns).bytes(job_blob_(ns)).take());
    };
    auto *s = new SpawnShift{std::move(done)};
    const pmix_status_t rc = host_->spawn(&requester, job_info->data(), job_info->size(),
                                          apps->apps, apps->n, &spawn_shift, s);
    if (rc == PMIX_SUCCESS) return true;
    SpawnDone fn = std::move(s->done);
    delete s;
    // OPERATION_SUCCEEDED carries no nspace: nothing to tell the client.
    fn(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_ERR_JOB_FAILED_TO_LAUNCH : rc, {});
    return true;
}

}  // namespace pmixpp::server
