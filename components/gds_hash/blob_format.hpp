// The blobs of gds_hash: what assemble_modex()/assemble_job() write and
// store_modex()/store_job() read back.
//
// A blob is one or more segments, so that blobs of one process (or one job)
// can be concatenated and stored in one call. Every item is written with the
// exported PMIx_Data_pack (one call per item: self-describing type tags, and
// bounds-checked by PMIx_Data_unpack):
//
//   segment = STRING "pmixpp.gds_hash" | UINT16 version (1) | UINT8 kind | UINT32 n | n items
//   modex item (kind 1) = STRING key | SCOPE scope | VALUE value
//   job item   (kind 2) = INFO, laid out as PMIx_server_register_nspace's info array
//
// Readers accept only this format name, version 1 and the kind they were asked
// for; anything else, a truncated segment, a key that is empty or longer than
// PMIX_MAX_KEYLEN, or a scope other than LOCAL/REMOTE/GLOBAL fails with
// PMIX_ERR_UNPACK_FAILURE and returns nothing. An empty blob is zero segments.
#pragma once

#include "pmixpp/mca/info_array.hpp"
#include "value_table.hpp"

#include "pmixpp/mca/gds.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pmixpp::gds_hash {

inline constexpr const char *kBlobFormatName = "pmixpp.gds_hash";
inline constexpr std::uint16_t kBlobFormatVersion = 1;

enum class BlobKind : std::uint8_t { modex = 1, job = 2 };

// Writes one segment of `count` items. The caller then adds exactly `count`
// items of the segment's kind and calls finish().
class BlobWriter {
  public:
    BlobWriter(BlobKind kind, std::uint32_t count);
    ~BlobWriter();
    BlobWriter(const BlobWriter &) = delete;
    BlobWriter &operator=(const BlobWriter &) = delete;

    void add_modex_item(const std::string &key, pmix_scope_t scope, const pmix_value_t &value);
    void add_job_item(const pmix_info_t &info);

    // The blob, or the first packing failure (e.g. a value of a type the
    // codec cannot carry), naming the key.
    mca::Result<mca::gds::Blob> finish();

  private:
    // `what` and `name` (may be empty) name the field in the failure message.
    void pack(void *src, pmix_data_type_t type, std::string_view what, std::string_view name = {});

    pmix_data_buffer_t buffer_{};
    pmix_status_t failure_ = PMIX_SUCCESS;
    std::string failure_message_;
};

struct ModexItem {
    std::string key;
    pmix_scope_t scope = PMIX_GLOBAL;
    OwnedValue value;
};

// Every item of every segment, in order. Errors: PMIX_ERR_UNPACK_FAILURE.
mca::Result<std::vector<ModexItem>> read_modex_blob(std::span<const std::byte> blob);
mca::Result<mca::InfoArray> read_job_blob(std::span<const std::byte> blob);

}  // namespace pmixpp::gds_hash
