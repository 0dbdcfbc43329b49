// Credentials: the get_credential and validate_credential requests
// (PMIx_Get_credential(_nb), PMIx_Validate_credential(_nb); docs/security.md,
// "Credentials"). The library issues and checks no credential itself: both go
// to the host's upcalls (pmix_server_get_cred_fn_t,
// pmix_server_validate_cred_fn_t) with the requestor, its directives and the
// PMIX_USERID / PMIX_GRPID the server knows for it (replacing any the client
// sent, as the standard requires the library to add them); a NULL upcall:
// PMIX_ERR_NOT_SUPPORTED. The host's completions (no release function: their
// data lives only during the callback) are copied there and thread-shifted.
// No state about a client, so no DepartureListener. Progress thread only.
#pragma once

#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"

namespace pmixpp::server {

class Credentials final {
  public:
    Credentials(const HostUpcalls &host, RequestTable &requests);

  private:
    void handle_get(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_validate(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);

    const HostUpcalls &host_;
};

}  // namespace pmixpp::server
