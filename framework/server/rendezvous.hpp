// RendezvousFiles: the files through which tools find this server
// (wire/rendezvous.hpp has the names and the format; docs/tools.md).
//
// Written once the listeners are open (Server::start) with the URIs of
// every listener, every transport; removed at PMIx_server_finalize.
//   PMIX_SERVER_SYSTEM_SUPPORT              the node's system file in the
//       system tmpdir (PMIX_SYSTEM_TMPDIR, else $TMPDIR, else /tmp). One per
//       node: a live server's file makes start() fail with
//       PMIX_ERR_RESOURCE_BUSY naming its pid; a dead server's is replaced.
//   PMIX_SERVER_SESSION_SUPPORT or
//   PMIX_SERVER_TOOL_SUPPORT                the pid- and nspace-tagged
//       session files in the server tmpdir (PMIX_SERVER_TMPDIR, else
//       $TMPDIR, else /tmp); the session files of dead servers there go.
// Mode: PMIX_SOCKET_MODE when the host gives it, else 0600. State: the
// paths it wrote. Progress thread (start/stop).
#pragma once

#include <pmix_common.h>

#include <span>
#include <string>
#include <vector>

#include "pmixpp/mca/sdk_types.hpp"

namespace pmixpp::server {

class RendezvousFiles {
  public:
    RendezvousFiles() = default;
    RendezvousFiles(const RendezvousFiles &) = delete;
    RendezvousFiles &operator=(const RendezvousFiles &) = delete;
    ~RendezvousFiles() { remove(); }

    // `uris`: best first. Fails (nothing left behind) when a file cannot be
    // written or another live system server holds the system file.
    mca::Status write(std::span<const pmix_info_t> info, const pmix_proc_t &self,
                      const std::vector<std::string> &uris);
    void remove();

  private:
    std::vector<std::string> written_;
};

}  // namespace pmixpp::server
