// GroupBootstrap: the bootstrap method of PMIx_Group_construct (the
// standard's PMIX_GROUP_BOOTSTRAP and PMIX_GROUP_ADD_MEMBERS; docs/groups.md,
// "Bootstrap method"). Leaders know only how many leaders there are: each
// calls construct with its own id in `procs`, PMIX_GROUP_BOOTSTRAP = the
// number of leaders and, optionally, PMIX_GROUP_ADD_MEMBERS = the processes
// of its collection; those call construct with no procs. The construct
// completes when that many leaders and every process they named have
// called; the group's membership is everything named, in (nspace, rank)
// order. Every participant must be a client of this server (else
// PMIX_ERR_NOT_SUPPORTED). With PMIX_GROUP_OPTIONAL or _FT_COLLECTIVE a
// participant that ends is left out (PMIX_ERR_PARTIAL_SUCCESS). Part of the Groups service
// (groups.hpp), which hands it its requests, departures and stop. Progress thread only.
#pragma once

#include <pmix.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/client_table.hpp"
#include "wire/codec.hpp"

namespace pmixpp::server {

class Groups;
struct GroupMembersRequest;

class GroupBootstrap {
  public:
    explicit GroupBootstrap(Groups &groups) : groups_(groups) {}

    // A construct of `me` (its reply owed to `reply`): false when it is not a
    // bootstrap construct (no PMIX_GROUP_BOOTSTRAP and some procs), else it
    // is taken and answered here.
    bool handle(const GroupMembersRequest &request, const PendingReply &reply, const ProcKey &me);
    // Whether a bootstrap construct of `id` is under way (the id is taken).
    bool busy(const std::string &id) const { return boots_.count(id) != 0; }
    // A participant that ends before the group is complete fails it for all
    // (the standard: an error from the API, without events); an add member
    // nobody named yet is just forgotten.
    void client_departed(const ProcKey &client);
    // Server stop: everything goes, nobody is answered.
    void clear();

  private:
    struct Boot {
        std::size_t leaders_expected = 0;  // PMIX_GROUP_BOOTSTRAP
        std::map<ProcKey, PendingReply> leaders;
        std::map<ProcKey, PendingReply> adds;  // called with no procs
        std::set<ProcKey> named;               // the leaders' procs and add members
        std::map<ProcKey, std::size_t> local_cids;
        bool assign_context_id = false;
        bool notify_termination = false;
        std::uint64_t timer = 0;  // the earliest PMIX_TIMEOUT of the callers
        std::chrono::steady_clock::time_point deadline;
        bool completing = false;  // the host's context id is awaited
        bool lost = false;        // a participant ended meanwhile
        // PMIX_GROUP_OPTIONAL / PMIX_GROUP_FT_COLLECTIVE (any caller): a
        // participant that ends is left out instead of failing the
        // construct (and, optional only, so is one that has not called when
        // the time is up, once every leader came).
        bool optional = false;
        bool ft_collective = false;
        std::set<ProcKey> gone;  // left out
        // A named process that has neither called nor been left out.
        bool awaited(const ProcKey &k) const {
            return leaders.count(k) == 0 && adds.count(k) == 0 && gone.count(k) == 0;
        }
    };

    // Refuses one caller with `status` (nothing else changes).
    static void refuse(const PendingReply &reply, pmix_status_t status);
    // Completes `id` when every expected participant has called.
    void check(const std::string &id);
    void complete(const std::string &id, pmix_status_t status, std::optional<std::size_t> cid);
    // Ends `id` with `status` for every caller; named local processes that
    // have not called get it when they do.
    void fail(const std::string &id, pmix_status_t status);
    std::vector<pmix_proc_t> expand(const std::vector<pmix_proc_t> &procs) const;
    // PMIX_TIMEOUT of an optional construct whose leaders all came: the
    // named processes that have not called are left out; false when the
    // construct must fail instead.
    bool complete_without_late(const std::string &id);

    Groups &groups_;
    std::map<std::string, Boot> boots_;
};

}  // namespace pmixpp::server
