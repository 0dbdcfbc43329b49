// PMIx_Get of PMIX_PSET_NAMES through the server: see psets.hpp.
#include "client/psets.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>

#include "client/query.hpp"
#include "pmixpp/mca/info.hpp"
#include "wire/codec.hpp"

namespace pmixpp::client {

bool is_pset_names_key(const char *key) noexcept {
    return key != nullptr && std::strncmp(key, PMIX_PSET_NAMES, PMIX_MAX_KEYLEN) == 0;
}

pmix_value_t *pset_names_value(const std::vector<std::string> &names) {
    auto *v = static_cast<pmix_value_t *>(std::calloc(1, sizeof(pmix_value_t)));
    if (v == nullptr) return nullptr;
    std::vector<char *> ptrs;
    for (const auto &n : names) ptrs.push_back(const_cast<char *>(n.c_str()));
    pmix_data_array_t darray{PMIX_STRING, ptrs.size(), ptrs.empty() ? nullptr : ptrs.data()};
    if (PMIx_Value_load(v, &darray, PMIX_DATA_ARRAY) != PMIX_SUCCESS) {
        std::free(v);
        return nullptr;
    }
    return v;
}

namespace {

// The PMIX_PSET_NAMES entry of a query's results (one PMIX_QUERY_RESULTS
// holding the qualifiers, then the key found).
const pmix_value_t *names_in(const pmix_info_t *results, std::size_t n) {
    for (std::size_t k = 0; results != nullptr && k < n; ++k) {
        const pmix_value_t &r = results[k].value;
        if (r.type != PMIX_DATA_ARRAY || r.data.darray == nullptr ||
            r.data.darray->type != PMIX_INFO)
            continue;
        std::span<const pmix_info_t> inner(static_cast<const pmix_info_t *>(r.data.darray->array),
                                           r.data.darray->size);
        if (const pmix_info_t *i = mca::find_info(inner, PMIX_PSET_NAMES)) return &i->value;
    }
    return nullptr;
}

}  // namespace

pmix_status_t pset_names_async(const pmix_proc_t &target, PsetNamesDone done) {
    char key[] = PMIX_PSET_NAMES;
    char *keys[] = {key, nullptr};
    pmix_info_t qualifier;
    PMIX_INFO_LOAD(&qualifier, PMIX_PROCID, &target, PMIX_PROC);
    pmix_query_t q;
    std::memset(&q, 0, sizeof q);
    q.keys = keys;
    q.qualifiers = &qualifier;
    q.nqual = 1;
    auto cb = std::make_shared<PsetNamesDone>(std::move(done));
    pmix_status_t rc = query(
        &q, 1,
        [cb](pmix_status_t s, pmix_info_t *results, std::size_t n) {
            const pmix_value_t *v = nullptr;
            if (s == PMIX_SUCCESS) v = names_in(results, n);
            if (s == PMIX_SUCCESS && v == nullptr) s = PMIX_ERR_NOT_FOUND;
            (*cb)(s, const_cast<pmix_value_t *>(v));
            if (results != nullptr) {
                wire::destruct(PMIX_INFO, results, n);
                std::free(results);
            }
        },
        AttributeSupport{});
    PMIX_INFO_DESTRUCT(&qualifier);
    return rc;
}

}  // namespace pmixpp::client
