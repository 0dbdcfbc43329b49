// PMIx_Info_list_*: building info arrays through the opaque list.
#include <gtest/gtest.h>
#include <pmix.h>

#include <cstring>

TEST(InfoList, ConvertCopiesEveryEntryInOrderAndMarksTheEnd) {
    void *list = PMIx_Info_list_start();
    ASSERT_NE(list, nullptr);
    uint32_t size = 4;
    ASSERT_EQ(PMIx_Info_list_add(list, PMIX_JOB_SIZE, &size, PMIX_UINT32), PMIX_SUCCESS);
    ASSERT_EQ(PMIx_Info_list_add(list, PMIX_NSPACE, "job.7", PMIX_STRING), PMIX_SUCCESS);

    pmix_info_t caller;  // inserted without a copy: stays the caller's
    PMIX_INFO_CONSTRUCT(&caller);
    PMIx_Info_load(&caller, PMIX_COLLECT_DATA, nullptr, PMIX_BOOL);
    ASSERT_EQ(PMIx_Info_list_insert(list, &caller), PMIX_SUCCESS);

    pmix_info_t src;
    PMIX_INFO_CONSTRUCT(&src);
    PMIx_Info_load(&src, PMIX_HOSTNAME, "node1", PMIX_STRING);
    ASSERT_EQ(PMIx_Info_list_xfer(list, &src), PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&src);  // the list holds its own copy

    pmix_data_array_t array;
    ASSERT_EQ(PMIx_Info_list_convert(list, &array), PMIX_SUCCESS);
    PMIx_Info_list_release(list);

    ASSERT_EQ(array.type, PMIX_INFO);
    ASSERT_EQ(array.size, 4u);
    auto *info = static_cast<pmix_info_t *>(array.array);
    EXPECT_STREQ(info[0].key, PMIX_JOB_SIZE);
    EXPECT_EQ(info[0].value.data.uint32, 4u);
    EXPECT_STREQ(info[1].value.data.string, "job.7");
    EXPECT_STREQ(info[2].key, PMIX_COLLECT_DATA);
    EXPECT_TRUE(info[2].value.data.flag);
    EXPECT_STREQ(info[3].value.data.string, "node1");
    EXPECT_FALSE(PMIX_INFO_IS_END(&info[2]));
    EXPECT_TRUE(PMIX_INFO_IS_END(&info[3]));
    PMIx_Data_array_destruct(&array);

    // Release left the inserted info alone.
    EXPECT_STREQ(caller.key, PMIX_COLLECT_DATA);
    PMIX_INFO_DESTRUCT(&caller);
}

TEST(InfoList, ConvertingAnEmptyListReportsEmpty) {
    void *list = PMIx_Info_list_start();
    pmix_data_array_t array;
    EXPECT_EQ(PMIx_Info_list_convert(list, &array), PMIX_ERR_EMPTY);
    EXPECT_EQ(array.array, nullptr);
    PMIx_Info_list_release(list);
}

TEST(InfoList, ReleasingAListWithNestedArraysFreesThem) {
    void *list = PMIx_Info_list_start();
    uint64_t nums[] = {1, 2, 3, 4};
    pmix_data_array_t da{PMIX_UINT64, 4, nums};
    ASSERT_EQ(PMIx_Info_list_add(list, "nested", &da, PMIX_DATA_ARRAY), PMIX_SUCCESS);
    EXPECT_EQ(PMIx_Info_list_add(list, "bad", &da, 444), PMIX_ERR_UNKNOWN_DATA_TYPE);
    PMIx_Info_list_release(list);  // ASan: nothing leaks
}
