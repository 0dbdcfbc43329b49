// PMIx_Data_compress/decompress (zlib).
#include <gtest/gtest.h>
#include <pmix.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

std::string compressible(std::size_t n) {
    std::string s;
    while (s.size() < n) s += "node" + std::to_string(s.size() % 97) + ",";
    s.resize(n);
    return s;
}

}  // namespace

TEST(Compress, RoundTripRestoresTheExactBytes) {
    std::string text = compressible(64 * 1024);
    uint8_t *packed = nullptr;
    size_t npacked = 0;
    ASSERT_TRUE(PMIx_Data_compress(reinterpret_cast<const uint8_t *>(text.data()), text.size(),
                                   &packed, &npacked));
    EXPECT_LT(npacked, text.size() / 4);
    uint8_t *restored = nullptr;
    size_t nrestored = 0;
    ASSERT_TRUE(PMIx_Data_decompress(packed, npacked, &restored, &nrestored));
    ASSERT_EQ(nrestored, text.size());
    EXPECT_EQ(std::string(reinterpret_cast<char *>(restored), nrestored), text);
    std::free(packed);
    std::free(restored);
}

TEST(Compress, ReturnsFalseWhenCompressionWouldNotHelp) {
    std::vector<uint8_t> noise(256);
    std::mt19937 rng(42);
    for (auto &b : noise) b = static_cast<uint8_t>(rng());
    uint8_t *out = nullptr;
    size_t n = 0;
    EXPECT_FALSE(PMIx_Data_compress(noise.data(), noise.size(), &out, &n));
    EXPECT_EQ(out, nullptr);
    EXPECT_FALSE(PMIx_Data_compress(noise.data(), 0, &out, &n));
}

TEST(Compress, CorruptTruncatedOrForgedInputIsRejected) {
    std::string text = compressible(8 * 1024);
    uint8_t *packed = nullptr;
    size_t npacked = 0;
    ASSERT_TRUE(PMIx_Data_compress(reinterpret_cast<const uint8_t *>(text.data()), text.size(),
                                   &packed, &npacked));
    std::vector<uint8_t> good(packed, packed + npacked);
    std::free(packed);
    uint8_t *out = nullptr;
    size_t n = 0;

    std::vector<uint8_t> corrupt = good;
    for (std::size_t i = 12; i < corrupt.size(); i += 7) corrupt[i] ^= 0x5a;
    EXPECT_FALSE(PMIx_Data_decompress(corrupt.data(), corrupt.size(), &out, &n));

    EXPECT_FALSE(PMIx_Data_decompress(good.data(), good.size() / 2, &out, &n));

    std::vector<uint8_t> forged = good;  // claims 2^60 bytes of output
    for (int i = 0; i < 8; ++i) forged[i] = static_cast<uint8_t>((1ULL << 60) >> (8 * i));
    EXPECT_FALSE(PMIx_Data_decompress(forged.data(), forged.size(), &out, &n));

    std::vector<uint8_t> shorter = good;  // claims one byte fewer than the stream holds
    for (int i = 0; i < 8; ++i) shorter[i] = static_cast<uint8_t>((text.size() - 1) >> (8 * i));
    EXPECT_FALSE(PMIx_Data_decompress(shorter.data(), shorter.size(), &out, &n));

    std::vector<uint8_t> garbage(100, 0x11);
    EXPECT_FALSE(PMIx_Data_decompress(garbage.data(), garbage.size(), &out, &n));
    EXPECT_EQ(out, nullptr);
}
