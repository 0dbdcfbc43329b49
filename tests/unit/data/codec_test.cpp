// PMIx_Data_pack/unpack over the codec: every data type round-trips, and
// malformed input is refused with the right status and without allocating.
#include <gtest/gtest.h>
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "samples.hpp"

namespace {

struct Buffer {
    pmix_data_buffer_t b;
    Buffer() { PMIX_DATA_BUFFER_CONSTRUCT(&b); }
    ~Buffer() { PMIX_DATA_BUFFER_DESTRUCT(&b); }
    // Replaces the contents with raw bytes (malloc'd, as the buffer owns them).
    void set_raw(const std::vector<uint8_t> &bytes) {
        pmix_byte_object_t bo;
        bo.bytes = static_cast<char *>(std::malloc(bytes.size() + 1));
        if (!bytes.empty()) std::memcpy(bo.bytes, bytes.data(), bytes.size());
        bo.size = bytes.size();
        ASSERT_EQ(PMIx_Data_load(&b, &bo), PMIX_SUCCESS);
    }
};

std::string value_text(const pmix_value_t *v) {
    char *s = PMIx_Value_string(v);
    std::string text = s ? s : "(null)";
    std::free(s);
    return text;
}

void put_le(std::vector<uint8_t> &out, uint64_t x, int width) {
    for (int i = 0; i < width; ++i) out.push_back(static_cast<uint8_t>(x >> (8 * i)));
}

}  // namespace

TEST(Codec, EveryDataTypeRoundTripsInsideAValue) {
    for (pmix_data_type_t t : samples::all_types()) {
        SCOPED_TRACE(PMIx_Data_type_string(t));
        pmix_value_t in, out;
        samples::make(&in, t);
        Buffer buf;
        ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, &in, 1, PMIX_VALUE), PMIX_SUCCESS);
        int32_t n = 1;
        ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &out, &n, PMIX_VALUE), PMIX_SUCCESS);
        EXPECT_EQ(n, 1);
        EXPECT_EQ(out.type, t);
        EXPECT_EQ(PMIx_Value_compare(&in, &out), PMIX_EQUAL);
        EXPECT_EQ(value_text(&in), value_text(&out));
        PMIx_Value_destruct(&in);
        PMIx_Value_destruct(&out);
    }
}

TEST(Codec, EveryDataTypeRoundTripsAsABareElement) {
    for (pmix_data_type_t t : samples::all_types()) {
        SCOPED_TRACE(PMIx_Data_type_string(t));
        pmix_value_t in, out;
        samples::make(&in, t);
        Buffer buf;
        ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, samples::element(&in), 1, t), PMIX_SUCCESS);
        void *storage = std::calloc(1, 4096);  // larger than any element
        int32_t n = 1;
        ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, storage, &n, t), PMIX_SUCCESS);
        samples::adopt(&out, t, storage);
        EXPECT_EQ(PMIx_Value_compare(&in, &out), PMIX_EQUAL);
        EXPECT_EQ(value_text(&in), value_text(&out));
        PMIx_Value_destruct(&in);
        PMIx_Value_destruct(&out);
    }
}

TEST(Codec, SeveralPacksUnpackInOrder) {
    Buffer buf;
    uint32_t nums[] = {1, 2, 3};
    char *strs[] = {const_cast<char *>("a"), nullptr, const_cast<char *>("ccc")};
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, nums, 3, PMIX_UINT32), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, strs, 3, PMIX_STRING), PMIX_SUCCESS);
    uint32_t outnums[3] = {};
    char *outstrs[3] = {};
    int32_t n = 3;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, outnums, &n, PMIX_UINT32), PMIX_SUCCESS);
    EXPECT_EQ(outnums[2], 3u);
    n = 3;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, outstrs, &n, PMIX_STRING), PMIX_SUCCESS);
    EXPECT_STREQ(outstrs[0], "a");
    EXPECT_EQ(outstrs[1], nullptr);
    EXPECT_STREQ(outstrs[2], "ccc");
    for (char *s : outstrs) std::free(s);
}

TEST(Codec, NestedInfoArraysKeepEveryLevel) {
    pmix_value_t in, out;
    samples::make(&in, PMIX_DATA_ARRAY);
    Buffer buf;
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, &in, 1, PMIX_VALUE), PMIX_SUCCESS);
    int32_t n = 1;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &out, &n, PMIX_VALUE), PMIX_SUCCESS);
    ASSERT_EQ(out.type, PMIX_DATA_ARRAY);
    ASSERT_EQ(out.data.darray->type, PMIX_INFO);
    ASSERT_EQ(out.data.darray->size, 3u);
    auto *infos = static_cast<pmix_info_t *>(out.data.darray->array);
    EXPECT_STREQ(infos[0].key, "k1");
    EXPECT_STREQ(infos[0].value.data.string, "v1");
    ASSERT_EQ(infos[1].value.type, PMIX_DATA_ARRAY);
    ASSERT_EQ(infos[1].value.data.darray->type, PMIX_UINT32);
    ASSERT_EQ(infos[1].value.data.darray->size, 3u);
    EXPECT_EQ(static_cast<uint32_t *>(infos[1].value.data.darray->array)[2], 3u);
    ASSERT_EQ(infos[2].value.type, PMIX_DATA_ARRAY);
    auto *inner = static_cast<pmix_info_t *>(infos[2].value.data.darray->array);
    EXPECT_STREQ(inner[0].key, "inner");
    EXPECT_STREQ(inner[0].value.data.string, "deep");
    EXPECT_EQ(infos[2].flags, PMIX_INFO_ARRAY_END);
    PMIx_Value_destruct(&in);
    PMIx_Value_destruct(&out);
}

TEST(Codec, NodeStatsKeepTheirDiskAndNetArrays) {
    pmix_value_t in;
    samples::make(&in, PMIX_NODE_STATS);
    Buffer buf;
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, in.data.ndstats, 1, PMIX_NODE_STATS), PMIX_SUCCESS);
    pmix_node_stats_t out;
    int32_t n = 1;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &out, &n, PMIX_NODE_STATS), PMIX_SUCCESS);
    EXPECT_STREQ(out.node, "node9");
    EXPECT_FLOAT_EQ(out.la5, 0.25f);
    EXPECT_EQ(out.sample_time.tv_usec, 10);
    ASSERT_EQ(out.ndiskstats, 2u);
    EXPECT_STREQ(out.diskstats[1].disk, "sdb");
    EXPECT_EQ(out.diskstats[1].weighted_milliseconds_io, 21u);
    ASSERT_EQ(out.nnetstats, 1u);
    EXPECT_STREQ(out.netstats[0].net_interface, "lo");
    EXPECT_EQ(out.netstats[0].num_send_errs, 4u);
    pmix_value_t holder;
    samples::adopt(&holder, PMIX_NODE_STATS, std::malloc(sizeof out));
    std::memcpy(holder.data.ptr, &out, sizeof out);
    PMIx_Value_destruct(&holder);
    PMIx_Value_destruct(&in);
}

TEST(Codec, ProcStatsKeepEveryField) {
    pmix_value_t in;
    samples::make(&in, PMIX_PROC_STATS);
    Buffer buf;
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, in.data.pstats, 1, PMIX_PROC_STATS), PMIX_SUCCESS);
    pmix_proc_stats_t out;
    int32_t n = 1;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &out, &n, PMIX_PROC_STATS), PMIX_SUCCESS);
    EXPECT_STREQ(out.node, "node3");
    EXPECT_STREQ(out.proc.nspace, "job.4");
    EXPECT_EQ(out.proc.rank, 2u);
    EXPECT_EQ(out.pid, 77);
    EXPECT_STREQ(out.cmd, "a.out");
    EXPECT_EQ(out.state, 'R');
    EXPECT_EQ(out.priority, -2);
    EXPECT_EQ(out.num_threads, 8);
    EXPECT_FLOAT_EQ(out.peak_vsize, 200.0f);
    EXPECT_EQ(out.processor, 3);
    EXPECT_EQ(out.sample_time.tv_sec, 7);
    std::free(out.node);
    std::free(out.cmd);
    PMIx_Value_destruct(&in);
}

TEST(Codec, UnpackingWithTheWrongTypeIsAPackMismatchAndConsumesNothing) {
    Buffer buf;
    uint32_t x = 5;
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, &x, 1, PMIX_UINT32), PMIX_SUCCESS);
    char *s = nullptr;
    int32_t n = 1;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &s, &n, PMIX_STRING), PMIX_ERR_PACK_MISMATCH);
    EXPECT_EQ(s, nullptr);
    int32_t y = 0;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &y, &n, PMIX_INT32), PMIX_ERR_PACK_MISMATCH);
    uint32_t z = 0;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &z, &n, PMIX_UINT32), PMIX_SUCCESS);
    EXPECT_EQ(z, 5u);
}

TEST(Codec, ReadingPastTheEndIsReported) {
    Buffer buf;
    uint64_t x = 0;
    int32_t n = 1;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &x, &n, PMIX_UINT64),
              PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    x = 9;
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, &x, 1, PMIX_UINT64), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &x, &n, PMIX_UINT64), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &x, &n, PMIX_UINT64),
              PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
}

// An empty argv (a non-NULL array holding only its NULL) is the last field of
// a pmix_regattr_t, so it can end the buffer: it must unpack (the fuzzer's
// round trip of PMIX_REGATTR found it refused as reading past the end).
TEST(Codec, AnEmptyArgvAtTheEndOfTheBufferUnpacks) {
    Buffer buf;
    char *none[] = {nullptr};
    pmix_regattr_t r;
    std::memset(&r, 0, sizeof r);
    r.name = const_cast<char *>("PMIX_JOB_SIZE");
    std::strcpy(r.string, PMIX_JOB_SIZE);
    r.type = PMIX_UINT32;
    r.description = none;
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, &r, 1, PMIX_REGATTR), PMIX_SUCCESS);
    pmix_regattr_t out;
    std::memset(&out, 0, sizeof out);
    int32_t n = 1;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &out, &n, PMIX_REGATTR), PMIX_SUCCESS);
    EXPECT_EQ(n, 1);
    EXPECT_STREQ(out.name, "PMIX_JOB_SIZE");
    EXPECT_STREQ(out.string, PMIX_JOB_SIZE);
    ASSERT_NE(out.description, nullptr);  // empty, not absent
    EXPECT_EQ(out.description[0], nullptr);
    std::free(out.name);
    std::free(out.description);
}

TEST(Codec, TruncatedValueOfEveryTypeIsRefusedWithoutLeaking) {
    for (pmix_data_type_t t : samples::all_types()) {
        SCOPED_TRACE(PMIx_Data_type_string(t));
        pmix_value_t in;
        samples::make(&in, t);
        Buffer full;
        ASSERT_EQ(PMIx_Data_pack(nullptr, &full.b, &in, 1, PMIX_VALUE), PMIX_SUCCESS);
        std::vector<uint8_t> bytes(full.b.base_ptr, full.b.base_ptr + full.b.bytes_used);
        // Every strict prefix must fail cleanly (ASan checks nothing leaks).
        for (std::size_t cut = 0; cut < bytes.size(); cut += (bytes.size() > 400 ? 37 : 1)) {
            Buffer part;
            part.set_raw({bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut)});
            pmix_value_t out;
            PMIX_VALUE_CONSTRUCT(&out);
            int32_t n = 1;
            pmix_status_t rc = PMIx_Data_unpack(nullptr, &part.b, &out, &n, PMIX_VALUE);
            ASSERT_NE(rc, PMIX_SUCCESS) << "prefix of " << cut << " bytes";
            EXPECT_EQ(out.type, PMIX_UNDEF);
        }
        PMIx_Value_destruct(&in);
    }
}

TEST(Codec, ForgedHugeLengthsAreRefusedWithoutAllocating) {
    // Under ASan an attempt to allocate 2^60 bytes aborts the test, so passing
    // shows the length was checked against the remaining input first.
    struct Case {
        const char *what;
        pmix_data_type_t type;
        std::vector<uint8_t> body;
    };
    std::vector<Case> cases;
    {
        std::vector<uint8_t> b;
        put_le(b, 1ULL << 60, 8);  // string length
        cases.push_back({"string", PMIX_STRING, b});
    }
    {
        std::vector<uint8_t> b;
        put_le(b, 1ULL << 60, 8);  // byte object size
        cases.push_back({"byte object", PMIX_BYTE_OBJECT, b});
    }
    {
        std::vector<uint8_t> b;
        put_le(b, PMIX_INFO, 2);   // data array element type
        put_le(b, 1ULL << 40, 8);  // element count
        cases.push_back({"data array", PMIX_DATA_ARRAY, b});
    }
    {
        std::vector<uint8_t> b;
        put_le(b, 1ULL << 50, 8);  // argv count
        cases.push_back({"query keys", PMIX_QUERY, b});
    }
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        std::vector<uint8_t> bytes;
        put_le(bytes, c.type, 2);
        put_le(bytes, 1, 8);  // one element
        bytes.insert(bytes.end(), c.body.begin(), c.body.end());
        Buffer buf;
        buf.set_raw(bytes);
        void *storage = std::calloc(1, 4096);
        int32_t n = 1;
        EXPECT_EQ(PMIx_Data_unpack(nullptr, &buf.b, storage, &n, c.type),
                  PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        std::free(storage);
    }
    // A forged element count in the pack header itself.
    std::vector<uint8_t> bytes;
    put_le(bytes, PMIX_INFO, 2);
    put_le(bytes, 1ULL << 62, 8);
    Buffer buf;
    buf.set_raw(bytes);
    pmix_info_t info;
    int32_t n = INT32_MAX;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &info, &n, PMIX_INFO),
              PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
}

TEST(Codec, ForgedDeepNestingIsRefusedInsteadOfExhaustingTheStack) {
    // A value holding a value holding a value ... costs 3 bytes per level.
    std::vector<uint8_t> bytes;
    put_le(bytes, PMIX_VALUE, 2);
    put_le(bytes, 1, 8);
    for (int level = 0; level < 200000; ++level) {
        put_le(bytes, PMIX_VALUE, 2);  // the value's type
        put_le(bytes, 1, 1);           // its boxed payload is present
    }
    Buffer buf;
    buf.set_raw(bytes);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    int32_t n = 1;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &v, &n, PMIX_VALUE), PMIX_ERR_UNPACK_FAILURE);
    EXPECT_EQ(v.type, PMIX_UNDEF);
}

TEST(Codec, ReasonableNestingStillRoundTrips) {
    pmix_value_t v;
    samples::make(&v, PMIX_UINT8);
    for (int level = 0; level < 10; ++level) {
        pmix_value_t outer;
        PMIX_VALUE_CONSTRUCT(&outer);
        ASSERT_EQ(PMIx_Value_load(&outer, &v, PMIX_VALUE), PMIX_SUCCESS);
        PMIx_Value_destruct(&v);
        v = outer;
    }
    Buffer buf;
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, &v, 1, PMIX_VALUE), PMIX_SUCCESS);
    pmix_value_t out;
    int32_t n = 1;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &out, &n, PMIX_VALUE), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Value_compare(&v, &out), PMIX_EQUAL);
    PMIx_Value_destruct(&v);
    PMIx_Value_destruct(&out);
}

TEST(Codec, UnknownNestedTypeIsRefused) {
    std::vector<uint8_t> bytes;
    put_le(bytes, PMIX_VALUE, 2);
    put_le(bytes, 1, 8);
    put_le(bytes, 444, 2);  // not a data type
    put_le(bytes, 0, 8);
    Buffer buf;
    buf.set_raw(bytes);
    pmix_value_t v;
    int32_t n = 1;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &v, &n, PMIX_VALUE), PMIX_ERR_UNKNOWN_DATA_TYPE);
}

TEST(Codec, MoreStoredValuesThanRoomIsInadequateSpace) {
    Buffer buf;
    int16_t xs[] = {1, 2, 3};
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, xs, 3, PMIX_INT16), PMIX_SUCCESS);
    int16_t out[2];
    int32_t n = 2;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &buf.b, out, &n, PMIX_INT16),
              PMIX_ERR_UNPACK_INADEQUATE_SPACE);
    int16_t all[3];
    n = 3;
    EXPECT_EQ(PMIx_Data_unpack(nullptr, &buf.b, all, &n, PMIX_INT16), PMIX_SUCCESS);
    EXPECT_EQ(all[2], 3);
}

TEST(Codec, PackingAnUnknownTypeFails) {
    Buffer buf;
    int x = 0;
    EXPECT_EQ(PMIx_Data_pack(nullptr, &buf.b, &x, 1, 444), PMIX_ERR_UNKNOWN_DATA_TYPE);
    EXPECT_EQ(PMIx_Data_pack(nullptr, &buf.b, &x, 1, PMIX_KVAL), PMIX_ERR_UNKNOWN_DATA_TYPE);
    EXPECT_EQ(buf.b.bytes_used, 0u);
}

TEST(Buffer, UnloadGivesTheUnreadPayloadAndLoadTakesItBack) {
    Buffer buf;
    uint32_t xs[] = {10, 20};
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, &xs[0], 1, PMIX_UINT32), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Data_pack(nullptr, &buf.b, &xs[1], 1, PMIX_UINT32), PMIX_SUCCESS);
    uint32_t y = 0;
    int32_t n = 1;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &buf.b, &y, &n, PMIX_UINT32), PMIX_SUCCESS);
    char *data = nullptr;
    size_t size = 0;
    PMIX_DATA_BUFFER_UNLOAD(&buf.b, data, size);
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(buf.b.base_ptr, nullptr);
    Buffer other;
    PMIX_DATA_BUFFER_LOAD(&other.b, data, size);  // takes ownership of data
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &other.b, &y, &n, PMIX_UINT32), PMIX_SUCCESS);
    EXPECT_EQ(y, 20u);
}

TEST(Buffer, EmbedCopiesAndCopyPayloadAppends) {
    Buffer a, b;
    uint8_t x = 7;
    ASSERT_EQ(PMIx_Data_pack(nullptr, &a.b, &x, 1, PMIX_UINT8), PMIX_SUCCESS);
    pmix_byte_object_t bo{a.b.base_ptr, a.b.bytes_used};
    ASSERT_EQ(PMIx_Data_embed(&b.b, &bo), PMIX_SUCCESS);
    EXPECT_NE(b.b.base_ptr, a.b.base_ptr);
    ASSERT_EQ(PMIx_Data_copy_payload(&b.b, &a.b), PMIX_SUCCESS);
    uint8_t out = 0;
    int32_t n = 1;
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &b.b, &out, &n, PMIX_UINT8), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Data_unpack(nullptr, &b.b, &out, &n, PMIX_UINT8), PMIX_SUCCESS);
    EXPECT_EQ(out, 7);
}

TEST(Buffer, CopyPayloadOntoItselfDoublesIt) {
    Buffer a;
    for (uint8_t x : {uint8_t{1}, uint8_t{2}})
        ASSERT_EQ(PMIx_Data_pack(nullptr, &a.b, &x, 1, PMIX_UINT8), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Data_copy_payload(&a.b, &a.b), PMIX_SUCCESS);
    std::vector<uint8_t> got;
    uint8_t out = 0;
    int32_t n = 1;
    while (PMIx_Data_unpack(nullptr, &a.b, &out, &n, PMIX_UINT8) == PMIX_SUCCESS)
        got.push_back(out);
    EXPECT_EQ(got, (std::vector<uint8_t>{1, 2, 1, 2}));
}

TEST(Buffer, CreateAndReleaseMacrosFreeWhatPackAllocated) {
    pmix_data_buffer_t *buf;
    PMIX_DATA_BUFFER_CREATE(buf);
    for (int i = 0; i < 1000; ++i)
        ASSERT_EQ(PMIx_Data_pack(nullptr, buf, &i, 1, PMIX_INT), PMIX_SUCCESS);
    EXPECT_GE(buf->bytes_allocated, buf->bytes_used);
    EXPECT_EQ(buf->pack_ptr, buf->base_ptr + buf->bytes_used);
    PMIX_DATA_BUFFER_RELEASE(buf);
    EXPECT_EQ(buf, nullptr);
}

TEST(DataCopy, EveryDataTypeCopiesDeeply) {
    for (pmix_data_type_t t : samples::all_types()) {
        SCOPED_TRACE(PMIx_Data_type_string(t));
        pmix_value_t in, out;
        samples::make(&in, t);
        void *copy = nullptr;
        void *src = t == PMIX_STRING    ? in.data.string
                    : t == PMIX_POINTER ? &in.data.ptr
                                        : samples::element(&in);
        ASSERT_EQ(PMIx_Data_copy(&copy, src, t), PMIX_SUCCESS);
        ASSERT_NE(copy, nullptr);
        if (t == PMIX_STRING) {
            EXPECT_STREQ(static_cast<char *>(copy), in.data.string);
            EXPECT_NE(copy, in.data.string);
            std::free(copy);
        } else {
            samples::adopt(&out, t, copy);
            EXPECT_EQ(PMIx_Value_compare(&in, &out), PMIX_EQUAL);
            PMIx_Value_destruct(&out);
        }
        PMIx_Value_destruct(&in);
    }
}

TEST(DataPrint, PrintsTheTypeAndValueWithThePrefix) {
    uint32_t x = 42;
    char *out = nullptr;
    ASSERT_EQ(PMIx_Data_print(&out, const_cast<char *>(">> "), &x, PMIX_UINT32), PMIX_SUCCESS);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(std::string(out).rfind(">> ", 0), 0u);
    EXPECT_NE(std::string(out).find("PMIX_UINT32"), std::string::npos);
    EXPECT_NE(std::string(out).find("42"), std::string::npos);
    std::free(out);
}
