// ProcessSets: PMIx process sets on the server side (docs/process_sets.md). A process set is a
// label the host gives a set of processes: at launch (each process's PMIX_PSET_NAMES in the
// PMIX_PROC_DATA of PMIx_server_register_nspace) or at any time later
// (PMIx_server_define_process_set / _delete_process_set). Sets are
// immutable: a name is defined once until it is deleted. The service owns the
// sets this server knows, tells its local clients of each definition and
// deletion (PMIX_PROCESS_SET_DEFINE / _DELETE events), and answers the query
// keys PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES, PMIX_QUERY_PSET_MEMBERSHIP
// and, per process, PMIX_PSET_NAMES (what a client's PMIx_Get of that key
// asks). A launch set goes with its job's deregistration; a defined set
// stays until the host deletes it. Progress thread only.
#pragma once

#include <pmix_common.h>

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "event/event.hpp"
#include "server/client_table.hpp"

namespace pmixpp::server {

class HostInfo;  // upcall_results.hpp

struct ProcessSet {
    std::vector<pmix_proc_t> members;
    // The nspace whose registration declared it; empty: defined by the host
    // through PMIx_server_define_process_set.
    std::string launched_with;
};

class ProcessSets final : public DepartureListener {
  public:
    // Raises an event from the server library to the local clients in its range.
    using RaiseFn = std::function<void(std::shared_ptr<const events::Event>)>;
    ProcessSets(const ClientTable &clients, RaiseFn raise);

    // PMIx_server_define_process_set. PMIX_ERR_BAD_PARAM: no name, a name
    // longer than PMIX_MAX_NSLEN or equal to a registered nspace, no members,
    // a member with an empty nspace; PMIX_ERR_EXISTS: the name is taken.
    pmix_status_t define(const std::string &name, std::vector<pmix_proc_t> members);
    // PMIx_server_delete_process_set. PMIX_ERR_NOT_FOUND: no such set.
    pmix_status_t remove(const std::string &name);
    // PMIx_server_register_nspace: the launch sets its PMIX_PROC_DATA names.
    void job_registered(const std::string &nspace, std::span<const pmix_info_t> info);

    // PMIX_QUERY_NUM_PSETS, _PSET_NAMES, _PSET_MEMBERSHIP (qualifier
    // PMIX_PSET_NAME), PMIX_PSET_NAMES (qualifier PMIX_PROCID); false: not one
    // of these keys, or nothing to answer (an unknown set, a process in none).
    bool answer_query(std::span<const pmix_info_t> qualifiers, const std::string &key,
                      HostInfo &out) const;
    // The names of the sets `proc` belongs to.
    std::vector<std::string> sets_of(const pmix_proc_t &proc) const;
    const std::map<std::string, ProcessSet> &sets() const { return sets_; }
    // Server stop: every set goes, nobody is told.
    void clear() { sets_.clear(); }

    void client_departed(const ProcKey &, Departure) override {}
    void job_deregistered(const std::string &nspace) override;

  private:
    const ClientTable &clients_;
    RaiseFn raise_;
    std::map<std::string, ProcessSet> sets_;
};

}  // namespace pmixpp::server
