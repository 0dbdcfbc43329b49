// Reading the pmix_info_t arrays and pmix_value_t values a caller hands over:
// finding an entry by key and reading it as a flag, an integer or a string,
// with the rules PMIx callers rely on. One copy for the core and components.
//
// Header-only, no state: each DSO that includes it gets its own inline copy,
// and everything may run on any thread. Nothing here copies or takes
// ownership: returned pointers point into the caller's array.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>  // std::in_range

namespace pmixpp::mca {

// The key of `info` (pmix_info_t keys are fixed arrays, NUL-terminated when
// shorter than PMIX_MAX_KEYLEN).
inline std::string_view info_key(const pmix_info_t &info) noexcept {
    return {info.key, strnlen(info.key, sizeof(info.key))};
}

// The first entry of `infos` with `key`, or nullptr.
inline const pmix_info_t *find_info(std::span<const pmix_info_t> infos,
                                    std::string_view key) noexcept {
    for (const pmix_info_t &info : infos) {
        if (info_key(info) == key) return &info;
    }
    return nullptr;
}

// A flag: a PMIX_BOOL, or no value at all (PMIX_UNDEF), which means true (a
// bool attribute given as a bare key, as Open MPI passes pmix.evprepend).
// std::nullopt for any other type.
inline std::optional<bool> as_flag(const pmix_value_t &value) noexcept {
    if (value.type == PMIX_BOOL) return value.data.flag;
    if (value.type == PMIX_UNDEF) return true;
    return std::nullopt;
}

// `info` is a flag that is set (as_flag); false for a value of another type.
inline bool info_true(const pmix_info_t &info) noexcept {
    return as_flag(info.value).value_or(false);
}

// The flag `key` of `infos`: std::nullopt when absent or not a flag.
inline std::optional<bool> info_flag(std::span<const pmix_info_t> infos,
                                     std::string_view key) noexcept {
    const pmix_info_t *info = find_info(infos, key);
    return info == nullptr ? std::nullopt : as_flag(info->value);
}

// The value of an integer-typed `v` (any PMIx integer type: callers are
// loosely typed) as R, when R can hold it: std::nullopt for a non-integer
// value or one out of R's range (a negative count, a rank above 2^32).
template <class R>
std::optional<R> as_integer(const pmix_value_t &v) noexcept {
    auto fits = [](auto x) -> std::optional<R> {
        if (!std::in_range<R>(x)) return std::nullopt;
        return static_cast<R>(x);
    };
    switch (v.type) {
        case PMIX_INT:
            return fits(v.data.integer);
        case PMIX_INT8:
            return fits(v.data.int8);
        case PMIX_INT16:
            return fits(v.data.int16);
        case PMIX_INT32:
            return fits(v.data.int32);
        case PMIX_INT64:
            return fits(v.data.int64);
        case PMIX_UINT:
            return fits(v.data.uint);
        case PMIX_UINT8:
            return fits(v.data.uint8);
        case PMIX_UINT16:
            return fits(v.data.uint16);
        case PMIX_UINT32:
            return fits(v.data.uint32);
        case PMIX_UINT64:
            return fits(v.data.uint64);
        case PMIX_SIZE:
            return fits(v.data.size);
        case PMIX_PID:
            return fits(v.data.pid);
        case PMIX_PROC_RANK:
            return fits(v.data.rank);
        default:
            return std::nullopt;
    }
}

// A count, size, pid or id: negative values are refused.
inline std::optional<std::uint64_t> as_uint(const pmix_value_t &v) noexcept {
    return as_integer<std::uint64_t>(v);
}
// A rank, appnum, node id or session id: 32 bits.
inline std::optional<std::uint32_t> as_u32(const pmix_value_t &v) noexcept {
    return as_integer<std::uint32_t>(v);
}
// A signed integer (a port, an offset).
inline std::optional<std::int64_t> as_int(const pmix_value_t &v) noexcept {
    return as_integer<std::int64_t>(v);
}

// The integer `key` of `infos` (as_int): std::nullopt when absent or not one.
inline std::optional<std::int64_t> info_int(std::span<const pmix_info_t> infos,
                                            std::string_view key) noexcept {
    const pmix_info_t *info = find_info(infos, key);
    return info == nullptr ? std::nullopt : as_int(info->value);
}

// The entries of an info-array value (a PMIX_DATA_ARRAY of PMIX_INFO: a
// PMIX_PROC_DATA, a PMIX_*_INFO_ARRAY); std::nullopt for any other value.
inline std::optional<std::span<const pmix_info_t>> info_members(const pmix_value_t &v) noexcept {
    if (v.type != PMIX_DATA_ARRAY || v.data.darray == nullptr) return std::nullopt;
    const pmix_data_array_t &array = *v.data.darray;
    if (array.size == 0) return std::span<const pmix_info_t>{};
    if (array.type != PMIX_INFO || array.array == nullptr) return std::nullopt;
    return std::span<const pmix_info_t>(static_cast<const pmix_info_t *>(array.array), array.size);
}

// The string `key` of `infos`: std::nullopt when absent, not a PMIX_STRING,
// or empty (an empty path or name is as good as none).
inline std::optional<std::string> info_string(std::span<const pmix_info_t> infos,
                                              std::string_view key) {
    const pmix_info_t *info = find_info(infos, key);
    if (info == nullptr || info->value.type != PMIX_STRING || info->value.data.string == nullptr ||
        info->value.data.string[0] == '\0') {
        return std::nullopt;
    }
    return std::string(info->value.data.string);
}

}  // namespace pmixpp::mca
