// Building the pmix_info_t answers the server's services hand out (query
// answers, event payloads, construct results). Progress thread or any: no state.
#pragma once

#include <pmix.h>

#include <cstring>
#include <string>
#include <vector>

namespace pmixpp::server {

// A deep copy of `data` under `key` (PMIx_Info_load).
inline pmix_info_t load_info(const char *key, const void *data, pmix_data_type_t type) {
    pmix_info_t i;
    std::memset(&i, 0, sizeof i);
    PMIx_Info_load(&i, key, data, type);
    return i;
}

// A DATA_ARRAY of PROC.
inline pmix_info_t procs_info(const char *key, const std::vector<pmix_proc_t> &procs) {
    pmix_data_array_t darray{PMIX_PROC, procs.size(),
                             const_cast<pmix_proc_t *>(procs.empty() ? nullptr : procs.data())};
    return load_info(key, &darray, PMIX_DATA_ARRAY);
}

// A DATA_ARRAY of STRING.
inline pmix_info_t strings_info(const char *key, const std::vector<std::string> &strings) {
    std::vector<char *> ptrs;
    for (const auto &s : strings) ptrs.push_back(const_cast<char *>(s.c_str()));
    pmix_data_array_t darray{PMIX_STRING, ptrs.size(), ptrs.empty() ? nullptr : ptrs.data()};
    return load_info(key, &darray, PMIX_DATA_ARRAY);
}

}  // namespace pmixpp::server
