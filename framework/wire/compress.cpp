#include "wire/compress.hpp"

#include <zlib.h>

namespace pmixpp::wire {
namespace {

constexpr std::size_t kHeader = 8;
// deflate never expands data by more than 1032:1 (RFC 1951 block limits).
constexpr uint64_t kMaxRatio = 1032;

}  // namespace

bool compress(std::span<const uint8_t> in, std::vector<uint8_t> &out) {
    if (in.empty()) return false;
    uLongf bound = compressBound(static_cast<uLong>(in.size()));
    std::vector<uint8_t> result(kHeader + bound);
    for (std::size_t i = 0; i < kHeader; ++i)
        result[i] = static_cast<uint8_t>(uint64_t{in.size()} >> (8 * i));
    uLongf written = bound;
    if (compress2(result.data() + kHeader, &written, in.data(), static_cast<uLong>(in.size()),
                  Z_BEST_COMPRESSION) != Z_OK) {
        return false;
    }
    if (kHeader + written >= in.size()) return false;  // would not help
    result.resize(kHeader + written);
    out = std::move(result);
    return true;
}

bool decompress(std::span<const uint8_t> in, std::vector<uint8_t> &out) {
    if (in.size() <= kHeader) return false;
    uint64_t size = 0;
    for (std::size_t i = 0; i < kHeader; ++i) size |= uint64_t{in[i]} << (8 * i);
    const std::size_t stream = in.size() - kHeader;
    if (size == 0 || size / kMaxRatio > stream) return false;
    std::vector<uint8_t> result(size);
    uLongf produced = static_cast<uLongf>(size);
    uLong consumed = static_cast<uLong>(stream);
    int rc = uncompress2(result.data(), &produced, in.data() + kHeader, &consumed);
    if (rc != Z_OK || produced != size || consumed != stream) return false;
    out = std::move(result);
    return true;
}

}  // namespace pmixpp::wire
