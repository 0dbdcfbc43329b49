// The codec for every PMIx data type: what PMIx_Data_pack/unpack write and
// read, and what the runtime's wire protocol will carry.
//
// Format (little-endian, fixed width, self-describing at each pack() call):
//   pack(t, n elements) = u16 type tag, u64 count, then each element.
//   Integers and floats: their C size; bool: one byte; strings: u64 (length+1,
//   0 for NULL) then the bytes without NUL; byte blocks: u64 size then bytes;
//   arrays: u64 count then elements; a pmix_value_t: u16 type then its payload.
//
// Contract of the Decoder: every length is checked against the bytes that
// remain before anything is allocated, so a forged length costs at most a
// bounded multiple of the input size; failures are sticky, leave the decoded
// object in a state that destruct() releases, and report
// PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER (input too short),
// PMIX_ERR_PACK_MISMATCH (tag differs from the requested type),
// PMIX_ERR_UNKNOWN_DATA_TYPE or PMIX_ERR_UNPACK_FAILURE (malformed).
// Everything the Decoder allocates comes from malloc: C callers free() it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pmix_common.h"
#include "pmixpp/mca/info.hpp"

namespace pmixpp::wire {

class Encoder {
  public:
    void put_raw(const void *data, std::size_t size);
    void put_u8(uint8_t x) { bytes_.push_back(x); }
    void put_u16(uint16_t x) { put_le(x, 2); }
    void put_u32(uint32_t x) { put_le(x, 4); }
    void put_u64(uint64_t x) { put_le(x, 8); }

    const std::vector<uint8_t> &bytes() const noexcept { return bytes_; }
    std::vector<uint8_t> &bytes() noexcept { return bytes_; }

  private:
    void put_le(uint64_t x, int width);
    std::vector<uint8_t> bytes_;
};

class Decoder {
  public:
    explicit Decoder(std::span<const uint8_t> input) : input_(input) {}

    // Each getter returns false (and leaves *out zero) once the decoder failed.
    bool get_raw(void *out, std::size_t size);
    bool get_u8(uint8_t &x);
    bool get_u16(uint16_t &x);
    bool get_u32(uint32_t &x);
    bool get_u64(uint64_t &x);
    // Reads a u64 count and checks that `count * min_bytes_each` bytes remain.
    bool get_count(std::size_t &count, std::size_t min_bytes_each = 1);

    std::size_t remaining() const noexcept { return input_.size() - pos_; }
    std::size_t position() const noexcept { return pos_; }
    bool ok() const noexcept { return status_ == PMIX_SUCCESS; }
    pmix_status_t status() const noexcept { return status_; }
    void fail(pmix_status_t status) noexcept {
        if (ok()) status_ = status;
    }

  private:
    bool get_le(uint64_t &x, int width);
    std::span<const uint8_t> input_;
    std::size_t pos_ = 0;
    pmix_status_t status_ = PMIX_SUCCESS;
};

// Untagged elements: n consecutive elements of type t at `elems` (stride
// element_size(t)). decode() zero-fills the destination first.
pmix_status_t encode(Encoder &enc, pmix_data_type_t t, const void *elems, std::size_t n);
pmix_status_t decode(Decoder &dec, pmix_data_type_t t, void *elems, std::size_t n);

// Tagged form used by PMIx_Data_pack/unpack. On entry *n is the capacity of
// `elems`; on success it is the number unpacked. More stored elements than
// capacity: PMIX_ERR_UNPACK_INADEQUATE_SPACE and nothing is consumed.
pmix_status_t pack(Encoder &enc, pmix_data_type_t t, const void *elems, std::size_t n);
pmix_status_t unpack(Decoder &dec, pmix_data_type_t t, void *elems, std::size_t *n);

// Releases everything the elements own and zeroes them (a destructed
// pmix_value_t has type PMIX_UNDEF and NULL pointers).
void destruct(pmix_data_type_t t, void *elems, std::size_t n) noexcept;

// Deep copy of n elements into zeroed storage at dst.
pmix_status_t copy(pmix_data_type_t t, void *dst, const void *src, std::size_t n);

// Human-readable rendering of one element (not a stable format).
std::string print(pmix_data_type_t t, const void *elem);

// "PMIX_PROC_RANK" for PMIX_PROC_RANK; nullptr for an unknown type.
const char *type_name(pmix_data_type_t t) noexcept;

std::size_t element_size(pmix_data_type_t t) noexcept;
bool value_is_boxed(pmix_data_type_t t) noexcept;

using mca::as_uint;  // pmixpp/mca/info.hpp

}  // namespace pmixpp::wire
