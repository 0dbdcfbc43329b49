// Logging: the `log` request (PMIx_Log/PMIx_Log_nb of clients and tools) and
// the server process's own PMIx_Log. Each entry goes to the plog channels
// serving its key (framework/plog: syslog, email), in priority order; an
// entry no channel takes goes to the host's `log` upcall, one upcall per
// entry, with PMIX_USERID, PMIX_GRPID, PMIX_LOG_SOURCE and PMIX_LOG_TIMESTAMP
// added to the directives (docs/logging.md). Progress thread only.
#pragma once

#include <pmix_server.h>

#include <sys/types.h>

#include <functional>
#include <memory>
#include <span>

#include "plog/plog_base.hpp"
#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"

namespace pmixpp::server {

class Logging {
  public:
    Logging(const HostUpcalls &host, RequestTable &requests);

    // PMIx_server_init: the plog channels (null: none) and whether this
    // server is the gateway (PMIX_SERVER_GATEWAY) whose syslog is the global one.
    void start(std::shared_ptr<plog_base::Channels> channels, bool gateway);
    // PMIx_server_finalize: the channels go once the pending calls are done
    // (their routings hold them).
    void clear();

    // The server process's own PMIx_Log (api/log_api.cpp): source `self`
    // unless the directives name one (PMIX_LOG_SOURCE); the server's uid/gid.
    void log_local(const pmix_proc_t &self, std::span<const pmix_info_t> data,
                   std::span<const pmix_info_t> directives,
                   std::function<void(pmix_status_t)> done);

  private:
    void handle_log(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    // Routes one call; `done` gets the combined status (failures logged,
    // naming each failed entry's channel, and returned as text).
    void route(const pmix_proc_t &source, uid_t uid, gid_t gid, mca::InfoArray data,
               mca::InfoArray directives, std::function<void(pmix_status_t, std::string)> done);

    const HostUpcalls &host_;
    std::shared_ptr<plog_base::Channels> channels_;
    bool gateway_ = false;
};

}  // namespace pmixpp::server
