// The client side of PMIx process groups (docs/groups.md): the groups this
// process belongs to, as the server's construct reply described them, and
// the requests group_construct / group_destruct / group_leave.
//
// The table answers PMIx_Get of PMIX_GROUP_NAMES, PMIX_GROUP_MEMBERSHIP,
// PMIX_GROUP_CONTEXT_ID and PMIX_GROUP_LOCAL_CID, and translates a group
// used as an address ({id, PMIX_RANK_WILDCARD}, {id, group rank}) into the
// members' real identities before a Fence, Get or Notify leaves the process,
// so neither the server nor its host ever sees a group id in place of a
// namespace. Any thread (its own mutex).
#pragma once

#include <pmix_common.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wire/message.hpp"

namespace pmixpp::client {

struct GroupInfo {
    std::vector<pmix_proc_t> members;  // group rank = index
    std::optional<std::size_t> context_id;
    std::vector<std::pair<pmix_proc_t, std::uint64_t>> local_cids;  // PMIX_GROUP_LOCAL_CID
};

class GroupTable {
  public:
    static GroupTable &instance();

    void record(const std::string &id, GroupInfo info);
    void forget(const std::string &id);
    // `proc` left group `id` (PMIX_GROUP_LEFT, or this process's own leave).
    void remove_member(const std::string &id, const pmix_proc_t &proc);
    void clear();
    bool known(const std::string &id) const;

    // The procs with every group address replaced by the members it names.
    // PMIX_ERR_BAD_PARAM: a group rank beyond the group's size.
    pmix_status_t translate(std::vector<pmix_proc_t> &procs) const;
    // A notifier's or a handler registration's info with its
    // PMIX_EVENT_CUSTOM_RANGE, PMIX_EVENT_AFFECTED_PROC and
    // PMIX_EVENT_AFFECTED_PROCS translated into `out` (left empty when they
    // name no group); an AFFECTED_PROC naming several members becomes
    // PMIX_EVENT_AFFECTED_PROCS.
    pmix_status_t translate_range(const pmix_info_t *info, std::size_t ninfo,
                                  wire::InfoArray &out) const;
    // A single target: {id, group rank} → that member. False: not a group
    // address (left as is); PMIX_ERR_BAD_PARAM in `rc` for a bad rank.
    bool translate_one(pmix_proc_t &target, pmix_status_t &rc) const;
    // PMIx_Get of a group key; nullopt: not a group key, ask the store.
    std::optional<pmix_status_t> get(const pmix_proc_t &target, const char *key,
                                     std::span<const pmix_info_t> qualifiers,
                                     pmix_value_t **out) const;

  private:
    mutable std::mutex mutex_;
    std::map<std::string, GroupInfo> groups_;
    // Whether groups_ holds any: the Get and Fence paths skip the lock when not.
    std::atomic<bool> any_{false};
};

// Progress thread: the group requests. `done` runs exactly once; for a
// construct with the results (PMIX_GROUP_ID, _MEMBERSHIP, _CONTEXT_ID) on success.
void group_construct_async(std::string id, std::vector<pmix_proc_t> procs, std::uint32_t timeout_s,
                           std::shared_ptr<wire::InfoArray> info,
                           std::function<void(pmix_status_t, wire::InfoArray)> done);
void group_destruct_async(std::string id, std::uint32_t timeout_s,
                          std::shared_ptr<wire::InfoArray> info,
                          std::function<void(pmix_status_t)> done);
void group_leave_async(std::string id, std::shared_ptr<wire::InfoArray> info,
                       std::function<void(pmix_status_t)> done);
// The invite method (docs/groups.md, "Invite and join"): `done` runs when
// the group is complete (results as a construct's) or its construction
// failed; a declining join's at once.
void group_invite_async(std::string id, std::vector<pmix_proc_t> procs, std::uint32_t timeout_s,
                        std::shared_ptr<wire::InfoArray> info,
                        std::function<void(pmix_status_t, wire::InfoArray)> done);
void group_join_async(std::string id, pmix_proc_t leader, pmix_group_opt_t opt,
                      std::uint32_t timeout_s, std::shared_ptr<wire::InfoArray> info,
                      std::function<void(pmix_status_t, wire::InfoArray)> done);

}  // namespace pmixpp::client
