// Encoder/Decoder and the two visitors that drive them over fields.hpp.
#include "wire/codec.hpp"

#include <hwloc.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "wire/fields.hpp"

namespace pmixpp::wire {

// ---------------------------------------------------------------------------
// Type table

namespace {

struct TypeInfo {
    pmix_data_type_t type;
    const char *name;
    std::size_t size;  // 0: no codec support
    bool boxed;        // held by pointer inside pmix_value_t
};

#define PMIXPP_TYPE(T, C, BOXED) \
    { T, #T, sizeof(C), BOXED }
constexpr TypeInfo kTypes[] = {
    {PMIX_UNDEF, "PMIX_UNDEF", 0, false},
    PMIXPP_TYPE(PMIX_BOOL, bool, false),
    PMIXPP_TYPE(PMIX_BYTE, uint8_t, false),
    PMIXPP_TYPE(PMIX_STRING, char *, false),
    PMIXPP_TYPE(PMIX_SIZE, size_t, false),
    PMIXPP_TYPE(PMIX_PID, pid_t, false),
    PMIXPP_TYPE(PMIX_INT, int, false),
    PMIXPP_TYPE(PMIX_INT8, int8_t, false),
    PMIXPP_TYPE(PMIX_INT16, int16_t, false),
    PMIXPP_TYPE(PMIX_INT32, int32_t, false),
    PMIXPP_TYPE(PMIX_INT64, int64_t, false),
    PMIXPP_TYPE(PMIX_UINT, unsigned int, false),
    PMIXPP_TYPE(PMIX_UINT8, uint8_t, false),
    PMIXPP_TYPE(PMIX_UINT16, uint16_t, false),
    PMIXPP_TYPE(PMIX_UINT32, uint32_t, false),
    PMIXPP_TYPE(PMIX_UINT64, uint64_t, false),
    PMIXPP_TYPE(PMIX_FLOAT, float, false),
    PMIXPP_TYPE(PMIX_DOUBLE, double, false),
    PMIXPP_TYPE(PMIX_TIMEVAL, timeval, false),
    PMIXPP_TYPE(PMIX_TIME, time_t, false),
    PMIXPP_TYPE(PMIX_STATUS, pmix_status_t, false),
    PMIXPP_TYPE(PMIX_VALUE, pmix_value_t, true),
    PMIXPP_TYPE(PMIX_PROC, pmix_proc_t, true),
    PMIXPP_TYPE(PMIX_APP, pmix_app_t, true),
    PMIXPP_TYPE(PMIX_INFO, pmix_info_t, true),
    PMIXPP_TYPE(PMIX_PDATA, pmix_pdata_t, true),
    PMIXPP_TYPE(PMIX_BYTE_OBJECT, pmix_byte_object_t, false),
    {PMIX_KVAL, "PMIX_KVAL", 0, false},  // internal to OpenPMIx, no public struct
    PMIXPP_TYPE(PMIX_PERSIST, pmix_persistence_t, false),
    PMIXPP_TYPE(PMIX_POINTER, void *, false),
    PMIXPP_TYPE(PMIX_SCOPE, pmix_scope_t, false),
    PMIXPP_TYPE(PMIX_DATA_RANGE, pmix_data_range_t, false),
    PMIXPP_TYPE(PMIX_COMMAND, uint8_t, false),
    PMIXPP_TYPE(PMIX_INFO_DIRECTIVES, pmix_info_directives_t, false),
    PMIXPP_TYPE(PMIX_DATA_TYPE, pmix_data_type_t, false),
    PMIXPP_TYPE(PMIX_PROC_STATE, pmix_proc_state_t, false),
    PMIXPP_TYPE(PMIX_PROC_INFO, pmix_proc_info_t, true),
    PMIXPP_TYPE(PMIX_DATA_ARRAY, pmix_data_array_t, true),
    PMIXPP_TYPE(PMIX_PROC_RANK, pmix_rank_t, false),
    PMIXPP_TYPE(PMIX_QUERY, pmix_query_t, true),
    PMIXPP_TYPE(PMIX_COMPRESSED_STRING, pmix_byte_object_t, false),
    PMIXPP_TYPE(PMIX_ALLOC_DIRECTIVE, pmix_alloc_directive_t, false),
    PMIXPP_TYPE(PMIX_IOF_CHANNEL, pmix_iof_channel_t, false),
    PMIXPP_TYPE(PMIX_ENVAR, pmix_envar_t, false),
    PMIXPP_TYPE(PMIX_COORD, pmix_coord_t, true),
    PMIXPP_TYPE(PMIX_REGATTR, pmix_regattr_t, true),
    PMIXPP_TYPE(PMIX_REGEX, pmix_byte_object_t, false),
    PMIXPP_TYPE(PMIX_JOB_STATE, pmix_job_state_t, false),
    PMIXPP_TYPE(PMIX_LINK_STATE, pmix_link_state_t, false),
    PMIXPP_TYPE(PMIX_PROC_CPUSET, pmix_cpuset_t, true),
    PMIXPP_TYPE(PMIX_GEOMETRY, pmix_geometry_t, true),
    PMIXPP_TYPE(PMIX_DEVICE_DIST, pmix_device_distance_t, true),
    PMIXPP_TYPE(PMIX_ENDPOINT, pmix_endpoint_t, true),
    PMIXPP_TYPE(PMIX_TOPO, pmix_topology_t, true),
    PMIXPP_TYPE(PMIX_DEVTYPE, pmix_device_type_t, false),
    PMIXPP_TYPE(PMIX_LOCTYPE, pmix_locality_t, false),
    PMIXPP_TYPE(PMIX_COMPRESSED_BYTE_OBJECT, pmix_byte_object_t, false),
    PMIXPP_TYPE(PMIX_PROC_NSPACE, pmix_nspace_t, true),
    PMIXPP_TYPE(PMIX_PROC_STATS, pmix_proc_stats_t, true),
    PMIXPP_TYPE(PMIX_DISK_STATS, pmix_disk_stats_t, true),
    PMIXPP_TYPE(PMIX_NET_STATS, pmix_net_stats_t, true),
    PMIXPP_TYPE(PMIX_NODE_STATS, pmix_node_stats_t, true),
    PMIXPP_TYPE(PMIX_DATA_BUFFER, pmix_data_buffer_t, true),
    PMIXPP_TYPE(PMIX_STOR_MEDIUM, pmix_storage_medium_t, false),
    PMIXPP_TYPE(PMIX_STOR_ACCESS, pmix_storage_accessibility_t, false),
    PMIXPP_TYPE(PMIX_STOR_PERSIST, pmix_storage_persistence_t, false),
    PMIXPP_TYPE(PMIX_STOR_ACCESS_TYPE, pmix_storage_access_type_t, false),
};
#undef PMIXPP_TYPE

constexpr std::size_t kMaxType = PMIX_STOR_ACCESS_TYPE;

// Index by type value; entries for holes in the numbering stay null.
const TypeInfo *lookup(pmix_data_type_t t) noexcept {
    static const auto table = [] {
        std::array<const TypeInfo *, kMaxType + 1> byType{};
        for (const auto &info : kTypes) byType[info.type] = &info;
        return byType;
    }();
    return t <= kMaxType ? table[t] : nullptr;
}

bool is_hwloc(const char *source) {
    return source != nullptr && std::strncmp(source, "hwloc", 5) == 0;
}

}  // namespace

std::size_t element_size(pmix_data_type_t t) noexcept {
    const TypeInfo *info = lookup(t);
    return info ? info->size : 0;
}

bool value_is_boxed(pmix_data_type_t t) noexcept {
    const TypeInfo *info = lookup(t);
    return info && info->boxed;
}

const char *type_name(pmix_data_type_t t) noexcept {
    const TypeInfo *info = lookup(t);
    return info ? info->name : nullptr;
}

// ---------------------------------------------------------------------------
// Byte level

void Encoder::put_raw(const void *data, std::size_t size) {
    const auto *p = static_cast<const uint8_t *>(data);
    bytes_.insert(bytes_.end(), p, p + size);
}

void Encoder::put_le(uint64_t x, int width) {
    // Grown once for the whole field, and to at least 64 bytes at the first
    // write: byte by byte, a body of a few integers went through one
    // reallocation per power of two (an event message's header: six).
    const std::size_t at = bytes_.size();
    if (bytes_.capacity() - at < static_cast<std::size_t>(width))
        bytes_.reserve(std::max<std::size_t>(std::max<std::size_t>(64, 2 * bytes_.capacity()),
                                             at + static_cast<std::size_t>(width)));
    bytes_.resize(at + static_cast<std::size_t>(width));
    for (int i = 0; i < width; ++i) bytes_[at + i] = static_cast<uint8_t>(x >> (8 * i));
}

bool Decoder::get_raw(void *out, std::size_t size) {
    if (!ok()) return false;
    if (size > remaining()) {
        fail(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        return false;
    }
    if (size > 0) std::memcpy(out, input_.data() + pos_, size);
    pos_ += size;
    return true;
}

bool Decoder::get_le(uint64_t &x, int width) {
    x = 0;
    if (!ok()) return false;
    if (static_cast<std::size_t>(width) > remaining()) {
        fail(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        return false;
    }
    for (int i = 0; i < width; ++i) x |= static_cast<uint64_t>(input_[pos_ + i]) << (8 * i);
    pos_ += width;
    return true;
}

bool Decoder::get_u8(uint8_t &x) {
    uint64_t v;
    bool r = get_le(v, 1);
    x = static_cast<uint8_t>(v);
    return r;
}
bool Decoder::get_u16(uint16_t &x) {
    uint64_t v;
    bool r = get_le(v, 2);
    x = static_cast<uint16_t>(v);
    return r;
}
bool Decoder::get_u32(uint32_t &x) {
    uint64_t v;
    bool r = get_le(v, 4);
    x = static_cast<uint32_t>(v);
    return r;
}
bool Decoder::get_u64(uint64_t &x) {
    return get_le(x, 8);
}

bool Decoder::get_count(std::size_t &count, std::size_t min_bytes_each) {
    uint64_t n = 0;
    count = 0;
    if (!get_u64(n)) return false;
    if (min_bytes_each == 0) min_bytes_each = 1;
    if (n > remaining() / min_bytes_each) {
        fail(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        return false;
    }
    count = static_cast<std::size_t>(n);
    return true;
}

// ---------------------------------------------------------------------------
// Visitors

namespace {

template <class T>
uint64_t to_bits(T x) {
    if constexpr (std::is_same_v<T, bool>) {
        return x ? 1 : 0;
    } else if constexpr (std::is_same_v<T, float>) {
        return std::bit_cast<uint32_t>(x);
    } else if constexpr (std::is_same_v<T, double>) {
        return std::bit_cast<uint64_t>(x);
    } else {
        return static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(x));
    }
}

template <class T>
T from_bits(uint64_t x) {
    if constexpr (std::is_same_v<T, bool>) {
        return x != 0;
    } else if constexpr (std::is_same_v<T, float>) {
        return std::bit_cast<float>(static_cast<uint32_t>(x));
    } else if constexpr (std::is_same_v<T, double>) {
        return std::bit_cast<double>(x);
    } else {
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(x));
    }
}

class EncodeVisitor {
  public:
    explicit EncodeVisitor(Encoder &enc) : enc_(enc) {}
    bool ok() const { return status_ == PMIX_SUCCESS; }
    pmix_status_t status() const { return status_; }
    void fail(pmix_status_t s) {
        if (ok()) status_ = s;
    }

    template <class T>
    void num(T &x) {
        uint64_t bits = to_bits(x);
        for (std::size_t i = 0; i < sizeof(T); ++i)
            enc_.put_u8(static_cast<uint8_t>(bits >> (8 * i)));
    }
    void str(char *&s) { put_string(s, s ? std::strlen(s) : 0); }
    void fixed(char *buf, std::size_t cap) { put_string(buf, strnlen(buf, cap)); }
    void bytes(char *&p, std::size_t &n) {
        std::size_t size = p ? n : 0;
        enc_.put_u64(size);
        enc_.put_raw(p, size);
    }
    void argv(char **&a) {
        std::size_t n = 0;
        while (a && a[n]) ++n;
        enc_.put_u64(a ? n + 1 : 0);
        for (std::size_t i = 0; i < n; ++i) str(a[i]);
    }
    template <class T>
    void array(T *&p, std::size_t &n) {
        std::size_t count = p ? n : 0;
        enc_.put_u64(count);
        for (std::size_t i = 0; i < count && ok(); ++i) visit(*this, p[i]);
    }
    void typed_array(pmix_data_type_t t, void *&arr, std::size_t &n) {
        std::size_t count = arr ? n : 0;
        std::size_t es = element_size(t);
        if (count > 0 && es == 0) return fail(PMIX_ERR_UNKNOWN_DATA_TYPE);
        enc_.put_u64(count);
        for (std::size_t i = 0; i < count && ok(); ++i)
            visit_typed(*this, t, static_cast<char *>(arr) + i * es);
    }
    void boxed(pmix_data_type_t t, void *&ptr) {
        enc_.put_u8(ptr ? 1 : 0);
        if (ptr) visit_typed(*this, t, ptr);
    }
    void type_tag(pmix_data_type_t &t) {
        if (t != PMIX_UNDEF && element_size(t) == 0) return fail(PMIX_ERR_UNKNOWN_DATA_TYPE);
        enc_.put_u16(t);
    }
    void pointer(void *&p) { enc_.put_u64(reinterpret_cast<uintptr_t>(p)); }
    void topology(pmix_topology_t &t) {
        str(t.source);
        char *xml = nullptr;
        int len = 0;
        if (is_hwloc(t.source) && t.topology &&
            hwloc_topology_export_xmlbuffer(static_cast<hwloc_topology_t>(t.topology), &xml, &len,
                                            0) == 0) {
            enc_.put_u64(static_cast<uint64_t>(len));
            enc_.put_raw(xml, static_cast<std::size_t>(len));
            hwloc_free_xmlbuffer(static_cast<hwloc_topology_t>(t.topology), xml);
        } else {
            enc_.put_u64(0);
        }
    }
    void cpuset(pmix_cpuset_t &c) {
        str(c.source);
        char *list = nullptr;
        if (is_hwloc(c.source) && c.bitmap &&
            hwloc_bitmap_list_asprintf(&list, static_cast<hwloc_const_bitmap_t>(c.bitmap)) >= 0) {
            str(list);
            std::free(list);
        } else {
            enc_.put_u64(0);
        }
    }
    void buffer(pmix_data_buffer_t &b) {
        std::size_t n = 0;
        const char *start = nullptr;
        if (b.base_ptr) {
            start = b.unpack_ptr ? b.unpack_ptr : b.base_ptr;
            const char *end = b.base_ptr + b.bytes_used;
            n = end > start ? static_cast<std::size_t>(end - start) : 0;
        }
        enc_.put_u64(n);
        enc_.put_raw(start, n);
    }

  private:
    void put_string(const char *s, std::size_t len) {
        if (!s) {
            enc_.put_u64(0);
            return;
        }
        enc_.put_u64(len + 1);
        enc_.put_raw(s, len);
    }
    Encoder &enc_;
    pmix_status_t status_ = PMIX_SUCCESS;
};

// The fewest bytes one element can take on the wire: that of a zeroed
// element (NULL strings, empty arrays, PMIX_UNDEF values). A count read from
// the input is checked against remaining / min size before allocating, so a
// forged count can make us allocate at most ~40x the input (pmix_info_t).
template <class T>
std::size_t min_encoded_size() {
    static const std::size_t size = [] {
        T zero;
        std::memset(static_cast<void *>(&zero), 0, sizeof zero);
        Encoder enc;
        EncodeVisitor v(enc);
        visit(v, zero);
        return std::max<std::size_t>(enc.bytes().size(), 1);
    }();
    return size;
}

std::size_t min_encoded_size(pmix_data_type_t t) {
    static const auto table = [] {
        std::array<std::size_t, kMaxType + 1> sizes{};
        for (const TypeInfo &info : kTypes) {
            if (info.size == 0) continue;
            void *zero = std::calloc(1, info.size);
            Encoder enc;
            if (zero && encode(enc, info.type, zero, 1) == PMIX_SUCCESS)
                sizes[info.type] = enc.bytes().size();
            std::free(zero);
        }
        return sizes;
    }();
    return t <= kMaxType && table[t] > 0 ? table[t] : 1;
}

class DecodeVisitor {
  public:
    // What it decodes it allocates: every decoded value is owned (fields.hpp).
    static constexpr bool kAllocates = true;
    explicit DecodeVisitor(Decoder &dec) : dec_(dec) {}
    bool ok() const { return dec_.ok(); }
    void fail(pmix_status_t s) { dec_.fail(s); }

    // Nesting (values in arrays in values ...) is bounded so a forged input
    // cannot exhaust the stack: each level costs only a few input bytes.
    static constexpr int kMaxDepth = 64;
    class Nesting {
      public:
        explicit Nesting(DecodeVisitor &v) : v_(v) {
            if (++v_.depth_ > kMaxDepth) v_.fail(PMIX_ERR_UNPACK_FAILURE);
        }
        ~Nesting() { --v_.depth_; }
        Nesting(const Nesting &) = delete;
        Nesting &operator=(const Nesting &) = delete;

      private:
        DecodeVisitor &v_;
    };

    template <class T>
    void num(T &x) {
        uint64_t bits = 0;
        for (std::size_t i = 0; i < sizeof(T); ++i) {
            uint8_t b = 0;
            if (!dec_.get_u8(b)) return;
            bits |= static_cast<uint64_t>(b) << (8 * i);
        }
        x = from_bits<T>(bits);
    }
    void str(char *&s) {
        uint64_t len = 0;
        if (!dec_.get_u64(len) || len == 0) return;
        if (len - 1 > dec_.remaining()) return fail(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        s = static_cast<char *>(std::malloc(len));
        if (!s) return fail(PMIX_ERR_NOMEM);
        dec_.get_raw(s, len - 1);
        s[len - 1] = '\0';
    }
    void fixed(char *buf, std::size_t cap) {
        uint64_t len = 0;
        buf[0] = '\0';
        if (!dec_.get_u64(len) || len == 0) return;
        if (len - 1 > dec_.remaining()) return fail(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        if (len > cap) return fail(PMIX_ERR_UNPACK_FAILURE);
        dec_.get_raw(buf, len - 1);
        buf[len - 1] = '\0';
    }
    void bytes(char *&p, std::size_t &n) {
        std::size_t size = 0;
        if (!dec_.get_count(size) || size == 0) return;
        p = static_cast<char *>(std::malloc(size));
        if (!p) return fail(PMIX_ERR_NOMEM);
        n = size;
        dec_.get_raw(p, size);
    }
    void argv(char **&a) {
        // The count includes the NULL that ends the array: count-1 strings
        // follow, each taking >= 8 bytes. (An empty argv, count 1, may end
        // the buffer: a regattr's description is its last field.)
        uint64_t n = 0;
        if (!dec_.get_u64(n) || n == 0) return;
        if (n - 1 > dec_.remaining() / 8) return fail(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        const auto count = static_cast<std::size_t>(n);
        a = static_cast<char **>(std::calloc(count, sizeof(char *)));  // count-1 strings + NULL
        if (!a) return fail(PMIX_ERR_NOMEM);
        for (std::size_t i = 0; i + 1 < count && ok(); ++i) {
            str(a[i]);
            // A NULL inside an argv would end it early: the strings after it
            // were unreachable (leaked by destruct, lost to every reader).
            if (ok() && a[i] == nullptr) return fail(PMIX_ERR_UNPACK_FAILURE);
        }
    }
    template <class T>
    void array(T *&p, std::size_t &n) {
        Nesting nest(*this);
        std::size_t count = 0;
        if (!ok() || !dec_.get_count(count, min_encoded_size<T>()) || count == 0) return;
        p = static_cast<T *>(std::calloc(count, sizeof(T)));
        if (!p) return fail(PMIX_ERR_NOMEM);
        n = count;
        for (std::size_t i = 0; i < count && ok(); ++i) visit(*this, p[i]);
    }
    void typed_array(pmix_data_type_t t, void *&arr, std::size_t &n) {
        Nesting nest(*this);
        std::size_t count = 0;
        if (!ok() || !dec_.get_count(count, min_encoded_size(t)) || count == 0) return;
        std::size_t es = element_size(t);
        if (es == 0) return fail(PMIX_ERR_UNKNOWN_DATA_TYPE);
        arr = std::calloc(count, es);
        if (!arr) return fail(PMIX_ERR_NOMEM);
        n = count;
        for (std::size_t i = 0; i < count && ok(); ++i)
            visit_typed(*this, t, static_cast<char *>(arr) + i * es);
    }
    void boxed(pmix_data_type_t t, void *&ptr) {
        Nesting nest(*this);
        uint8_t present = 0;
        if (!ok() || !dec_.get_u8(present) || present == 0) return;
        ptr = std::calloc(1, element_size(t));
        if (!ptr) return fail(PMIX_ERR_NOMEM);
        visit_typed(*this, t, ptr);
    }
    void type_tag(pmix_data_type_t &t) {
        uint16_t x = 0;
        if (!dec_.get_u16(x)) return;
        if (x != PMIX_UNDEF && element_size(x) == 0) return fail(PMIX_ERR_UNKNOWN_DATA_TYPE);
        t = x;
    }
    void pointer(void *&p) {
        uint64_t x = 0;
        if (dec_.get_u64(x)) p = reinterpret_cast<void *>(static_cast<uintptr_t>(x));
    }
    void topology(pmix_topology_t &t) {
        str(t.source);
        std::size_t size = 0;
        if (!dec_.get_count(size) || size == 0) return;
        // hwloc wants a NUL-terminated buffer; add one in case the sender did not.
        char *xml = static_cast<char *>(std::malloc(size + 1));
        if (!xml) return fail(PMIX_ERR_NOMEM);
        if (dec_.get_raw(xml, size) && is_hwloc(t.source)) {
            xml[size] = '\0';
            hwloc_topology_t topo = nullptr;
            if (hwloc_topology_init(&topo) != 0) {
                fail(PMIX_ERR_NOMEM);
            } else if (hwloc_topology_set_xmlbuffer(topo, xml,
                                                    static_cast<int>(std::strlen(xml) + 1)) != 0 ||
                       hwloc_topology_load(topo) != 0) {
                hwloc_topology_destroy(topo);
                fail(PMIX_ERR_UNPACK_FAILURE);
            } else {
                t.topology = topo;
            }
        }
        std::free(xml);
    }
    void cpuset(pmix_cpuset_t &c) {
        str(c.source);
        char *list = nullptr;
        str(list);
        if (ok() && list && is_hwloc(c.source)) {
            hwloc_bitmap_t bitmap = hwloc_bitmap_alloc();
            if (!bitmap) {
                fail(PMIX_ERR_NOMEM);
            } else if (hwloc_bitmap_list_sscanf(bitmap, list) != 0) {
                hwloc_bitmap_free(bitmap);
                fail(PMIX_ERR_UNPACK_FAILURE);
            } else {
                c.bitmap = bitmap;
            }
        }
        std::free(list);
    }
    void buffer(pmix_data_buffer_t &b) {
        std::size_t size = 0;
        bytes(b.base_ptr, size);
        b.pack_ptr = b.base_ptr ? b.base_ptr + size : nullptr;
        b.unpack_ptr = b.base_ptr;
        b.bytes_allocated = b.base_ptr ? size : 0;
        b.bytes_used = b.bytes_allocated;
    }

  private:
    Decoder &dec_;
    int depth_ = 0;
};

}  // namespace

// ---------------------------------------------------------------------------
// Entry points

pmix_status_t encode(Encoder &enc, pmix_data_type_t t, const void *elems, std::size_t n) {
    std::size_t es = element_size(t);
    if (es == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    EncodeVisitor v(enc);
    // The visitors take mutable references so one description serves all of
    // them; the Encoder never writes through them.
    auto *p = static_cast<char *>(const_cast<void *>(elems));
    for (std::size_t i = 0; i < n && v.ok(); ++i) visit_typed(v, t, p + i * es);
    return v.status();
}

pmix_status_t decode(Decoder &dec, pmix_data_type_t t, void *elems, std::size_t n) {
    std::size_t es = element_size(t);
    if (es == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    std::memset(elems, 0, n * es);
    DecodeVisitor v(dec);
    auto *p = static_cast<char *>(elems);
    for (std::size_t i = 0; i < n && v.ok(); ++i) visit_typed(v, t, p + i * es);
    if (!dec.ok()) destruct(t, elems, n);
    return dec.status();
}

pmix_status_t pack(Encoder &enc, pmix_data_type_t t, const void *elems, std::size_t n) {
    if (element_size(t) == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    if (n > 0 && elems == nullptr) return PMIX_ERR_BAD_PARAM;
    std::size_t mark = enc.bytes().size();
    enc.put_u16(t);
    enc.put_u64(n);
    pmix_status_t rc = encode(enc, t, elems, n);
    if (rc != PMIX_SUCCESS) enc.bytes().resize(mark);  // all or nothing
    return rc;
}

pmix_status_t unpack(Decoder &dec, pmix_data_type_t t, void *elems, std::size_t *n) {
    if (element_size(t) == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    if (n == nullptr || (*n > 0 && elems == nullptr)) return PMIX_ERR_BAD_PARAM;
    Decoder probe = dec;  // consume nothing unless the whole unpack succeeds
    uint16_t tag = 0;
    std::size_t count = 0;
    if (!probe.get_u16(tag)) return probe.status();
    if (tag != t) return PMIX_ERR_PACK_MISMATCH;
    if (!probe.get_count(count, min_encoded_size(t))) return probe.status();
    if (count > *n) return PMIX_ERR_UNPACK_INADEQUATE_SPACE;
    pmix_status_t rc = decode(probe, t, elems, count);
    if (rc != PMIX_SUCCESS) return rc;
    dec = probe;
    *n = count;
    return PMIX_SUCCESS;
}

namespace {

// Types whose pmix_value_t holds no pointer it owns: a bitwise copy is a deep one.
bool flat_value_type(pmix_data_type_t t) noexcept {
    switch (t) {
        case PMIX_UNDEF:
        case PMIX_BOOL:
        case PMIX_BYTE:
        case PMIX_SIZE:
        case PMIX_PID:
        case PMIX_INT:
        case PMIX_INT8:
        case PMIX_INT16:
        case PMIX_INT32:
        case PMIX_INT64:
        case PMIX_UINT:
        case PMIX_UINT8:
        case PMIX_UINT16:
        case PMIX_UINT32:
        case PMIX_UINT64:
        case PMIX_FLOAT:
        case PMIX_DOUBLE:
        case PMIX_TIMEVAL:
        case PMIX_TIME:
        case PMIX_STATUS:
        case PMIX_PROC_RANK:
        case PMIX_PERSIST:
        case PMIX_SCOPE:
        case PMIX_DATA_RANGE:
        case PMIX_PROC_STATE:
        case PMIX_INFO_DIRECTIVES:
        case PMIX_DATA_TYPE:
        case PMIX_ALLOC_DIRECTIVE:
        case PMIX_POINTER:
            return true;
        default:
            return false;
    }
}

// The values PMIx_Get returns most (scalars, strings, byte objects) copied
// directly; false: leave it to the general path. `dst` is zeroed.
bool copy_value_directly(pmix_value_t &dst, const pmix_value_t &src) {
    if (flat_value_type(src.type)) {
        dst = src;
        return true;
    }
    if (src.type == PMIX_STRING) {
        dst.type = PMIX_STRING;
        if (src.data.string == nullptr) return true;
        dst.data.string = ::strdup(src.data.string);
        return dst.data.string != nullptr;
    }
    if (src.type == PMIX_BYTE_OBJECT) {
        dst.type = PMIX_BYTE_OBJECT;
        const pmix_byte_object_t &bo = src.data.bo;
        if (bo.bytes == nullptr || bo.size == 0) return true;
        dst.data.bo.bytes = static_cast<char *>(std::malloc(bo.size));
        if (dst.data.bo.bytes == nullptr) return false;
        std::memcpy(dst.data.bo.bytes, bo.bytes, bo.size);
        dst.data.bo.size = bo.size;
        return true;
    }
    return false;
}

}  // namespace

pmix_status_t copy(pmix_data_type_t t, void *dst, const void *src, std::size_t n) {
    if (t == PMIX_VALUE && n == 1) {
        auto &out = *static_cast<pmix_value_t *>(dst);
        const auto &in = *static_cast<const pmix_value_t *>(src);
        out = pmix_value_t{};
        const bool direct =
            flat_value_type(in.type) || in.type == PMIX_STRING || in.type == PMIX_BYTE_OBJECT;
        if (direct) return copy_value_directly(out, in) ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    // One mechanism for the rest: a deep copy is an encode followed by a decode.
    Encoder enc;
    pmix_status_t rc = encode(enc, t, src, n);
    if (rc != PMIX_SUCCESS) return rc;
    Decoder dec(enc.bytes());
    return decode(dec, t, dst, n);
}

}  // namespace pmixpp::wire
