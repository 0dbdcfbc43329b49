// C entry points for pmix_value_t / pmix_info_t / pmix_data_array_t and the
// structs that header macros release through the library.
//
// Ownership (standard, and what the 4.2 header macros assume): everything a
// value or info holds is malloc'd by us and released with free(); a value of
// type PMIX_POINTER does not own what it points to; an info flagged
// PMIX_INFO_PERSISTENT does not own its value.
#include <cstdlib>
#include <cstring>

#include "pmix.h"
#include "wire/codec.hpp"

namespace {

using pmixpp::wire::element_size;
using pmixpp::wire::value_is_boxed;

// For PMIX_STRING and PMIX_POINTER the caller passes the char* / void* itself;
// for every other type a pointer to one element.
const void *element_of(const void *data, pmix_data_type_t type, const void **slot) {
    if (type == PMIX_STRING || type == PMIX_POINTER) {
        *slot = data;
        return slot;
    }
    return data;
}

// Copies a key into a pmix_key_t, truncating at PMIX_MAX_KEYLEN, NUL-terminated.
void load_key(char *dst, const char *src) {
    std::size_t n = strnlen(src, PMIX_MAX_KEYLEN);
    std::memcpy(dst, src, n);
    std::memset(dst + n, 0, PMIX_MAX_KEYLEN + 1 - n);
}

template <class T>
pmix_value_cmp_t order(T a, T b) {
    if (a == b) return PMIX_EQUAL;
    return a > b ? PMIX_VALUE1_GREATER : PMIX_VALUE2_GREATER;
}

}  // namespace

extern "C" {

pmix_status_t PMIx_Value_load(pmix_value_t *val, const void *data, pmix_data_type_t type) {
    if (val == nullptr) return PMIX_ERR_BAD_PARAM;
    if (type != PMIX_UNDEF && element_size(type) == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    std::memset(&val->data, 0, sizeof val->data);
    val->type = type;
    if (type == PMIX_UNDEF) return PMIX_SUCCESS;
    if (data == nullptr) {
        // A bare boolean key means "true" (PMIX_INFO_LOAD(i, key, NULL, PMIX_BOOL)).
        if (type == PMIX_BOOL) val->data.flag = true;
        return PMIX_SUCCESS;
    }
    const void *slot = nullptr;
    const void *elem = element_of(data, type, &slot);
    if (!value_is_boxed(type)) return pmixpp::wire::copy(type, &val->data, elem, 1);
    void *box = std::calloc(1, element_size(type));
    if (box == nullptr) return PMIX_ERR_NOMEM;
    pmix_status_t rc = pmixpp::wire::copy(type, box, elem, 1);
    if (rc != PMIX_SUCCESS) {
        std::free(box);
        val->type = PMIX_UNDEF;
        return rc;
    }
    val->data.ptr = box;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Value_unload(pmix_value_t *val, void **data, size_t *sz) {
    // Contract, compatible with both the standard and OpenPMIx 4.2.2:
    // - a string comes back strdup'd with *sz = strlen (as 4.2.2 reports it);
    // - a byte object's bytes come back as a malloc'd copy;
    // - a fixed-size type without owned memory (numbers, states, proc, ...) is
    //   written into the caller's storage when *data points to some (what
    //   4.2.2 requires), else into a malloc'd block (what the standard says);
    // - any other type comes back as a malloc'd deep copy that replaces *data;
    // - PMIX_POINTER returns the pointer itself, which the caller does not own.
    if (val == nullptr || data == nullptr || sz == nullptr) return PMIX_ERR_BAD_PARAM;
    *sz = 0;
    const pmix_data_type_t type = val->type;
    const std::size_t es = element_size(type);
    if (type == PMIX_UNDEF || es == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    switch (type) {
        case PMIX_STRING:
            *data = nullptr;
            if (val->data.string) {
                *data = strdup(val->data.string);
                if (*data == nullptr) return PMIX_ERR_NOMEM;
                *sz = std::strlen(val->data.string);
            }
            return PMIX_SUCCESS;
        case PMIX_POINTER:
            *data = val->data.ptr;
            *sz = sizeof(void *);
            return PMIX_SUCCESS;
        case PMIX_BYTE_OBJECT:
        case PMIX_COMPRESSED_STRING:
        case PMIX_REGEX:
        case PMIX_COMPRESSED_BYTE_OBJECT:
            *data = nullptr;
            if (val->data.bo.bytes && val->data.bo.size > 0) {
                *data = std::malloc(val->data.bo.size);
                if (*data == nullptr) return PMIX_ERR_NOMEM;
                std::memcpy(*data, val->data.bo.bytes, val->data.bo.size);
                *sz = val->data.bo.size;
            }
            return PMIX_SUCCESS;
        default:
            break;
    }
    const void *src = value_is_boxed(type) ? val->data.ptr : static_cast<const void *>(&val->data);
    if (src == nullptr) {
        *data = nullptr;
        return PMIX_SUCCESS;
    }
    const bool plain = type == PMIX_PROC || (!value_is_boxed(type) && type != PMIX_ENVAR);
    if (plain && *data != nullptr) {
        std::memcpy(*data, src, es);
        *sz = es;
        return PMIX_SUCCESS;
    }
    void *copy = std::calloc(1, es);
    if (copy == nullptr) return PMIX_ERR_NOMEM;
    pmix_status_t rc = pmixpp::wire::copy(type, copy, src, 1);
    if (rc != PMIX_SUCCESS) {
        std::free(copy);
        return rc;
    }
    *data = copy;
    *sz = es;
    return PMIX_SUCCESS;
}

void PMIx_Value_destruct(pmix_value_t *val) {
    if (val == nullptr) return;
    pmixpp::wire::destruct(PMIX_VALUE, val, 1);
    val->type = PMIX_UNDEF;
}

pmix_status_t PMIx_Value_xfer(pmix_value_t *dest, const pmix_value_t *src) {
    if (dest == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
    return pmixpp::wire::copy(PMIX_VALUE, dest, src, 1);
}

pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1, pmix_value_t *v2) {
    if (v1 == nullptr || v2 == nullptr) return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    if (v1->type != v2->type) return PMIX_VALUE_TYPE_DIFFERENT;
    const auto &a = v1->data;
    const auto &b = v2->data;
    switch (v1->type) {
        case PMIX_UNDEF:
            return PMIX_EQUAL;
        case PMIX_BOOL:
            return order(a.flag, b.flag);
        case PMIX_BYTE:
            return order(a.byte, b.byte);
        case PMIX_SIZE:
            return order(a.size, b.size);
        case PMIX_PID:
            return order(a.pid, b.pid);
        case PMIX_INT:
            return order(a.integer, b.integer);
        case PMIX_INT8:
            return order(a.int8, b.int8);
        case PMIX_INT16:
            return order(a.int16, b.int16);
        case PMIX_INT32:
            return order(a.int32, b.int32);
        case PMIX_INT64:
            return order(a.int64, b.int64);
        case PMIX_UINT:
            return order(a.uint, b.uint);
        case PMIX_UINT8:
        case PMIX_COMMAND:
            return order(a.uint8, b.uint8);
        case PMIX_UINT16:
        case PMIX_DATA_TYPE:
        case PMIX_IOF_CHANNEL:
        case PMIX_LOCTYPE:
        case PMIX_STOR_ACCESS_TYPE:
            return order(a.uint16, b.uint16);
        case PMIX_UINT32:
        case PMIX_INFO_DIRECTIVES:
            return order(a.uint32, b.uint32);
        case PMIX_UINT64:
        case PMIX_DEVTYPE:
        case PMIX_STOR_MEDIUM:
        case PMIX_STOR_ACCESS:
        case PMIX_STOR_PERSIST:
            return order(a.uint64, b.uint64);
        case PMIX_FLOAT:
            return order(a.fval, b.fval);
        case PMIX_DOUBLE:
            return order(a.dval, b.dval);
        case PMIX_TIME:
            return order(a.time, b.time);
        case PMIX_STATUS:
            return order(a.status, b.status);
        case PMIX_PROC_RANK:
            return order(a.rank, b.rank);
        case PMIX_PERSIST:
            return order(a.persist, b.persist);
        case PMIX_SCOPE:
            return order(a.scope, b.scope);
        case PMIX_DATA_RANGE:
            return order(a.range, b.range);
        case PMIX_PROC_STATE:
            return order(a.state, b.state);
        case PMIX_ALLOC_DIRECTIVE:
            return order(a.adir, b.adir);
        case PMIX_JOB_STATE:
            return order(a.jstate, b.jstate);
        case PMIX_LINK_STATE:
            return order(a.linkstate, b.linkstate);
        case PMIX_POINTER:
            return a.ptr == b.ptr ? PMIX_EQUAL : PMIX_VALUE_COMPARISON_NOT_AVAIL;
        case PMIX_TIMEVAL:
            if (a.tv.tv_sec != b.tv.tv_sec) return order(a.tv.tv_sec, b.tv.tv_sec);
            return order(a.tv.tv_usec, b.tv.tv_usec);
        case PMIX_STRING:
            if (a.string == nullptr || b.string == nullptr)
                return order(a.string != nullptr, b.string != nullptr);
            return order(std::strcmp(a.string, b.string), 0);
        default:
            break;
    }
    // Structured types: equal when their encodings are equal, otherwise ordered
    // by encoding (stable, though not meaningful beyond equality).
    pmixpp::wire::Encoder e1, e2;
    if (pmixpp::wire::encode(e1, PMIX_VALUE, v1, 1) != PMIX_SUCCESS ||
        pmixpp::wire::encode(e2, PMIX_VALUE, v2, 1) != PMIX_SUCCESS) {
        return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    }
    if (e1.bytes() == e2.bytes()) return PMIX_EQUAL;
    return e1.bytes() > e2.bytes() ? PMIX_VALUE1_GREATER : PMIX_VALUE2_GREATER;
}

void PMIx_Data_array_destruct(pmix_data_array_t *d) {
    if (d == nullptr) return;
    pmixpp::wire::destruct(PMIX_DATA_ARRAY, d, 1);
}

void PMIx_Topology_destruct(pmix_topology_t *topo) {
    if (topo == nullptr) return;
    pmixpp::wire::destruct(PMIX_TOPO, topo, 1);
}

void PMIx_Cpuset_destruct(pmix_cpuset_t *cpuset) {
    if (cpuset == nullptr) return;
    pmixpp::wire::destruct(PMIX_PROC_CPUSET, cpuset, 1);
}

pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key, const void *data,
                             pmix_data_type_t type) {
    if (info == nullptr || key == nullptr) return PMIX_ERR_BAD_PARAM;
    // OpenPMIx 4.2.2 clears the directives here (even PMIX_INFO_ARRAY_END set by
    // PMIX_INFO_CREATE); binaries built against it see flags == 0 after a load.
    load_key(info->key, key);
    info->flags = 0;
    return PMIx_Value_load(&info->value, data, type);
}

pmix_status_t PMIx_Info_xfer(pmix_info_t *dest, const pmix_info_t *src) {
    if (dest == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
    if (dest == src) return PMIX_SUCCESS;
    load_key(dest->key, src->key);
    dest->flags = src->flags;
    if (src->flags & PMIX_INFO_PERSISTENT) {
        // The source does not own its value; neither will the copy.
        std::memcpy(&dest->value, &src->value, sizeof dest->value);
        return PMIX_SUCCESS;
    }
    return PMIx_Value_xfer(&dest->value, &src->value);
}

}  // extern "C"
