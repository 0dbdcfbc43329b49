// Small helpers shared by the Groups service's files (groups.cpp,
// group_invite.cpp). Progress thread only.
#pragma once

#include <pmix.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "server/client_table.hpp"
#include "server/groups.hpp"

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

inline pmix_info_t load_info(const char *key, const void *data, pmix_data_type_t type) {
    pmix_info_t i;
    std::memset(&i, 0, sizeof i);
    PMIx_Info_load(&i, key, data, type);
    return i;
}

inline pmix_info_t procs_info(const char *key, const std::vector<pmix_proc_t> &procs) {
    pmix_data_array_t darray{PMIX_PROC, procs.size(),
                             const_cast<pmix_proc_t *>(procs.empty() ? nullptr : procs.data())};
    return load_info(key, &darray, PMIX_DATA_ARRAY);
}

}  // namespace pmixpp::server::group_util
