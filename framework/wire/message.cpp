#include "wire/message.hpp"

#include <cstdlib>
#include <cstring>

namespace pmixpp::wire {

namespace {
constexpr std::uint32_t kRecordMagic = 0x52584d50;
constexpr std::uint32_t kWholeRecordMagic = 0x57584d50;
// Smallest encoded pmix_info_t: key (u64 length) + flags + value type.
constexpr std::size_t kMinInfoBytes = 8 + 4 + 2;
}  // namespace

BodyWriter &BodyWriter::str(std::string_view s) {
    enc_.put_u32(static_cast<std::uint32_t>(s.size()));
    enc_.put_raw(s.data(), s.size());
    return *this;
}

BodyWriter &BodyWriter::bytes(std::span<const std::uint8_t> b) {
    enc_.put_u64(b.size());
    enc_.put_raw(b.data(), b.size());
    return *this;
}

BodyWriter &BodyWriter::proc(const pmix_proc_t &p) {
    str(std::string_view(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)));
    return u32(p.rank);
}

BodyWriter &BodyWriter::procs(const pmix_proc_t *p, std::size_t n) {
    u32(static_cast<std::uint32_t>(n));
    for (std::size_t i = 0; i < n; ++i) proc(p[i]);
    return *this;
}

BodyWriter &BodyWriter::infos(const pmix_info_t *info, std::size_t n) {
    if (info == nullptr) n = 0;
    enc_.put_u64(n);
    if (n > 0) encode(enc_, PMIX_INFO, info, n);
    return *this;
}

bool BodyReader::i32(std::int32_t &x) {
    std::uint32_t u = 0;
    bool ok = dec_.get_u32(u);
    x = static_cast<std::int32_t>(u);
    return ok;
}

bool BodyReader::boolean(bool &x) {
    std::uint8_t b = 0;
    bool ok = dec_.get_u8(b);
    x = b != 0;
    return ok;
}

bool BodyReader::str(std::string &s) {
    std::uint32_t n = 0;
    if (!dec_.get_u32(n)) return false;
    if (n > dec_.remaining()) {
        dec_.fail(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        return false;
    }
    s.resize(n);
    return dec_.get_raw(s.data(), n);
}

bool BodyReader::bytes(std::vector<std::uint8_t> &b) {
    std::size_t n = 0;
    if (!dec_.get_count(n, 1)) return false;
    b.resize(n);
    return dec_.get_raw(b.data(), n);
}

bool BodyReader::proc(pmix_proc_t &p) {
    std::memset(&p, 0, sizeof p);
    std::string ns;
    if (!str(ns)) return false;
    if (ns.size() > PMIX_MAX_NSLEN) {
        dec_.fail(PMIX_ERR_UNPACK_FAILURE);
        return false;
    }
    std::memcpy(p.nspace, ns.data(), ns.size());
    return dec_.get_u32(p.rank);
}

bool BodyReader::procs(std::vector<pmix_proc_t> &p) {
    std::uint32_t n = 0;
    if (!dec_.get_u32(n)) return false;
    if (std::size_t{n} * 8 > dec_.remaining()) {
        dec_.fail(PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
        return false;
    }
    p.resize(n);
    for (auto &one : p) {
        if (!proc(one)) return false;
    }
    return true;
}

bool BodyReader::infos(InfoArray &info) {
    std::size_t n = 0;
    if (!dec_.get_count(n, kMinInfoBytes)) return false;
    info.reset();
    if (n == 0) return true;
    auto *arr = static_cast<pmix_info_t *>(std::calloc(n, sizeof(pmix_info_t)));
    if (arr == nullptr) {
        dec_.fail(PMIX_ERR_NOMEM);
        return false;
    }
    info = InfoArray(arr, n);  // released by info even if decoding fails
    if (decode(dec_, PMIX_INFO, arr, n) != PMIX_SUCCESS) {
        dec_.fail(PMIX_ERR_UNPACK_FAILURE);
        return false;
    }
    return dec_.ok();
}

void append_record(std::vector<std::uint8_t> &stream, const pmix_proc_t &proc,
                   std::span<const std::uint8_t> blob, bool whole) {
    BodyWriter w;
    w.u32(whole ? kWholeRecordMagic : kRecordMagic).proc(proc).bytes(blob);
    auto bytes = w.take();
    stream.insert(stream.end(), bytes.begin(), bytes.end());
}

bool parse_records(std::span<const std::uint8_t> stream, std::vector<ModexRecord> &out) {
    BodyReader r(stream);
    while (r.remaining() > 0) {
        std::uint32_t magic = 0;
        ModexRecord rec;
        if (!r.u32(magic) || (magic != kRecordMagic && magic != kWholeRecordMagic)) return false;
        rec.whole = magic == kWholeRecordMagic;
        if (!r.proc(rec.proc) || !r.bytes(rec.blob)) return false;
        out.push_back(std::move(rec));
    }
    return r.ok();
}

}  // namespace pmixpp::wire
