// The building blocks of the gds_hash store: an owned pmix_value_t, one stored
// entry (value + scope + provenance), and the key -> entry hash table that
// every realm (session, job, app, node, process) uses.
//
// Tables are looked up with a std::string_view key (transparent hash), so a
// PMIx_Get never copies the key it asks for.
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace pmixpp::gds_hash {

// A deep copy of a pmix_value_t, released with PMIx_Value_destruct. Move-only.
// Everything inside is malloc'd by libpmix's PMIx_Value_xfer (the standard's
// ownership rules for values).
class OwnedValue {
  public:
    OwnedValue() = default;
    ~OwnedValue();
    OwnedValue(OwnedValue &&other) noexcept;
    OwnedValue &operator=(OwnedValue &&other) noexcept;
    OwnedValue(const OwnedValue &) = delete;
    OwnedValue &operator=(const OwnedValue &) = delete;

    // Deep-copies `src`. Returns the PMIx status of the copy (an unknown type
    // gives PMIX_ERR_UNKNOWN_DATA_TYPE and leaves *this empty).
    pmix_status_t copy_from(const pmix_value_t &src);
    // Takes over what `src` holds (no copy) and leaves `src` PMIX_UNDEF.
    void adopt(pmix_value_t &src) noexcept;

    const pmix_value_t &get() const noexcept { return value_; }

  private:
    void reset() noexcept;
    pmix_value_t value_{};
};

struct Entry {
    OwnedValue value;
    pmix_scope_t scope = PMIX_GLOBAL;
    // From a job registration (register_job / store_job): part of the job
    // blob, never of a modex blob, and commit() leaves it alone.
    bool registered = false;
    // Put and then committed (or received in a modex blob): part of the modex.
    bool committed = false;
};

struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept {
        return std::hash<std::string_view>{}(key);
    }
};

using Table = std::unordered_map<std::string, Entry, KeyHash, std::equal_to<>>;

// `text` of a fixed-size char array (pmix_key_t, pmix_nspace_t): up to the
// first NUL or `capacity` characters.
inline std::string_view bounded(const char *text, std::size_t capacity) noexcept {
    std::size_t n = 0;
    while (n < capacity && text[n] != '\0') ++n;
    return {text, n};
}

}  // namespace pmixpp::gds_hash
