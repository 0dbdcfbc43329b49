#include "server/resources.hpp"

#include <cstring>
#include <utility>

namespace pmixpp::server {

namespace {

std::string key_of(const pmix_info_t &info) {
    return std::string(info.key, strnlen(info.key, sizeof info.key));
}

bool keyed(std::span<const pmix_info_t> info) {
    for (const auto &i : info) {
        if (i.key[0] == '\0') return false;
    }
    return true;
}

}  // namespace

Resources::Resources(StoreFn store) : store_(std::move(store)) {}

pmix_status_t Resources::add(std::span<const pmix_info_t> info) {
    if (!keyed(info)) return PMIX_ERR_BAD_PARAM;
    std::map<std::string, mca::InfoArray> added;
    for (const auto &i : info) {
        auto one = mca::InfoArray::copy_of(&i, 1);
        if (one.empty()) return PMIX_ERR_NOMEM;
        added[key_of(i)] = std::move(one);
    }
    // The jobs already registered: what they do not name themselves.
    pmix_status_t first_error = PMIX_SUCCESS;
    for (const auto &[nspace, own] : own_keys_) {
        const auto theirs = not_named(added, own);
        if (theirs.empty()) continue;
        auto st = store_(nspace, theirs.span());
        if (!st.ok() && first_error == PMIX_SUCCESS) first_error = st.code();
    }
    for (auto &[key, entry] : added) entries_[key] = std::move(entry);
    return first_error;
}

pmix_status_t Resources::remove(std::span<const pmix_info_t> info) {
    if (info.empty() || !keyed(info)) return PMIX_ERR_BAD_PARAM;
    std::size_t removed = 0;
    for (const auto &i : info) removed += entries_.erase(key_of(i));
    return removed == 0 ? PMIX_ERR_NOT_FOUND : PMIX_SUCCESS;
}

mca::InfoArray Resources::job_registered(const std::string &nspace,
                                         std::span<const pmix_info_t> info) {
    std::set<std::string> own;
    for (const auto &i : info) own.insert(key_of(i));
    auto out = not_named(entries_, own);
    own_keys_[nspace].merge(own);
    return out;
}

mca::InfoArray Resources::not_named(const std::map<std::string, mca::InfoArray> &entries,
                                    const std::set<std::string> &own) {
    mca::InfoArray out;
    for (const auto &[key, entry] : entries) {
        if (own.count(key) != 0) continue;
        pmix_info_t copy;
        PMIX_INFO_CONSTRUCT(&copy);
        PMIX_INFO_XFER(&copy, entry.data());
        out.adopt(copy);
    }
    return out;
}

void Resources::clear() {
    entries_.clear();
    own_keys_.clear();
}

}  // namespace pmixpp::server
