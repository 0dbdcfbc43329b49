// InfoArray: a pmix_info_t array that owns its entries, for the core and the
// components alike (one owning info-array type; see info.hpp for reading one).
//
// The storage is malloc'd, as PMIx's C API expects of an array it hands to a
// caller (PMIX_INFO_FREE frees it): release() gives it away. Each entry owns
// its value, except an entry flagged PMIX_INFO_PERSISTENT, which borrows it
// (the PMIx rule). Values are copied with PMIx_Info_xfer and released with
// PMIx_Value_destruct, libpmix's own C entry points. Move-only; not
// thread-safe (one owner at a time).
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <utility>

namespace pmixpp::mca {

class InfoArray {
  public:
    InfoArray() = default;
    // Adopts a malloc'd array of `n` entries (as a decoder or a C caller made it).
    InfoArray(pmix_info_t *info, std::size_t n) noexcept : info_(info), n_(n), capacity_(n) {}
    InfoArray(InfoArray &&o) noexcept
        : info_(std::exchange(o.info_, nullptr)),
          n_(std::exchange(o.n_, 0)),
          capacity_(std::exchange(o.capacity_, 0)) {}
    InfoArray &operator=(InfoArray &&o) noexcept {
        if (this != &o) {
            reset();
            info_ = std::exchange(o.info_, nullptr);
            n_ = std::exchange(o.n_, 0);
            capacity_ = std::exchange(o.capacity_, 0);
        }
        return *this;
    }
    InfoArray(const InfoArray &) = delete;
    InfoArray &operator=(const InfoArray &) = delete;
    ~InfoArray() { reset(); }

    // A deep copy of a caller's array; empty when `n` is 0, `info` is NULL or
    // an entry cannot be copied. Every copied entry owns its value, even one
    // whose source was PMIX_INFO_PERSISTENT (the copy may outlive the source).
    static InfoArray copy_of(const pmix_info_t *info, std::size_t n) {
        InfoArray out;
        if (info == nullptr || n == 0 || !out.reserve(n)) return out;
        for (std::size_t i = 0; i < n; ++i) {
            pmix_info_t &dest = out.info_[out.n_];
            std::memset(&dest, 0, sizeof dest);
            std::memcpy(dest.key, info[i].key, sizeof dest.key);
            dest.flags = info[i].flags & ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT);
            if (PMIx_Value_xfer(&dest.value, &info[i].value) != PMIX_SUCCESS) return InfoArray();
            ++out.n_;
        }
        return out;
    }
    static InfoArray copy_of(std::span<const pmix_info_t> infos) {
        return copy_of(infos.data(), infos.size());
    }

    // Appends `info`, taking over its value: the caller's entry is left with
    // an empty (PMIX_UNDEF) value. Throws std::bad_alloc when out of memory.
    void adopt(pmix_info_t &info) {
        if (n_ == capacity_ && !reserve(capacity_ == 0 ? 4 : capacity_ * 2)) throw std::bad_alloc();
        std::memcpy(&info_[n_++], &info, sizeof info);
        std::memset(&info.value, 0, sizeof info.value);
    }

    pmix_info_t *data() const noexcept { return info_; }
    std::size_t size() const noexcept { return n_; }
    bool empty() const noexcept { return n_ == 0; }
    std::span<const pmix_info_t> span() const noexcept { return {info_, n_}; }

    // Gives the array to a C caller, who frees it with PMIX_INFO_FREE(ptr,
    // size()) (read size() first); this array is empty afterwards.
    pmix_info_t *release() noexcept {
        n_ = 0;
        capacity_ = 0;
        return std::exchange(info_, nullptr);
    }

    // Releases every entry's value and the storage.
    void reset() noexcept {
        for (std::size_t i = 0; i < n_; ++i) {
            if ((info_[i].flags & PMIX_INFO_PERSISTENT) == 0) PMIx_Value_destruct(&info_[i].value);
        }
        std::free(info_);
        info_ = nullptr;
        n_ = 0;
        capacity_ = 0;
    }

  private:
    bool reserve(std::size_t capacity) noexcept {
        if (capacity <= capacity_) return true;
        // pmix_info_t is a C struct: moving it is copying its bytes.
        void *grown = std::realloc(info_, capacity * sizeof(pmix_info_t));
        if (grown == nullptr) return false;
        info_ = static_cast<pmix_info_t *>(grown);
        capacity_ = capacity;
        return true;
    }

    pmix_info_t *info_ = nullptr;
    std::size_t n_ = 0;
    std::size_t capacity_ = 0;
};

}  // namespace pmixpp::mca
