// Resources: what the host registers with PMIx_server_register_resources
// (docs/server.md "Resources"): information not tied to one namespace (fabric
// devices, GPUs, site facts) that every job sees as part of its job-level
// information. The service keeps the registered entries by key (a later
// registration of a key replaces its value) and hands them to the store for
// each job: at PMIx_server_register_nspace for a job registered later, at
// once for the jobs already registered. A key the job's own registration
// names overrides the resource for that job only (the standard's rule), so
// a job's own keys are remembered until it is deregistered.
//
// PMIx_server_deregister_resources forgets the keys it names: jobs registered
// afterwards do not get them. A job registered while a resource was present
// keeps the value it was given (its processes may already have read it).
// Progress thread only.
#pragma once

#include <pmix_common.h>

#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>

#include "pmixpp/mca/info_array.hpp"
#include "pmixpp/mca/sdk_types.hpp"

namespace pmixpp::server {

class Resources {
  public:
    // Stores job-level entries for `nspace` (gds register_job: adds to and
    // replaces keys of the job's earlier registration).
    using StoreFn =
        std::function<mca::Status(const std::string &nspace, std::span<const pmix_info_t> info)>;
    explicit Resources(StoreFn store);

    // PMIx_server_register_resources. PMIX_ERR_BAD_PARAM: an entry without a
    // key; nothing is stored then. Otherwise every registered job gets the
    // entries its own registration does not name; the first store error is
    // returned (the entries are kept for later jobs all the same).
    pmix_status_t add(std::span<const pmix_info_t> info);
    // PMIx_server_deregister_resources: the keys of `info` (values ignored).
    // PMIX_ERR_BAD_PARAM: no entries or an entry without a key;
    // PMIX_ERR_NOT_FOUND: none of the keys is registered.
    pmix_status_t remove(std::span<const pmix_info_t> info);

    // PMIx_server_register_nspace: `info` is the job's own registration. The
    // resources it does not name, to be stored for the job before its own
    // entries; the job's keys are remembered for later add() calls.
    mca::InfoArray job_registered(const std::string &nspace, std::span<const pmix_info_t> info);
    void job_deregistered(const std::string &nspace) { own_keys_.erase(nspace); }
    // Server stop.
    void clear();

    std::size_t size() const noexcept { return entries_.size(); }

  private:
    // Copies of the entries whose key is not in `own`.
    static mca::InfoArray not_named(const std::map<std::string, mca::InfoArray> &entries,
                                    const std::set<std::string> &own);

    StoreFn store_;
    std::map<std::string, mca::InfoArray> entries_;          // key → one entry
    std::map<std::string, std::set<std::string>> own_keys_;  // nspace → its registered keys
};

}  // namespace pmixpp::server
