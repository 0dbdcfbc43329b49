// Spawn: the spawn request (PMIx_Spawn). The library starts nothing: the
// request goes to the host's spawn upcall, which registers the new nspace and
// its clients, starts them and calls back with the nspace; the client gets
// that nspace and its job blob. NULL upcall: PMIX_ERR_NOT_SUPPORTED. The new
// job is connected to its parent (the `spawned` hook: Collectives). It keeps
// no state about a client, so it is no DepartureListener: a reply to a
// departed client goes nowhere. Progress thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"
#include "wire/message.hpp"

namespace pmixpp::server {

class Spawn final {
  public:
    // `job_blob`: the job-level blob of a registered nspace (empty: none).
    using JobBlobFn = std::function<std::vector<std::uint8_t>(const std::string &nspace)>;
    // Told of every job a client spawned, before the client hears of it.
    using SpawnedFn = std::function<void(const ProcKey &parent, const std::string &nspace)>;
    Spawn(const HostUpcalls &host, RequestTable &requests, JobBlobFn job_blob, SpawnedFn spawned);

    // The spawn request of `client`: `app_bytes` is the encoded pmix_app_t
    // array. Answers `reply` (the new nspace and its job blob, or an error:
    // no apps BAD_PARAM, no upcall NOT_SUPPORTED, a success without a valid
    // nspace JOB_FAILED_TO_LAUNCH). False, nothing answered: `app_bytes` is
    // malformed.
    bool request(const PendingReply &reply, const ClientRecord &client, wire::InfoArray job_info,
                 const std::vector<std::uint8_t> &app_bytes);

  private:
    void handle_spawn(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);

    const HostUpcalls &host_;
    JobBlobFn job_blob_;
    SpawnedFn spawned_;
};

}  // namespace pmixpp::server
