// Message bodies: typed fields on top of the codec's Encoder/Decoder.
//
// Fields have no tags; each command's handler and its requester agree on the
// order (protocol.hpp documents it per command). Every BodyReader getter is
// bounds-checked and sticky: after the first failure all later getters fail,
// so a handler reads all its fields and checks ok() once. A handler that finds
// !ok() (or finished() false) treats the frame as malformed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pmix_common.h"
#include "pmixpp/mca/info_array.hpp"
#include "wire/codec.hpp"

namespace pmixpp::wire {

// The owning pmix_info_t array of the core and the components (the SDK's).
using InfoArray = mca::InfoArray;

class BodyWriter {
  public:
    BodyWriter &u8(std::uint8_t x) {
        enc_.put_u8(x);
        return *this;
    }
    BodyWriter &u32(std::uint32_t x) {
        enc_.put_u32(x);
        return *this;
    }
    BodyWriter &i32(std::int32_t x) { return u32(static_cast<std::uint32_t>(x)); }
    BodyWriter &u64(std::uint64_t x) {
        enc_.put_u64(x);
        return *this;
    }
    BodyWriter &boolean(bool x) { return u8(x ? 1 : 0); }
    BodyWriter &str(std::string_view s);
    BodyWriter &bytes(std::span<const std::uint8_t> b);
    BodyWriter &bytes(std::span<const std::byte> b) {
        return bytes(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t *>(b.data()),
                                                   b.size()));
    }
    BodyWriter &proc(const pmix_proc_t &p);
    BodyWriter &procs(const pmix_proc_t *p, std::size_t n);
    BodyWriter &infos(const pmix_info_t *info, std::size_t n);
    std::vector<std::uint8_t> take() { return std::move(enc_.bytes()); }

  private:
    Encoder enc_;
};

class BodyReader {
  public:
    explicit BodyReader(std::span<const std::uint8_t> body) : dec_(body) {}
    bool u8(std::uint8_t &x) { return dec_.get_u8(x); }
    bool u32(std::uint32_t &x) { return dec_.get_u32(x); }
    bool i32(std::int32_t &x);
    bool u64(std::uint64_t &x) { return dec_.get_u64(x); }
    bool boolean(bool &x);
    bool str(std::string &s);
    bool bytes(std::vector<std::uint8_t> &b);
    bool proc(pmix_proc_t &p);
    bool procs(std::vector<pmix_proc_t> &p);
    bool infos(InfoArray &info);

    bool ok() const noexcept { return dec_.ok(); }
    // All fields read and nothing left over.
    bool finished() const noexcept { return dec_.ok() && dec_.remaining() == 0; }
    std::size_t remaining() const noexcept { return dec_.remaining(); }

  private:
    Decoder dec_;
};

// The modex record stream: what a fence hands the host (OPENMPI-CONTRACT
// rule 6), what a direct modex returns and what a client receives after a
// fence. A stream is a plain concatenation of records, so the concatenation
// of two streams (the host joining every node's contribution) is a stream:
//   u32 magic 0x52584d50 ("PMXR"), str nspace, u32 rank, bytes blob
// where blob is a gds assemble_modex() blob. A record whose blob is the
// process's whole committed data (not only its latest changes) has the magic
// 0x57584d50 ("PMXW", `whole`): a receiver may drop what it holds of that
// process and not yet decoded (client/lazy_modex.hpp).
struct ModexRecord {
    pmix_proc_t proc{};
    std::vector<std::uint8_t> blob;
    bool whole = false;
};
void append_record(std::vector<std::uint8_t> &stream, const pmix_proc_t &proc,
                   std::span<const std::uint8_t> blob, bool whole = false);
// False when the stream is malformed (records read so far are kept in `out`).
bool parse_records(std::span<const std::uint8_t> stream, std::vector<ModexRecord> &out);

}  // namespace pmixpp::wire
