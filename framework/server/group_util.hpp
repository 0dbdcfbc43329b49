// Small helpers shared by the Groups service's files (groups.cpp,
// group_invite.cpp). Progress thread only.
#pragma once

#include <pmix.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "pmixpp/mca/info.hpp"

#include "server/client_table.hpp"
#include "server/groups.hpp"
#include "server/info_build.hpp"

namespace pmixpp::server::group_util {

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

using server::load_info;   // info_build.hpp
using server::procs_info;  // info_build.hpp

}  // namespace pmixpp::server::group_util
