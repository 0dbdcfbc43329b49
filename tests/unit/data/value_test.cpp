// PMIx_Value_* / PMIx_Info_* / *_destruct: load, copy and release every data
// type (the ASan configuration proves nothing leaks or is freed twice).
#include <gtest/gtest.h>
#include <pmix.h>

#include <cstdlib>
#include <cstring>

#include "samples.hpp"

namespace {

bool all_zero(const void *p, std::size_t n) {
    const auto *b = static_cast<const unsigned char *>(p);
    for (std::size_t i = 0; i < n; ++i) {
        if (b[i] != 0) return false;
    }
    return true;
}

}  // namespace

TEST(Value, EveryDataTypeLoadsXfersAndDestructs) {
    for (pmix_data_type_t t : samples::all_types()) {
        SCOPED_TRACE(PMIx_Data_type_string(t));
        pmix_value_t v, copy;
        samples::make(&v, t);
        EXPECT_EQ(v.type, t);
        PMIX_VALUE_CONSTRUCT(&copy);
        ASSERT_EQ(PMIx_Value_xfer(&copy, &v), PMIX_SUCCESS);
        EXPECT_EQ(PMIx_Value_compare(&v, &copy), PMIX_EQUAL);
        if (samples::boxed(t)) {
            EXPECT_NE(copy.data.ptr, v.data.ptr) << "xfer must copy, not share";
        }
        PMIx_Value_destruct(&v);
        EXPECT_EQ(v.type, PMIX_UNDEF);
        EXPECT_TRUE(all_zero(&v.data, sizeof v.data));
        PMIx_Value_destruct(&copy);
    }
}

TEST(Value, EveryDataTypeLoadsIntoAnInfoAndXfers) {
    for (pmix_data_type_t t : samples::all_types()) {
        SCOPED_TRACE(PMIx_Data_type_string(t));
        pmix_value_t v;
        samples::make(&v, t);
        pmix_info_t *info;
        PMIX_INFO_CREATE(info, 2);
        const void *payload = t == PMIX_STRING    ? v.data.string
                              : t == PMIX_POINTER ? v.data.ptr
                                                  : samples::element(&v);
        ASSERT_EQ(PMIx_Info_load(&info[0], "test.key", payload, t), PMIX_SUCCESS);
        EXPECT_STREQ(info[0].key, "test.key");
        EXPECT_EQ(PMIx_Value_compare(&info[0].value, &v), PMIX_EQUAL);
        ASSERT_EQ(PMIx_Info_xfer(&info[1], &info[0]), PMIX_SUCCESS);
        EXPECT_STREQ(info[1].key, "test.key");
        EXPECT_EQ(PMIx_Value_compare(&info[1].value, &v), PMIX_EQUAL);
        PMIX_INFO_FREE(info, 2);
        PMIx_Value_destruct(&v);
    }
}

TEST(Value, EveryDataTypeUnloadsToACallerOwnedCopy) {
    for (pmix_data_type_t t : samples::all_types()) {
        SCOPED_TRACE(PMIx_Data_type_string(t));
        pmix_value_t v, back;
        samples::make(&v, t);
        void *data = nullptr;
        size_t size = 0;
        ASSERT_EQ(PMIx_Value_unload(&v, &data, &size), PMIX_SUCCESS);
        ASSERT_NE(data, nullptr);
        EXPECT_GT(size, 0u);
        switch (t) {
            case PMIX_STRING:
                EXPECT_STREQ(static_cast<char *>(data), v.data.string);
                std::free(data);
                break;
            case PMIX_POINTER:
                EXPECT_EQ(data, v.data.ptr);
                break;
            case PMIX_BYTE_OBJECT:
            case PMIX_COMPRESSED_STRING:
            case PMIX_REGEX:
            case PMIX_COMPRESSED_BYTE_OBJECT:
                ASSERT_EQ(size, v.data.bo.size);
                EXPECT_EQ(std::memcmp(data, v.data.bo.bytes, size), 0);
                std::free(data);
                break;
            default:
                samples::adopt(&back, t, data);
                EXPECT_EQ(PMIx_Value_compare(&v, &back), PMIX_EQUAL);
                PMIx_Value_destruct(&back);
        }
        PMIx_Value_destruct(&v);
    }
}

TEST(Value, UnloadOfAFixedSizeTypeFillsCallerStorageWhenGiven) {
    // OpenPMIx 4.2.2 writes numbers and procs into the storage *data points to.
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    uint32_t in = 42, out = 0;
    PMIx_Value_load(&v, &in, PMIX_UINT32);
    void *data = &out;
    size_t size = 0;
    ASSERT_EQ(PMIx_Value_unload(&v, &data, &size), PMIX_SUCCESS);
    EXPECT_EQ(data, static_cast<void *>(&out));
    EXPECT_EQ(out, 42u);
    EXPECT_EQ(size, sizeof out);
    PMIx_Value_destruct(&v);
}

TEST(Value, InfoLoadOfABareBoolMeansTrueAndClearsFlagsAsOpenPmixDoes) {
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 2);
    PMIX_INFO_LOAD(&info[1], PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    EXPECT_EQ(info[1].value.type, PMIX_BOOL);
    EXPECT_TRUE(info[1].value.data.flag);
    EXPECT_EQ(info[1].flags, 0u);  // runtime_probe.out.txt: "flags after load=0"
    PMIX_INFO_FREE(info, 2);
}

TEST(Value, LoadCopiesStringsAndDestructClearsTheValue) {
    char text[] = "hello";
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    ASSERT_EQ(PMIx_Value_load(&v, text, PMIX_STRING), PMIX_SUCCESS);
    EXPECT_NE(v.data.string, text);
    text[0] = 'j';
    EXPECT_STREQ(v.data.string, "hello");
    PMIx_Value_destruct(&v);
    EXPECT_EQ(v.type, PMIX_UNDEF);
    EXPECT_EQ(v.data.string, nullptr);
}

TEST(Value, PersistentInfoDoesNotOwnItsValue) {
    pmix_value_t shared;
    samples::make(&shared, PMIX_DATA_ARRAY);
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 1);
    PMIX_LOAD_KEY(info[0].key, "shared");
    std::memcpy(&info[0].value, &shared, sizeof shared);
    PMIX_INFO_SET_PERSISTENT(&info[0]);
    pmix_data_array_t da{PMIX_INFO, 1, info};
    PMIx_Data_array_destruct(&da);  // must not free the shared value
    EXPECT_EQ(da.array, nullptr);
    EXPECT_EQ(shared.data.darray->size, 3u);
    PMIx_Value_destruct(&shared);
}

TEST(Value, CompareOrdersNumbersAndStringsAndSeparatesTypes) {
    pmix_value_t a, b;
    PMIX_VALUE_CONSTRUCT(&a);
    PMIX_VALUE_CONSTRUCT(&b);
    int32_t one = 1, two = 2;
    PMIx_Value_load(&a, &one, PMIX_INT32);
    PMIx_Value_load(&b, &two, PMIX_INT32);
    EXPECT_EQ(PMIx_Value_compare(&a, &b), PMIX_VALUE2_GREATER);
    EXPECT_EQ(PMIx_Value_compare(&b, &a), PMIX_VALUE1_GREATER);
    PMIx_Value_load(&b, &one, PMIX_UINT32);
    EXPECT_EQ(PMIx_Value_compare(&a, &b), PMIX_VALUE_TYPE_DIFFERENT);
    PMIx_Value_load(&a, "abc", PMIX_STRING);
    PMIx_Value_load(&b, "abd", PMIX_STRING);
    EXPECT_EQ(PMIx_Value_compare(&a, &b), PMIX_VALUE2_GREATER);
    PMIx_Value_destruct(&a);
    PMIx_Value_destruct(&b);
    samples::make(&a, PMIX_PROC_INFO);
    samples::make(&b, PMIX_PROC_INFO);
    EXPECT_EQ(PMIx_Value_compare(&a, &b), PMIX_EQUAL);
    b.data.pinfo->exit_code = 99;
    EXPECT_NE(PMIx_Value_compare(&a, &b), PMIX_EQUAL);
    PMIx_Value_destruct(&a);
    PMIx_Value_destruct(&b);
}

TEST(Value, TopologyAndCpusetDestructReleaseHwlocObjects) {
    pmix_value_t topo, cpus;
    samples::make(&topo, PMIX_TOPO);
    samples::make(&cpus, PMIX_PROC_CPUSET);
    ASSERT_NE(topo.data.topo->topology, nullptr);
    ASSERT_NE(cpus.data.cpuset->bitmap, nullptr);
    PMIx_Topology_destruct(topo.data.topo);
    EXPECT_EQ(topo.data.topo->topology, nullptr);
    EXPECT_EQ(topo.data.topo->source, nullptr);
    PMIx_Cpuset_destruct(cpus.data.cpuset);
    EXPECT_EQ(cpus.data.cpuset->bitmap, nullptr);
    PMIx_Value_destruct(&topo);
    PMIx_Value_destruct(&cpus);
}

TEST(Value, DataArrayDestructOfEveryElementTypeReleasesEverything) {
    for (pmix_data_type_t t : samples::all_types()) {
        SCOPED_TRACE(PMIx_Data_type_string(t));
        pmix_value_t v, holder;
        samples::make(&v, t);
        // A library-made deep copy of a one-element array of type t.
        pmix_data_array_t src{t, 1, samples::element(&v)};
        PMIX_VALUE_CONSTRUCT(&holder);
        ASSERT_EQ(PMIx_Value_load(&holder, &src, PMIX_DATA_ARRAY), PMIX_SUCCESS);
        pmix_data_array_t *copy = holder.data.darray;
        ASSERT_EQ(copy->size, 1u);
        ASSERT_NE(copy->array, src.array);
        PMIx_Data_array_destruct(copy);
        EXPECT_EQ(copy->array, nullptr);
        EXPECT_EQ(copy->size, 0u);
        PMIx_Value_destruct(&holder);  // frees the now-empty array struct
        PMIx_Value_destruct(&v);
    }
}

// PMIX_DATA_ARRAY_CREATE sizes each element by type; compressed strings and
// regexes are byte objects (as in the value union and in 4.2), so an array of
// them filled with byte objects must be freed without reading past its end.
TEST(Value, DataArrayMacrosSizeCompressedStringsAndRegexesAsByteObjects) {
    for (pmix_data_type_t t : {PMIX_COMPRESSED_STRING, PMIX_REGEX}) {
        SCOPED_TRACE(PMIx_Data_type_string(t));
        pmix_data_array_t *darray = nullptr;
        PMIX_DATA_ARRAY_CREATE(darray, 3, t);
        ASSERT_NE(darray, nullptr);
        ASSERT_NE(darray->array, nullptr);
        auto *bos = static_cast<pmix_byte_object_t *>(darray->array);
        for (std::size_t i = 0; i < darray->size; ++i) {
            EXPECT_EQ(bos[i].bytes, nullptr);
            EXPECT_EQ(bos[i].size, 0u);
            bos[i].bytes = static_cast<char *>(std::malloc(8));
            std::memset(bos[i].bytes, 'x', 8);
            bos[i].size = 8;
        }
        PMIX_DATA_ARRAY_FREE(darray);  // ASan: no overflow, no leak
    }
}
