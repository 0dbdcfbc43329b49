// Small helpers shared by the Groups service's files (groups.cpp,
// group_invite.cpp). Progress thread only.
#pragma once

#include <pmix.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pmixpp/mca/info.hpp"

#include "event/event.hpp"

#include "server/client_table.hpp"
#include "server/groups.hpp"
#include "server/info_build.hpp"
#include "wire/frame.hpp"
#include "wire/message.hpp"

namespace pmixpp::server::group_util {

// A group_decision request: a handler's answer about a group event
// (client groups.cpp sends it; Groups and GroupBootstrap read it).
struct Decision {
    std::string id;
    pmix_status_t code = 0;      // the event answered
    pmix_proc_t about{};         // the process it was about
    pmix_status_t decision = 0;  // the handler's answer
    std::uint8_t volunteer = 0;  // 1: offers to lead
};

// Decodes a group_decision request's body: nullopt when malformed.
inline std::optional<Decision> read_decision(const wire::Frame &frame) {
    wire::BodyReader r(frame.body);
    Decision d;
    r.str(d.id);
    r.i32(d.code);
    r.proc(d.about);
    r.i32(d.decision);
    r.u8(d.volunteer);
    if (!r.finished()) return std::nullopt;
    return d;
}

// A group event: PMIX_GROUP_ID, the custom range `to`, then `extra` (taken:
// destructed here) from `source` (nullptr: this server library).
inline events::Event group_event(pmix_status_t code, const std::string &id,
                                 const pmix_proc_t *source, const std::vector<pmix_proc_t> &to,
                                 std::vector<pmix_info_t> extra = {}) {
    std::vector<pmix_info_t> info;
    info.push_back(load_info(PMIX_GROUP_ID, id.c_str(), PMIX_STRING));
    info.push_back(procs_info(PMIX_EVENT_CUSTOM_RANGE, to));
    info.insert(info.end(), extra.begin(), extra.end());
    auto ev = events::Event::make(code, source, PMIX_RANGE_CUSTOM, info.data(), info.size());
    for (auto &i : info) PMIx_Value_destruct(&i.value);
    return ev;
}

// PMIX_EVENT_AFFECTED_PROC, for group_event's `extra`.
inline pmix_info_t affected(const pmix_proc_t &proc) {
    return load_info(PMIX_EVENT_AFFECTED_PROC, &proc, PMIX_PROC);
}

inline bool proc_less(const pmix_proc_t &a, const pmix_proc_t &b) {
    return key_of(a) < key_of(b);
}

inline bool same_procs(const std::vector<pmix_proc_t> &a, const std::vector<pmix_proc_t> &b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const auto &x, const auto &y) { return key_of(x) == key_of(y); });
}

// Whether `member` (a proc, or a wildcard) names `proc`.
inline bool names(const pmix_proc_t &member, const ProcKey &proc) {
    const ProcKey m = key_of(member);
    return m.first == proc.first && (m.second == PMIX_RANK_WILDCARD || m.second == proc.second);
}

inline bool is_member(const GroupRecord &g, const ProcKey &proc) {
    return std::any_of(g.members.begin(), g.members.end(),
                       [&](const auto &m) { return names(m, proc); });
}

// The PMIX_GROUP_CONTEXT_ID of a host's `group` answer (none: absent or
// not an unsigned integer).
inline std::optional<std::size_t> context_id_in(std::span<const pmix_info_t> results) {
    const pmix_info_t *c = mca::find_info(results, PMIX_GROUP_CONTEXT_ID);
    if (c == nullptr) return std::nullopt;
    if (auto v = mca::as_uint(c->value)) return static_cast<std::size_t>(*v);
    return std::nullopt;
}

// An election of a new leader (every leader failed), one rule for both
// methods and every server (docs/groups.md): the volunteer with the lowest
// group rank, else the lowest group rank of the first non-empty tier.
// `volunteers` and `tiers` hold only eligible processes; `rank_of` gives
// group ranks. None: nobody is eligible.
template <typename RankOf>
std::optional<ProcKey> elect(const std::vector<ProcKey> &volunteers,
                             const std::vector<std::vector<ProcKey>> &tiers, RankOf rank_of) {
    auto lowest = [&](const std::vector<ProcKey> &from) {
        return *std::min_element(from.begin(), from.end(), [&](const ProcKey &a, const ProcKey &b) {
            return rank_of(a) < rank_of(b);
        });
    };
    if (!volunteers.empty()) return lowest(volunteers);
    for (const auto &tier : tiers) {
        if (!tier.empty()) return lowest(tier);
    }
    return std::nullopt;
}

// A server's vote in an election across servers: a PMIX_GROUP_LEADER_FAILED
// event through the host's notify_event, consumed by the receiving server
// (groups.cpp, group_invite.cpp; docs/groups.md, "For host writers").
inline constexpr const char *kVoteKey = "pmixpp.grp.vote";              // string: the group id
inline constexpr const char *kVotersKey = "pmixpp.grp.voters";          // procs: who voted there
inline constexpr const char *kVolunteersKey = "pmixpp.grp.volunteers";  // procs: who volunteered
// On the PMIX_GROUP_CONSTRUCT_ABORT a voter's abort sends to the other
// servers: the failed leaders the election was about (a server whose host
// had not answered yet tells its participants of them first, groups.cpp).
inline constexpr const char *kAbortLeadersKey = "pmixpp.grp.abort.leaders";  // procs

using server::load_info;   // info_build.hpp
using server::procs_info;  // info_build.hpp

}  // namespace pmixpp::server::group_util
