// Small builders for the PMIx C structs the SDK tests pass to modules. They
// fill the structs by hand (no PMIx_* call) so that the tests exercise the
// interfaces alone. String values are borrowed from the caller.
#pragma once

#include <pmix_common.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace pmixpp::test {

inline pmix_proc_t make_proc(std::string_view nspace, pmix_rank_t rank) {
    pmix_proc_t proc{};
    std::memcpy(proc.nspace, nspace.data(), std::min(nspace.size(), sizeof(proc.nspace) - 1));
    proc.rank = rank;
    return proc;
}

inline bool same_proc(const pmix_proc_t &a, const pmix_proc_t &b) {
    return a.rank == b.rank && std::strncmp(a.nspace, b.nspace, sizeof(a.nspace)) == 0;
}

inline void set_key(pmix_info_t &info, std::string_view key) {
    std::memcpy(info.key, key.data(), std::min(key.size(), sizeof(info.key) - 1));
}

inline pmix_info_t make_info_u32(std::string_view key, std::uint32_t v) {
    pmix_info_t info{};
    set_key(info, key);
    info.value.type = PMIX_UINT32;
    info.value.data.uint32 = v;
    return info;
}

// `s` must outlive the returned info.
inline pmix_info_t make_info_string(std::string_view key, const char *s) {
    pmix_info_t info{};
    set_key(info, key);
    info.value.type = PMIX_STRING;
    info.value.data.string = const_cast<char *>(s);
    return info;
}

inline pmix_info_t make_info_flag(std::string_view key) {
    pmix_info_t info{};
    set_key(info, key);
    info.value.type = PMIX_BOOL;
    info.value.data.flag = true;
    return info;
}

inline pmix_value_t make_value_u16(std::uint16_t v) {
    pmix_value_t value{};
    value.type = PMIX_UINT16;
    value.data.uint16 = v;
    return value;
}

// `s` must outlive the returned value.
inline pmix_value_t make_value_string(const char *s) {
    pmix_value_t value{};
    value.type = PMIX_STRING;
    value.data.string = const_cast<char *>(s);
    return value;
}

}  // namespace pmixpp::test
