// The Tools service (tools.hpp; docs/tools.md): tool handshakes, the
// records of connected tools, their departure.
#include "server/tools.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <spdlog/fmt/fmt.h>

#include "event/event.hpp"
#include "mca/logging.hpp"
#include "runtime/progress.hpp"
#include "server/peer_identity.hpp"
#include "server/upcalls.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using wire::BodyWriter;
using wire::Channel;
using wire::Frame;

namespace {

auto log() {
    return mca::framework_logger("server");
}

// What the host's tool_connected callback hands back, thread-shifted.
struct ToolShift {
    std::function<void(pmix_status_t, pmix_proc_t)> done;
};

void tool_shift(pmix_status_t status, pmix_proc_t *proc, void *cbdata) {
    auto *s = static_cast<ToolShift *>(cbdata);
    pmix_proc_t copy{};
    if (proc != nullptr) copy = *proc;
    runtime::ProgressEngine::instance().post([s, status, copy] {
        s->done(status, copy);
        delete s;
    });
}

}  // namespace

Tools::Tools(ClientTable &clients, const HostUpcalls &host, const pmix_proc_t &self,
             HandshakeOutcome outcome)
    : clients_(clients), host_(host), self_(self), outcome_(std::move(outcome)) {}

void Tools::configure(std::span<const pmix_info_t> info) {
    tools_.clear();
    tool_jobs_.clear();
    // A system or session server exists for tools to find it (rendezvous.hpp):
    // either flag accepts tools as PMIX_SERVER_TOOL_SUPPORT does.
    support_ = false;
    for (const char *key :
         {PMIX_SERVER_TOOL_SUPPORT, PMIX_SERVER_SYSTEM_SUPPORT, PMIX_SERVER_SESSION_SUPPORT}) {
        const pmix_info_t *i = find_info(info, key);
        if (i != nullptr && events::info_true(*i)) support_ = true;
    }
}

void Tools::clear() {
    tools_.clear();
    tool_jobs_.clear();
    support_ = false;
}

void Tools::handshake(Channel &ch, const Frame &frame, const pmix_proc_t &requested,
                      std::uint32_t uid, std::uint32_t gid, std::uint32_t pid,
                      wire::InfoArray info) {
    auto refuse = outcome_.refuse;
    if (!support_) {
        refuse(ch, frame, PMIX_ERR_NOT_SUPPORTED,
               "this server does not accept tools (its host passed none of "
               "PMIX_SERVER_TOOL_SUPPORT, _SYSTEM_SUPPORT, _SESSION_SUPPORT)");
        return;
    }
    if (host_->tool_connected == nullptr) {
        refuse(ch, frame, PMIX_ERR_NOT_SUPPORTED,
               "this server's host provides no tool_connected upcall to approve tools");
        return;
    }
    // The uid/gid the OS vouches for (standard, Chap_API_Security).
    uid_t real_uid = 0;
    gid_t real_gid = 0;
    if (auto cred = ch.connection().peer_credentials()) {
        real_uid = cred->uid;
        real_gid = cred->gid;
    } else if (auto tuid = tcp_peer_uid(ch.connection().fd())) {
        real_uid = *tuid;
        real_gid = static_cast<gid_t>(gid);  // the socket table holds no gid
    } else {
        refuse(ch, frame, PMIX_ERR_INVALID_CRED,
               "cannot verify the tool's user over this transport (not a local peer)");
        return;
    }
    if (real_uid != static_cast<uid_t>(uid) || real_gid != static_cast<gid_t>(gid)) {
        refuse(ch, frame, PMIX_ERR_INVALID_CRED,
               fmt::format("the tool claims uid/gid {}/{}, the OS says {}/{}", uid, gid, real_uid,
                           real_gid));
        return;
    }
    auto args = std::make_shared<HostArgs>();
    for (const auto &i : info.span()) args->add_copy(i);
    const std::size_t nspace_len = strnlen(requested.nspace, PMIX_MAX_NSLEN);
    if (nspace_len > 0 && find_info(info.span(), PMIX_TOOL_NSPACE) == nullptr) {
        args->add_string(PMIX_TOOL_NSPACE, std::string(requested.nspace, nspace_len));
        args->add_uint32(PMIX_TOOL_RANK, requested.rank);
    }
    args->add_uint32(PMIX_USERID, static_cast<std::uint32_t>(real_uid));
    args->add_uint32(PMIX_GRPID, static_cast<std::uint32_t>(real_gid));
    const pid_t p = static_cast<pid_t>(pid);
    args->load(PMIX_PROC_PID, &p, PMIX_PID);

    std::weak_ptr<Channel> weak = ch.weak_from_this();
    Frame request{frame.command, frame.tag, frame.flags, {}};
    auto *shift = new ToolShift{[this, refuse, weak, request, args, requested, nspace_len, real_uid,
                                 real_gid, pid](pmix_status_t status, pmix_proc_t proc) {
        auto c = weak.lock();
        if (!c || !c->is_open()) return;
        if (status != PMIX_SUCCESS) {
            refuse(*c, request, status, "the host refused the tool");
            return;
        }
        if (nspace_len > 0 && strnlen(proc.nspace, PMIX_MAX_NSLEN) > 0 &&
            std::strncmp(proc.nspace, requested.nspace, PMIX_MAX_NSLEN) != 0) {
            log()->info("server: the host renamed tool {} to {}", requested.nspace, proc.nspace);
        }
        std::string reason;
        if (const pmix_status_t rc = admit(proc, real_uid, real_gid, pid, c, reason);
            rc != PMIX_SUCCESS) {
            refuse(*c, request, rc, reason);
            return;
        }
        const ProcKey key = key_of(proc);
        outcome_.accepted(*c, key);
        c->reply(request, BodyWriter().i32(PMIX_SUCCESS).str("").proc(self_).proc(proc).take());
        log()->info("server: tool {} (pid {}) connected from {}", describe(key), pid,
                    c->describe_peer());
    }};
    host_->tool_connected(args->info_data(), args->info_size(), &tool_shift, shift);
}

pmix_status_t Tools::admit(const pmix_proc_t &proc, uid_t uid, gid_t gid, std::uint32_t pid,
                           std::shared_ptr<wire::Channel> channel, std::string &reason) {
    if (strnlen(proc.nspace, PMIX_MAX_NSLEN) == 0) {
        reason = "the host gave the tool an empty namespace";
        return PMIX_ERR_BAD_PARAM;
    }
    const ProcKey key = key_of(proc);
    if (const JobRecord *job = clients_.find_job(key.first);
        job != nullptr && (tool_jobs_.count(key.first) == 0 || job->clients.count(key.second))) {
        reason = "identity " + describe(key) + " is already in use on this server";
        return PMIX_ERR_INVALID_CRED;
    }
    JobRecord &job = clients_.jobs()[key.first];
    job.nspace = key.first;
    tool_jobs_.insert(key.first);
    ClientRecord &rec = job.clients[key.second];
    rec.proc = proc;
    rec.uid = uid;
    rec.gid = gid;
    rec.pid = pid;
    rec.state = ClientRecord::State::connected;
    rec.channel = std::move(channel);
    tools_.insert(key);
    return PMIX_SUCCESS;
}

void Tools::client_departed(const ProcKey &key, Departure) {
    if (tools_.erase(key) == 0) return;
    clients_.erase_client(key);
    if (const JobRecord *job = clients_.find_job(key.first);
        job != nullptr && job->clients.empty() && tool_jobs_.count(key.first) != 0) {
        clients_.erase_job(key.first);
        tool_jobs_.erase(key.first);
    }
    log()->info("server: tool {} disconnected", describe(key));
}

}  // namespace pmixpp::server
