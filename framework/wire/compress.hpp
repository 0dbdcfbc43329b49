// zlib compression of byte blocks: PMIx_Data_compress/decompress and, later,
// large wire frames.
//
// A compressed block is a u64 little-endian original size followed by one
// zlib stream. decompress() trusts nothing in it: the declared size must be
// reachable at zlib's maximum ratio from the input length (so a forged header
// cannot make us allocate more than ~1000x the input), and the stream must end
// exactly at that size.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace pmixpp::wire {

// False (out untouched) when the input is empty, zlib fails, or the result
// would not be smaller than the input.
bool compress(std::span<const uint8_t> in, std::vector<uint8_t> &out);

// False (out untouched) for anything that is not a block made by compress().
bool decompress(std::span<const uint8_t> in, std::vector<uint8_t> &out);

}  // namespace pmixpp::wire
