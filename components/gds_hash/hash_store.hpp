// HashStore: the gds_hash module. Hash tables per job (nspace) and per rank,
// plus session, app and node tables for realm-qualified keys.
//
// Locking is the core's (include/pmixpp/mca/gds.hpp): writers run alone,
// readers (const methods) run concurrently and touch no mutable state, so the
// store keeps no lock of its own.
#pragma once

#include "value_table.hpp"

#include "pmixpp/mca/gds.hpp"
#include "pmixpp/mca/node_maps.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pmixpp::gds_hash {

// One node as a job sees it (its PMIX_NODE_INFO_ARRAY): identified by
// PMIX_NODEID and/or PMIX_HOSTNAME, both also kept as values.
struct NodeRecord {
    std::optional<std::uint32_t> nodeid;
    std::string hostname;
    Table values;
};

struct JobRecord {
    Table values;                                  // job realm (rank WILDCARD/UNDEF)
    std::optional<std::uint32_t> session;          // PMIX_SESSION_ID of the job
    std::map<std::uint32_t, Table> apps;           // by PMIX_APPNUM
    std::vector<NodeRecord> nodes;                 // few; searched linearly
    std::unordered_map<pmix_rank_t, Table> procs;  // by rank
    // Built from the job-level PMIX_NODE_MAP and PMIX_PROC_MAP when both are
    // held and readable: answers the node keys of ranks that have no
    // registered values of their own (hosts of large jobs register none).
    std::optional<mca::maps::MapIndex> maps;
};

// What one registration (register_job or store_job) adds, parsed completely
// before anything is merged into the store.
struct Registration {
    JobRecord job;
    std::map<std::uint32_t, Table> sessions;
};

class HashStore final : public mca::gds::Module {
  public:
    // `local_hostname` names this node: node-realm keys asked without a node
    // qualifier resolve to it (or to the job's only node).
    explicit HashStore(std::string local_hostname);

    mca::Status register_job(std::string_view nspace, std::span<const pmix_info_t> info) override;
    mca::Status store(const pmix_proc_t &proc, pmix_scope_t scope, std::string_view key,
                      const pmix_value_t &value) override;
    mca::Status commit(const pmix_proc_t &proc) override;
    mca::Status store_modex(const pmix_proc_t &proc, std::span<const std::byte> blob) override;
    mca::Status store_job(std::string_view nspace, std::span<const std::byte> blob) override;
    mca::Status delete_job(std::string_view nspace) override;

    mca::Status fetch(const pmix_proc_t &proc, std::string_view key,
                      std::span<const pmix_info_t> qualifiers,
                      const mca::gds::ValueSink &found) const override;
    mca::Status fetch_all(const pmix_proc_t &proc, const mca::KeyValueSink &each) const override;
    mca::Result<mca::gds::Blob> assemble_modex(const pmix_proc_t &proc,
                                               pmix_scope_t audience) const override;
    mca::Result<mca::gds::Blob> assemble_job(std::string_view nspace) const override;
    mca::Result<mca::gds::Blob> assemble_modex_pending(const pmix_proc_t &proc,
                                                       pmix_scope_t audience) const override;
    mca::Result<mca::gds::Blob> assemble_modex_scope(const pmix_proc_t &proc, pmix_scope_t scope,
                                                     bool pending) const override;

  private:
    struct Qualifiers;

    const JobRecord *find_job(std::string_view nspace) const;
    JobRecord &job_for(std::string_view nspace);
    Table &table_for(const pmix_proc_t &proc);
    const Table *find_table(const pmix_proc_t &proc) const;
    void merge(std::string_view nspace, Registration &&reg);

    // A value answered from the maps lives here for the sink call.
    struct Derived {
        pmix_value_t value{};
        std::string text;
    };
    // `exact`: the values put with exactly `audience` (assemble_modex_scope).
    mca::Result<mca::gds::Blob> assemble_selected(const pmix_proc_t &proc, pmix_scope_t audience,
                                                  bool pending, bool exact = false) const;
    const pmix_value_t *resolve(const pmix_proc_t &proc, std::string_view key, const Qualifiers &q,
                                Derived &derived) const;
    const Table *session_of(const JobRecord *job, const Qualifiers &q) const;
    const Table *app_of(const JobRecord &job, pmix_rank_t rank,
                        std::optional<std::uint32_t> appnum) const;
    const NodeRecord *node_of(const JobRecord &job, pmix_rank_t rank, const Qualifiers &q) const;
    // The map index's node of `rank`, or of the node the qualifiers name.
    std::optional<std::uint32_t> map_node(const JobRecord &job, pmix_rank_t rank,
                                          const Qualifiers &q) const;
    // PMIX_NODEID of the map's node `node`: the registered node's id, else its index.
    std::uint32_t map_nodeid(const JobRecord &job, std::uint32_t node) const;
    // Keys of a rank the maps answer (PMIX_HOSTNAME, PMIX_NODEID,
    // PMIX_LOCAL_RANK, PMIX_NODE_RANK), and of a node (PMIX_LOCAL_SIZE,
    // PMIX_LOCALLDR, PMIX_LOCAL_PEERS, PMIX_HOSTNAME, PMIX_NODEID); nullptr when
    // the maps do not say.
    const pmix_value_t *rank_from_maps(const JobRecord &job, pmix_rank_t rank, std::string_view key,
                                       Derived &out) const;
    const pmix_value_t *node_from_maps(const JobRecord &job, std::optional<std::uint32_t> node,
                                       std::string_view key, Derived &out) const;

    std::string local_hostname_;
    std::unordered_map<std::string, JobRecord, KeyHash, std::equal_to<>> jobs_;
    std::map<std::uint32_t, Table> sessions_;  // shared by the jobs of a session
};

}  // namespace pmixpp::gds_hash
