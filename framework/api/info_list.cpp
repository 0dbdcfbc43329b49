// PMIx_Info_list_*: an opaque list for building pmix_info_t arrays.
//
// The void* handed to the caller is an InfoList. Entries added with _add and
// _xfer are deep copies owned by the list; an entry added with _insert is the
// caller's pmix_info_t itself (not copied, never released by the list).
// _convert always produces deep copies in a malloc'd array the caller frees
// with PMIX_DATA_ARRAY_DESTRUCT / PMIx_Data_array_destruct.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "pmix.h"

namespace {

struct InfoList {
    struct Entry {
        pmix_info_t owned;            // valid when borrowed == nullptr
        const pmix_info_t *borrowed;  // caller-owned entry from _insert
        const pmix_info_t &info() const { return borrowed ? *borrowed : owned; }
    };
    std::vector<std::unique_ptr<Entry>> entries;

    ~InfoList() {
        for (auto &e : entries) {
            if (!e->borrowed) PMIx_Value_destruct(&e->owned.value);
        }
    }

    Entry *add_owned() {
        auto entry = std::make_unique<Entry>();
        std::memset(&entry->owned, 0, sizeof entry->owned);
        entry->borrowed = nullptr;
        entries.push_back(std::move(entry));
        return entries.back().get();
    }
};

}  // namespace

extern "C" {

void *PMIx_Info_list_start(void) {
    return new (std::nothrow) InfoList;
}

pmix_status_t PMIx_Info_list_add(void *ptr, const char *key, const void *value,
                                 pmix_data_type_t type) {
    if (ptr == nullptr || key == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *list = static_cast<InfoList *>(ptr);
    InfoList::Entry *e = list->add_owned();
    pmix_status_t rc = PMIx_Info_load(&e->owned, key, value, type);
    if (rc != PMIX_SUCCESS) list->entries.pop_back();
    return rc;
}

pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info) {
    if (ptr == nullptr || info == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *list = static_cast<InfoList *>(ptr);
    auto entry = std::make_unique<InfoList::Entry>();
    std::memset(&entry->owned, 0, sizeof entry->owned);
    entry->borrowed = info;
    list->entries.push_back(std::move(entry));
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Info_list_xfer(void *ptr, const pmix_info_t *info) {
    if (ptr == nullptr || info == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *list = static_cast<InfoList *>(ptr);
    InfoList::Entry *e = list->add_owned();
    pmix_status_t rc = PMIx_Info_xfer(&e->owned, info);
    // The list owns its copy even when the source was persistent.
    e->owned.flags &=
        ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT | PMIX_INFO_ARRAY_END);
    if (rc == PMIX_SUCCESS && (info->flags & PMIX_INFO_PERSISTENT)) {
        rc = PMIx_Value_xfer(&e->owned.value, &info->value);
    }
    if (rc != PMIX_SUCCESS) {
        std::memset(&e->owned.value, 0, sizeof e->owned.value);
        list->entries.pop_back();
    }
    return rc;
}

pmix_status_t PMIx_Info_list_convert(void *ptr, pmix_data_array_t *par) {
    if (ptr == nullptr || par == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *list = static_cast<InfoList *>(ptr);
    const std::size_t n = list->entries.size();
    par->type = PMIX_INFO;
    par->size = 0;
    par->array = nullptr;
    if (n == 0) return PMIX_ERR_EMPTY;
    auto *array = static_cast<pmix_info_t *>(std::calloc(n, sizeof(pmix_info_t)));
    if (array == nullptr) return PMIX_ERR_NOMEM;
    for (std::size_t i = 0; i < n; ++i) {
        const pmix_info_t &src = list->entries[i]->info();
        std::memcpy(array[i].key, src.key, sizeof array[i].key);
        array[i].key[PMIX_MAX_KEYLEN] = '\0';
        array[i].flags = src.flags & ~static_cast<pmix_info_directives_t>(PMIX_INFO_PERSISTENT |
                                                                          PMIX_INFO_ARRAY_END);
        pmix_status_t rc = PMIx_Value_xfer(&array[i].value, &src.value);
        if (rc != PMIX_SUCCESS) {
            pmix_data_array_t partial{PMIX_INFO, i, array};
            PMIx_Data_array_destruct(&partial);
            return rc;
        }
    }
    array[n - 1].flags |= PMIX_INFO_ARRAY_END;
    par->size = n;
    par->array = array;
    return PMIX_SUCCESS;
}

void PMIx_Info_list_release(void *ptr) {
    delete static_cast<InfoList *>(ptr);
}

}  // extern "C"
