// FabricRequests: a client's or tool's PMIx_Fabric_register / _update
// (api/network_api.cpp) forwarded to the host's fabric upcall
// (pmix_server_fabric_fn_t), as the standard advises: the fabric is the
// scheduler's to describe, and a host reaches it. The request carries the
// operation (PMIX_FABRIC_REQUEST_INFO, _UPDATE_INFO) and the caller's
// directives; the host's status and info go back as they are. NULL upcall:
// PMIX_ERR_NOT_SUPPORTED. It keeps nothing about a client (a reply to a
// departed client goes nowhere), so it is no DepartureListener. Progress
// thread only (docs/network.md, "Fabric").
#pragma once

#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"

namespace pmixpp::server {

class FabricRequests final {
  public:
    FabricRequests(const HostUpcalls &host, RequestTable &requests);

  private:
    void handle_fabric(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);

    const HostUpcalls &host_;
};

}  // namespace pmixpp::server
