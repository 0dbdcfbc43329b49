// libFuzzer target: the codec of every PMIx data type (wire/codec.hpp), the
// code under PMIx_Data_unpack (api/buffer_api.cpp calls wire::unpack on the
// buffer's unread bytes) and under every typed field of a message body.
//
// Input: byte 0 picks the data type (any value 0-255: unknown types must be
// refused cleanly), byte 1 the capacity (1-8 elements) and the form (bit 7:
// the untagged decode() of message fields; else the tagged unpack() of
// PMIx_Data_unpack), the rest is the buffer. Values are unpacked until the
// buffer fails or ends, as a reader loops over PMIx_Data_unpack. Each value
// that unpacks must pack again, and what that packs must unpack to a value
// that packs to the same bytes (pack . unpack is the identity on our output).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "wire/codec.hpp"

using namespace pmixpp::wire;

namespace {

struct Elements {
    pmix_data_type_t type;
    std::size_t n;
    std::vector<std::max_align_t> storage;
    Elements(pmix_data_type_t t, std::size_t cap)
        : type(t),
          n(cap),
          storage((element_size(t) * cap + sizeof(std::max_align_t) - 1) /
                      sizeof(std::max_align_t) +
                  1) {}
    ~Elements() { destruct(type, data(), n); }
    void *data() { return storage.data(); }
};

std::vector<std::uint8_t> pack_or_die(pmix_data_type_t t, Elements &e, std::size_t n, bool tagged) {
    Encoder enc;
    const pmix_status_t rc = tagged ? pack(enc, t, e.data(), n) : encode(enc, t, e.data(), n);
    if (rc != PMIX_SUCCESS) std::abort();
    return std::move(enc.bytes());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 2) return 0;
    const auto t = static_cast<pmix_data_type_t>(data[0]);
    const std::size_t cap = 1 + (data[1] & 0x07);
    const bool tagged = (data[1] & 0x80) == 0;
    if (element_size(t) == 0) {
        // Unknown or unsized type: refused, nothing written.
        Decoder dec(std::span<const std::uint8_t>(data + 2, size - 2));
        std::max_align_t sink[8]{};
        std::size_t n = cap;
        if (tagged && unpack(dec, t, sink, &n) == PMIX_SUCCESS && n > 0) std::abort();
        return 0;
    }
    Decoder dec(std::span<const std::uint8_t>(data + 2, size - 2));
    while (dec.ok() && dec.remaining() > 0) {
        Elements first(t, cap);
        std::size_t n = cap;
        const pmix_status_t rc =
            tagged ? unpack(dec, t, first.data(), &n) : decode(dec, t, first.data(), cap);
        if (rc != PMIX_SUCCESS) {
            first.n = cap;  // destruct() of a zeroed/partial array is safe
            break;
        }
        first.n = n;
        const std::vector<std::uint8_t> once = pack_or_die(t, first, n, tagged);
        Decoder dec2(once);
        Elements second(t, cap);
        std::size_t n2 = cap;
        if ((tagged ? unpack(dec2, t, second.data(), &n2) : decode(dec2, t, second.data(), n)) !=
                PMIX_SUCCESS ||
            (tagged && n2 != n) || dec2.remaining() != 0)
            std::abort();
        second.n = n;
        if (pack_or_die(t, second, n, tagged) != once) std::abort();
        // The other entry points a value goes through.
        Elements third(t, n);
        if (copy(t, third.data(), first.data(), n) == PMIX_SUCCESS) {
            if (pack_or_die(t, third, n, tagged) != once) std::abort();
        }
        if (n > 0) (void)print(t, first.data());
        if (!tagged) break;  // untagged: the count is not in the buffer
    }
    return 0;
}
