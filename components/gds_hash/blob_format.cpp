// The gds_hash blob format (see blob_format.hpp): writer and readers.
#include "blob_format.hpp"

#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace pmixpp::gds_hash {

using mca::Result;
using mca::Status;
using mca::gds::Blob;

// --- writer -----------------------------------------------------------------

namespace {

// A segment's first three fields never change for a kind: packed once, each
// segment starts with a copy of them (a commit writes a segment per scope).
struct SegmentStart {
    mutable pmix_data_buffer_t buffer;  // only read (PMIx_Data_copy_payload's source)
    pmix_status_t status = PMIX_SUCCESS;

    explicit SegmentStart(BlobKind kind) {
        PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
        char *name = const_cast<char *>(kBlobFormatName);
        std::uint16_t version = kBlobFormatVersion;
        auto kind_byte = static_cast<std::uint8_t>(kind);
        status = PMIx_Data_pack(nullptr, &buffer, &name, 1, PMIX_STRING);
        if (status == PMIX_SUCCESS)
            status = PMIx_Data_pack(nullptr, &buffer, &version, 1, PMIX_UINT16);
        if (status == PMIX_SUCCESS)
            status = PMIx_Data_pack(nullptr, &buffer, &kind_byte, 1, PMIX_UINT8);
    }
    ~SegmentStart() { PMIX_DATA_BUFFER_DESTRUCT(&buffer); }
    SegmentStart(const SegmentStart &) = delete;
    SegmentStart &operator=(const SegmentStart &) = delete;
};

const SegmentStart &segment_start(BlobKind kind) {
    static const SegmentStart modex(BlobKind::modex), job(BlobKind::job);
    return kind == BlobKind::modex ? modex : job;
}

}  // namespace

BlobWriter::BlobWriter(BlobKind kind, std::uint32_t count) {
    const SegmentStart &start = segment_start(kind);
    pmix_status_t rc = start.status;
    if (rc == PMIX_SUCCESS) rc = PMIx_Data_copy_payload(&buffer_, &start.buffer);
    if (rc != PMIX_SUCCESS) {
        failure_ = rc;
        failure_message_ =
            "gds_hash: cannot serialize a segment header: " + std::string(PMIx_Error_string(rc));
        return;
    }
    pack(&count, PMIX_UINT32, "the item count");
}

BlobWriter::~BlobWriter() {
    PMIX_DATA_BUFFER_DESTRUCT(&buffer_);
}

void BlobWriter::pack(void *src, pmix_data_type_t type, std::string_view what,
                      std::string_view name) {
    if (failure_ != PMIX_SUCCESS) return;
    const pmix_status_t rc = PMIx_Data_pack(nullptr, &buffer_, src, 1, type);
    if (rc != PMIX_SUCCESS) {
        failure_ = rc;
        failure_message_ = "gds_hash: cannot serialize " + std::string(what) +
                           (name.empty() ? "" : " " + std::string(name)) + ": " +
                           PMIx_Error_string(rc);
    }
}

void BlobWriter::add_modex_item(const std::string &key, pmix_scope_t scope,
                                const pmix_value_t &value) {
    char *key_ptr = const_cast<char *>(key.c_str());
    pack(&key_ptr, PMIX_STRING, "key", key);
    pack(&scope, PMIX_SCOPE, "key", key);
    pack(const_cast<pmix_value_t *>(&value), PMIX_VALUE, "key", key);
}

void BlobWriter::add_job_item(const pmix_info_t &info) {
    pack(const_cast<pmix_info_t *>(&info), PMIX_INFO, "job info",
         bounded(info.key, sizeof(info.key)));
}

Result<Blob> BlobWriter::finish() {
    if (failure_ != PMIX_SUCCESS) return Status(failure_, failure_message_);
    const auto *begin = reinterpret_cast<const std::byte *>(buffer_.base_ptr);
    return Blob(begin, begin + buffer_.bytes_used);
}

// --- readers ----------------------------------------------------------------

namespace {

Status corrupt(std::string_view why) {
    return Status(PMIX_ERR_UNPACK_FAILURE, "gds_hash: cannot read blob: " + std::string(why));
}

// Reads a blob's segments from a private copy of its bytes.
class SegmentReader {
  public:
    explicit SegmentReader(std::span<const std::byte> blob) {
        if (!blob.empty()) {
            pmix_byte_object_t bytes{
                const_cast<char *>(reinterpret_cast<const char *>(blob.data())), blob.size()};
            embedded_ = PMIx_Data_embed(&buffer_, &bytes);
        }
    }
    ~SegmentReader() { PMIX_DATA_BUFFER_DESTRUCT(&buffer_); }
    SegmentReader(const SegmentReader &) = delete;
    SegmentReader &operator=(const SegmentReader &) = delete;

    bool at_end() const noexcept {
        return buffer_.base_ptr == nullptr ||
               buffer_.unpack_ptr >= buffer_.base_ptr + buffer_.bytes_used;
    }

    // Reads one segment header; returns its item count.
    Result<std::uint32_t> header(BlobKind expected) {
        if (embedded_ != PMIX_SUCCESS) return Status(embedded_, "gds_hash: cannot copy blob");
        char *name = nullptr;
        if (!unpack(&name, PMIX_STRING)) return corrupt("no gds_hash format name");
        const bool ours = name != nullptr && std::strcmp(name, kBlobFormatName) == 0;
        std::free(name);
        if (!ours) return corrupt("not a gds_hash blob (foreign format)");
        std::uint16_t version = 0;
        if (!unpack(&version, PMIX_UINT16)) return corrupt("truncated header");
        if (version != kBlobFormatVersion) {
            return corrupt("format version " + std::to_string(version) + ", this module reads " +
                           std::to_string(kBlobFormatVersion));
        }
        std::uint8_t kind = 0;
        std::uint32_t count = 0;
        if (!unpack(&kind, PMIX_UINT8) || !unpack(&count, PMIX_UINT32)) {
            return corrupt("truncated header");
        }
        if (kind != static_cast<std::uint8_t>(expected)) {
            return corrupt(expected == BlobKind::modex ? "a job blob where a modex blob belongs"
                                                       : "a modex blob where a job blob belongs");
        }
        return count;
    }

    bool unpack(void *dest, pmix_data_type_t type) {
        std::int32_t n = 1;
        return PMIx_Data_unpack(nullptr, &buffer_, dest, &n, type) == PMIX_SUCCESS && n == 1;
    }

  private:
    pmix_data_buffer_t buffer_{};
    pmix_status_t embedded_ = PMIX_SUCCESS;
};

bool shareable_scope(pmix_scope_t scope) {
    return scope == PMIX_LOCAL || scope == PMIX_REMOTE || scope == PMIX_GLOBAL;
}

}  // namespace

Result<std::vector<ModexItem>> read_modex_blob(std::span<const std::byte> blob) {
    std::vector<ModexItem> items;
    SegmentReader reader(blob);
    while (!reader.at_end()) {
        auto count = reader.header(BlobKind::modex);
        if (!count) return count.status();
        for (std::uint32_t i = 0; i < count.value(); ++i) {
            ModexItem item;
            char *key = nullptr;
            if (!reader.unpack(&key, PMIX_STRING)) return corrupt("truncated key");
            if (key != nullptr) item.key = key;
            std::free(key);
            if (item.key.empty() || item.key.size() > PMIX_MAX_KEYLEN) {
                return corrupt("empty or overlong key");
            }
            if (!reader.unpack(&item.scope, PMIX_SCOPE) || !shareable_scope(item.scope)) {
                return corrupt("bad scope for key " + item.key);
            }
            pmix_value_t value{};
            const bool ok = reader.unpack(&value, PMIX_VALUE);
            item.value.adopt(value);  // released either way
            if (!ok) return corrupt("bad value for key " + item.key);
            items.push_back(std::move(item));
        }
    }
    return items;
}

Result<mca::InfoArray> read_job_blob(std::span<const std::byte> blob) {
    mca::InfoArray infos;
    SegmentReader reader(blob);
    while (!reader.at_end()) {
        auto count = reader.header(BlobKind::job);
        if (!count) return count.status();
        for (std::uint32_t i = 0; i < count.value(); ++i) {
            pmix_info_t info{};
            const bool ok = reader.unpack(&info, PMIX_INFO);
            infos.adopt(info);  // owned from here, released either way
            if (!ok) return corrupt("truncated or malformed job info");
        }
    }
    return infos;
}

}  // namespace pmixpp::gds_hash
