// C entry points for pmix_data_buffer_t: pack/unpack through the codec, and
// the payload moves the header macros expand into.
//
// Buffer memory contract (4.2 struct, PMIX_DATA_BUFFER_* macros free it):
// base_ptr is malloc'd (or NULL), bytes_used bytes of it hold packed data,
// pack_ptr = base_ptr + bytes_used, unpack_ptr points at the next unread byte,
// bytes_allocated is the capacity.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "pmix.h"
#include "wire/codec.hpp"
#include "wire/compress.hpp"

namespace {

std::span<const uint8_t> unread(const pmix_data_buffer_t *b) {
    if (b->base_ptr == nullptr || b->bytes_used == 0) return {};
    const char *start = b->unpack_ptr ? b->unpack_ptr : b->base_ptr;
    const char *end = b->base_ptr + b->bytes_used;
    if (start < b->base_ptr || start >= end) return {};
    return {reinterpret_cast<const uint8_t *>(start), static_cast<std::size_t>(end - start)};
}

pmix_status_t append(pmix_data_buffer_t *b, std::span<const uint8_t> data) {
    if (data.empty()) return PMIX_SUCCESS;
    const std::size_t used = b->base_ptr ? b->bytes_used : 0;
    const std::size_t read =
        (b->base_ptr && b->unpack_ptr) ? static_cast<std::size_t>(b->unpack_ptr - b->base_ptr) : 0;
    const std::size_t need = used + data.size();
    if (b->base_ptr == nullptr || need > b->bytes_allocated) {
        std::size_t cap = std::max<std::size_t>({need, 2 * b->bytes_allocated, 256});
        auto *grown = static_cast<char *>(std::realloc(b->base_ptr, cap));
        if (grown == nullptr) return PMIX_ERR_NOMEM;
        b->base_ptr = grown;
        b->bytes_allocated = cap;
    }
    std::memcpy(b->base_ptr + used, data.data(), data.size());
    b->bytes_used = need;
    b->pack_ptr = b->base_ptr + need;
    b->unpack_ptr = b->base_ptr + read;
    return PMIX_SUCCESS;
}

// Gives the buffer a payload it now owns (malloc'd), replacing what it had.
void adopt(pmix_data_buffer_t *b, char *bytes, std::size_t size) {
    std::free(b->base_ptr);
    b->base_ptr = size ? bytes : nullptr;
    if (!size) std::free(bytes);
    b->bytes_allocated = size;
    b->bytes_used = size;
    b->pack_ptr = b->base_ptr ? b->base_ptr + size : nullptr;
    b->unpack_ptr = b->base_ptr;
}

bool to_malloc(const std::vector<uint8_t> &v, uint8_t **out, size_t *n) {
    auto *p = static_cast<uint8_t *>(std::malloc(v.size()));
    if (p == nullptr) return false;
    std::memcpy(p, v.data(), v.size());
    *out = p;
    *n = v.size();
    return true;
}

}  // namespace

extern "C" {

pmix_status_t PMIx_Data_pack(const pmix_proc_t * /*target: one format for every peer*/,
                             pmix_data_buffer_t *buffer, void *src, int32_t num_vals,
                             pmix_data_type_t type) {
    if (buffer == nullptr || num_vals < 0) return PMIX_ERR_BAD_PARAM;
    pmixpp::wire::Encoder enc;
    pmix_status_t rc = pmixpp::wire::pack(enc, type, src, static_cast<std::size_t>(num_vals));
    if (rc != PMIX_SUCCESS) return rc;
    return append(buffer, enc.bytes());
}

pmix_status_t PMIx_Data_unpack(const pmix_proc_t * /*source*/, pmix_data_buffer_t *buffer,
                               void *dest, int32_t *max_num_values, pmix_data_type_t type) {
    if (buffer == nullptr || dest == nullptr || max_num_values == nullptr || *max_num_values < 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    std::span<const uint8_t> input = unread(buffer);
    pmixpp::wire::Decoder dec(input);
    std::size_t n = static_cast<std::size_t>(*max_num_values);
    pmix_status_t rc = pmixpp::wire::unpack(dec, type, dest, &n);
    if (rc != PMIX_SUCCESS) return rc;
    buffer->unpack_ptr =
        const_cast<char *>(reinterpret_cast<const char *>(input.data())) + dec.position();
    *max_num_values = static_cast<int32_t>(n);
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Data_copy(void **dest, void *src, pmix_data_type_t type) {
    if (dest == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
    *dest = nullptr;
    if (type == PMIX_STRING) {  // src is the string itself
        *dest = strdup(static_cast<const char *>(src));
        return *dest ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    const std::size_t es = pmixpp::wire::element_size(type);
    if (es == 0) return PMIX_ERR_UNKNOWN_DATA_TYPE;
    void *copy = std::calloc(1, es);
    if (copy == nullptr) return PMIX_ERR_NOMEM;
    pmix_status_t rc = pmixpp::wire::copy(type, copy, src, 1);
    if (rc != PMIX_SUCCESS) {
        std::free(copy);
        return rc;
    }
    *dest = copy;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Data_print(char **output, char *prefix, void *src, pmix_data_type_t type) {
    if (output == nullptr) return PMIX_ERR_BAD_PARAM;
    *output = nullptr;
    const char *name = pmixpp::wire::type_name(type);
    if (name == nullptr || (type != PMIX_UNDEF && pmixpp::wire::element_size(type) == 0)) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    const void *elem =
        (type == PMIX_STRING || type == PMIX_POINTER) ? static_cast<const void *>(&src) : src;
    std::string text = prefix ? prefix : "";
    text += "Data type: ";
    text += name;
    text += "\tValue: ";
    text += type == PMIX_UNDEF ? "UNDEF" : pmixpp::wire::print(type, src ? elem : nullptr);
    *output = strdup(text.c_str());
    return *output ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

pmix_status_t PMIx_Data_copy_payload(pmix_data_buffer_t *dest, pmix_data_buffer_t *src) {
    if (dest == nullptr || src == nullptr) return PMIX_ERR_BAD_PARAM;
    std::span<const uint8_t> payload = unread(src);
    if (dest != src) return append(dest, payload);
    std::vector<uint8_t> bytes(payload.begin(), payload.end());  // appending to itself
    return append(dest, bytes);
}

pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload) {
    if (buffer == nullptr || payload == nullptr) return PMIX_ERR_BAD_PARAM;
    payload->bytes = nullptr;
    payload->size = 0;
    std::span<const uint8_t> rest = unread(buffer);
    if (!rest.empty()) {
        if (reinterpret_cast<const char *>(rest.data()) == buffer->base_ptr) {
            payload->bytes = buffer->base_ptr;  // hand over the whole allocation
            buffer->base_ptr = nullptr;
        } else {
            payload->bytes = static_cast<char *>(std::malloc(rest.size()));
            if (payload->bytes == nullptr) return PMIX_ERR_NOMEM;
            std::memcpy(payload->bytes, rest.data(), rest.size());
        }
        payload->size = rest.size();
    }
    std::free(buffer->base_ptr);
    std::memset(buffer, 0, sizeof *buffer);
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload) {
    if (buffer == nullptr || payload == nullptr) return PMIX_ERR_BAD_PARAM;
    // The buffer takes over the payload's malloc'd bytes.
    adopt(buffer, payload->bytes, payload->bytes ? payload->size : 0);
    payload->bytes = nullptr;
    payload->size = 0;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Data_embed(pmix_data_buffer_t *buffer, const pmix_byte_object_t *payload) {
    if (buffer == nullptr || payload == nullptr) return PMIX_ERR_BAD_PARAM;
    char *copy = nullptr;
    std::size_t size = payload->bytes ? payload->size : 0;
    if (size) {
        copy = static_cast<char *>(std::malloc(size));
        if (copy == nullptr) return PMIX_ERR_NOMEM;
        std::memcpy(copy, payload->bytes, size);
    }
    adopt(buffer, copy, size);
    return PMIX_SUCCESS;
}

bool PMIx_Data_compress(const uint8_t *inbytes, size_t size, uint8_t **outbytes, size_t *nbytes) {
    if (inbytes == nullptr || outbytes == nullptr || nbytes == nullptr) return false;
    std::vector<uint8_t> out;
    if (!pmixpp::wire::compress({inbytes, size}, out)) return false;
    return to_malloc(out, outbytes, nbytes);
}

bool PMIx_Data_decompress(const uint8_t *inbytes, size_t size, uint8_t **outbytes, size_t *nbytes) {
    if (inbytes == nullptr || outbytes == nullptr || nbytes == nullptr) return false;
    std::vector<uint8_t> out;
    if (!pmixpp::wire::decompress({inbytes, size}, out)) return false;
    return to_malloc(out, outbytes, nbytes);
}

}  // extern "C"
