// Allocation: the allocate request (PMIx_Allocation_request(_nb)). The library
// decides nothing about resources: the request goes to the host's allocate
// upcall with the requestor, its directive and its info plus PMIX_USERID and
// PMIX_GRPID (the standard requires them); NULL upcall: PMIX_ERR_NOT_SUPPORTED.
// The host's status and results go back to the client as they are, an error's
// results (its reason) included. It keeps no state about a client, so it is
// no DepartureListener: a reply to a departed client goes nowhere. Progress
// thread only.
#pragma once

#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"

namespace pmixpp::server {

class Allocation final {
  public:
    Allocation(const HostUpcalls &host, RequestTable &requests);

  private:
    void handle_allocate(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);

    const HostUpcalls &host_;
};

}  // namespace pmixpp::server
