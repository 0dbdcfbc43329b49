// pmixpp/mca/info.hpp: finding an entry of a caller's pmix_info_t array by key
// and reading it as a flag, an integer or a string, by PMIx's rules.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <limits>
#include <vector>

#include "pmix_values.hpp"
#include "pmixpp/mca/info.hpp"
#include "pmixpp/mca/info_array.hpp"

namespace {

namespace mca = pmixpp::mca;
using pmixpp::test::make_info_string;
using pmixpp::test::make_info_u32;
using pmixpp::test::set_key;

pmix_info_t typed(std::string_view key, pmix_data_type_t type) {
    pmix_info_t info{};
    set_key(info, key);
    info.value.type = type;
    return info;
}

pmix_info_t flag(std::string_view key, bool value) {
    pmix_info_t info = typed(key, PMIX_BOOL);
    info.value.data.flag = value;
    return info;
}

pmix_value_t int_value(pmix_data_type_t type, std::int64_t v) {
    pmix_value_t value{};
    value.type = type;
    switch (type) {
        case PMIX_INT:
            value.data.integer = static_cast<int>(v);
            break;
        case PMIX_INT8:
            value.data.int8 = static_cast<std::int8_t>(v);
            break;
        case PMIX_INT64:
            value.data.int64 = v;
            break;
        case PMIX_PID:
            value.data.pid = static_cast<pid_t>(v);
            break;
        default:
            ADD_FAILURE() << "not a signed type in this test";
    }
    return value;
}

TEST(SdkInfo, FindInfoReturnsTheFirstEntryWithTheKey) {
    const std::vector<pmix_info_t> infos = {make_info_u32("a", 1), make_info_u32("b", 2),
                                            make_info_u32("b", 3)};
    const pmix_info_t *b = mca::find_info(infos, "b");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->value.data.uint32, 2u);
    EXPECT_EQ(mca::find_info(infos, "c"), nullptr);
    EXPECT_EQ(mca::find_info(infos, "bb"), nullptr);
    EXPECT_EQ(mca::find_info({}, "a"), nullptr);
}

TEST(SdkInfo, KeysOfTheFullLengthAreMatchedWithoutATerminator) {
    pmix_info_t info{};
    std::memset(info.key, 'k', sizeof(info.key));  // no NUL at all
    const std::string full(sizeof(info.key), 'k');
    EXPECT_EQ(mca::info_key(info), full);
    EXPECT_EQ(mca::find_info({&info, 1}, full), &info);
}

TEST(SdkInfo, ABareKeyIsATrueFlag) {
    const std::vector<pmix_info_t> infos = {typed("bare", PMIX_UNDEF), flag("yes", true),
                                            flag("no", false), make_info_u32("number", 1)};
    EXPECT_EQ(mca::info_flag(infos, "bare"), true);
    EXPECT_EQ(mca::info_flag(infos, "yes"), true);
    EXPECT_EQ(mca::info_flag(infos, "no"), false);
    EXPECT_EQ(mca::info_flag(infos, "number"), std::nullopt);  // not a flag
    EXPECT_EQ(mca::info_flag(infos, "absent"), std::nullopt);
    EXPECT_TRUE(mca::info_true(infos[0]));
    EXPECT_TRUE(mca::info_true(infos[1]));
    EXPECT_FALSE(mca::info_true(infos[2]));
    EXPECT_FALSE(mca::info_true(infos[3]));
}

TEST(SdkInfo, UnsignedReadsEveryIntegerTypeAndRefusesNegatives) {
    EXPECT_EQ(mca::as_uint(make_info_u32("k", 7).value), 7u);
    EXPECT_EQ(mca::as_uint(int_value(PMIX_INT, 9)), 9u);
    EXPECT_EQ(mca::as_uint(int_value(PMIX_INT8, 5)), 5u);
    EXPECT_EQ(mca::as_uint(int_value(PMIX_PID, 4711)), 4711u);
    EXPECT_EQ(mca::as_uint(int_value(PMIX_INT, -1)), std::nullopt);
    EXPECT_EQ(mca::as_uint(int_value(PMIX_INT64, -5)), std::nullopt);
    pmix_value_t rank{};
    rank.type = PMIX_PROC_RANK;
    rank.data.rank = 3;
    EXPECT_EQ(mca::as_uint(rank), 3u);
    EXPECT_EQ(mca::as_uint(make_info_string("k", "12").value), std::nullopt);
}

TEST(SdkInfo, ThirtyTwoBitReadRefusesWhatDoesNotFit) {
    pmix_value_t big{};
    big.type = PMIX_UINT64;
    big.data.uint64 = std::uint64_t{1} << 32;
    EXPECT_EQ(mca::as_u32(big), std::nullopt);
    big.data.uint64 = std::numeric_limits<std::uint32_t>::max();
    EXPECT_EQ(mca::as_u32(big), std::numeric_limits<std::uint32_t>::max());
}

TEST(SdkInfo, SignedReadKeepsNegativesAndRefusesHugeUnsigned) {
    const std::vector<pmix_info_t> infos = {make_info_u32("port", 4711)};
    EXPECT_EQ(mca::info_int(infos, "port"), 4711);
    EXPECT_EQ(mca::info_int(infos, "absent"), std::nullopt);
    EXPECT_EQ(mca::as_int(int_value(PMIX_INT, -3)), -3);
    pmix_value_t huge{};
    huge.type = PMIX_UINT64;
    huge.data.uint64 = std::numeric_limits<std::uint64_t>::max();
    EXPECT_EQ(mca::as_int(huge), std::nullopt);
}

TEST(SdkInfo, EmptyOrMistypedStringsCountAsAbsent) {
    const std::vector<pmix_info_t> infos = {make_info_string("dir", "/tmp/x"),
                                            make_info_string("empty", ""),
                                            make_info_u32("number", 1)};
    EXPECT_EQ(mca::info_string(infos, "dir"), "/tmp/x");
    EXPECT_EQ(mca::info_string(infos, "empty"), std::nullopt);
    EXPECT_EQ(mca::info_string(infos, "number"), std::nullopt);
    EXPECT_EQ(mca::info_string(infos, "absent"), std::nullopt);
}

// --- InfoArray: the one owning pmix_info_t array -------------------------------

pmix_info_t loaded_string(const char *key, const char *value) {
    pmix_info_t info{};
    PMIx_Info_load(&info, key, value, PMIX_STRING);
    return info;
}

TEST(SdkInfoArray, CopyOwnsEveryValueEvenOfAPersistentSource) {
    std::string text = "borrowed";
    pmix_info_t source = make_info_string("k", text.data());
    source.flags |= PMIX_INFO_PERSISTENT;  // the source does not own its string
    mca::InfoArray copy = mca::InfoArray::copy_of(&source, 1);
    ASSERT_EQ(copy.size(), 1u);
    EXPECT_NE(copy.data()[0].value.data.string, text.data());  // a copy of its own
    EXPECT_EQ(copy.data()[0].flags & PMIX_INFO_PERSISTENT, 0u);
    text = "changed!";
    EXPECT_STREQ(copy.data()[0].value.data.string, "borrowed");
    EXPECT_EQ(mca::info_string(copy.span(), "k"), "borrowed");
}

TEST(SdkInfoArray, CopyOfNothingIsEmpty) {
    EXPECT_TRUE(mca::InfoArray::copy_of(nullptr, 3).empty());
    EXPECT_TRUE(mca::InfoArray::copy_of({}).empty());
}

TEST(SdkInfoArray, AdoptTakesTheValueAndGrowsKeepingEarlierEntries) {
    mca::InfoArray array;
    for (int i = 0; i < 20; ++i) {
        const std::string key = "key" + std::to_string(i);
        pmix_info_t info = loaded_string(key.c_str(), key.c_str());
        array.adopt(info);
        EXPECT_EQ(info.value.type, PMIX_UNDEF);  // nothing left to free in the source
    }
    ASSERT_EQ(array.size(), 20u);
    EXPECT_EQ(mca::info_string(array.span(), "key0"), "key0");
    EXPECT_EQ(mca::info_string(array.span(), "key19"), "key19");
}

TEST(SdkInfoArray, MovingHandsTheEntriesOver) {
    pmix_info_t info = loaded_string("k", "v");
    mca::InfoArray first;
    first.adopt(info);
    mca::InfoArray second = std::move(first);
    EXPECT_TRUE(first.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_EQ(mca::info_string(second.span(), "k"), "v");
}

TEST(SdkInfoArray, ReleaseGivesTheArrayToACCaller) {
    pmix_info_t info = loaded_string("k", "v");
    mca::InfoArray array;
    array.adopt(info);
    const std::size_t n = array.size();
    pmix_info_t *given = array.release();
    EXPECT_TRUE(array.empty());
    ASSERT_NE(given, nullptr);
    EXPECT_STREQ(given[0].value.data.string, "v");
    PMIX_INFO_FREE(given, n);  // what the C caller does
}

}  // namespace
