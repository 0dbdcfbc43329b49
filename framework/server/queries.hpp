// Queries: the query request (PMIx_Query_info from a client or a tool;
// docs/tools.md, "Queries"). The library answers the keys it knows from the
// server's state (registered jobs and clients, the datastore), other services
// answer theirs (Groups' group keys), the host's attribute registry its level
// of PMIX_QUERY_ATTRIBUTE_SUPPORT; every other key goes to the host's query
// upcall with the query's qualifiers. It owns no state: a reply to a departed
// client goes nowhere, so it is no DepartureListener. Progress thread only.
#pragma once

#include <pmix_server.h>

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gds/gds_base.hpp"
#include "server/client_table.hpp"
#include "server/requests.hpp"
#include "server/upcalls.hpp"
#include "wire/message.hpp"

namespace pmixpp::server {

class HostInfo;  // upcall_results.hpp

// The narrow interfaces of the services a query reaches.
struct QueryHooks {
    // A service's own keys (Groups::answer_query): true and `out` filled when
    // it answered `key`, false when the key is not its.
    std::function<bool(std::span<const pmix_info_t> qualifiers, const std::string &key,
                       HostInfo &out)>
        service_keys;
    // The host's level of PMIX_QUERY_ATTRIBUTE_SUPPORT (HostAttributes): the
    // entries the qualifiers ask for.
    std::function<void(std::span<const pmix_info_t> qualifiers, std::vector<pmix_info_t> &entries)>
        host_attributes;
};

class Queries final {
  public:
    Queries(const ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
            QueryHooks hooks);
    // PMIx_server_init: the datastore job-level keys are read from.
    void set_store(std::shared_ptr<gds_base::Datastore> store) { store_ = std::move(store); }

    // `queries` from `caller`; answers `reply` with one result array per
    // query: all keys found PMIX_SUCCESS, some PMIX_ERR_PARTIAL_SUCCESS, none
    // PMIX_ERR_NOT_FOUND (a status-only body).
    struct Query {
        std::vector<std::string> keys;
        wire::InfoArray qualifiers;
    };
    void request(const PendingReply &reply, const pmix_proc_t &caller, std::vector<Query> queries);

    // One key the library answers from its own state; false: not known here.
    bool answer_key(std::span<const pmix_info_t> qualifiers, const std::string &key,
                    const std::string &caller_nspace, HostInfo &out) const;

  private:
    void handle_query(wire::Channel &ch, wire::Frame &frame, ClientRecord *client);
    // A STRING value of `proc` in the datastore (nullopt: none).
    std::optional<std::string> job_string(const pmix_proc_t &proc, const char *key) const;

    const ClientTable &clients_;
    const HostUpcalls &host_;
    QueryHooks hooks_;
    std::shared_ptr<gds_base::Datastore> store_;
};

}  // namespace pmixpp::server
