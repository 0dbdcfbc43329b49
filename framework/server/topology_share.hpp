// TopologySharing: the server shares its node topology with its clients when
// the host asked for it (PMIX_SERVER_SHARE_TOPOLOGY at PMIx_server_init, or a
// PMIX_TOPOLOGY2 given there) and registers a job without a topology of its
// own (docs/network.md, "Shared by the server"). The topology (the host's
// PMIX_TOPOLOGY2, else the process's discovery) is written once as hwloc XML
// under PMIX_SERVER_TMPDIR (else $TMPDIR, else /tmp) and each such job gets
// PMIX_TOPOLOGY_FILE; the file is removed at PMIx_server_finalize. Progress
// thread only.
#pragma once

#include <pmix_common.h>

#include <optional>
#include <span>
#include <string>

#include "wire/message.hpp"

namespace pmixpp::server {

class TopologySharing final {
  public:
    TopologySharing() = default;
    TopologySharing(const TopologySharing &) = delete;
    TopologySharing &operator=(const TopologySharing &) = delete;
    ~TopologySharing() { stop(); }

    // Reads PMIx_server_init's info; adopts a PMIX_TOPOLOGY2 as the
    // process's topology. BAD_PARAM for a PMIX_TOPOLOGY2 that is not hwloc's.
    pmix_status_t start(std::span<const pmix_info_t> info);
    // Removes the file written, if any.
    void stop() noexcept;

    // The job info to register: `info` plus PMIX_TOPOLOGY_FILE when sharing
    // is on and `info` has neither PMIX_TOPOLOGY_FILE nor PMIX_HWLOC_XML_V2;
    // std::nullopt when `info` is to be registered as it is (also when the
    // topology cannot be written: clients then discover it themselves).
    std::optional<wire::InfoArray> job_info(std::span<const pmix_info_t> info);

  private:
    bool share_ = false;
    std::string dir_;
    std::string file_;  // written on the first job that needs it
    bool tried_ = false;
};

}  // namespace pmixpp::server
