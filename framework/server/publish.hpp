// Publishing: the publish, lookup and unpublish requests (PMIx_Publish,
// PMIx_Lookup, PMIx_Unpublish). The host's upcalls are the datastore; the
// library keeps none (a NULL upcall answers PMIX_ERR_NOT_SUPPORTED) and adds
// the client's effective uid to each request (publish.cpp says why only
// that). It keeps no state about a client, so it is no DepartureListener: a
// reply to a departed client goes nowhere. Progress thread only.
#pragma once

#include <pmix_common.h>

#include <span>
#include <string>
#include <vector>

#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"

namespace pmixpp::server {

class Publishing final {
  public:
    Publishing(const HostUpcalls &host, RequestTable &requests);

    // The requests of `client` (the handlers' work once the body is read),
    // each answering `reply`: with the host's status; a lookup with the
    // data found too (NOT_FOUND when the host returned nothing,
    // PARTIAL_SUCCESS when it returned some of `keys` only). No `keys` in
    // unpublish: everything the client published.
    void publish(const PendingReply &reply, const ClientRecord &client,
                 std::span<const pmix_info_t> info);
    void lookup(const PendingReply &reply, const ClientRecord &client,
                std::vector<std::string> keys, std::span<const pmix_info_t> info);
    void unpublish(const PendingReply &reply, const ClientRecord &client,
                   std::vector<std::string> keys, std::span<const pmix_info_t> info);

  private:
    void handle_publish(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_lookup(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    void handle_unpublish(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);

    const HostUpcalls &host_;
};

}  // namespace pmixpp::server
