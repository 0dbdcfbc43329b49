// pmixrun's credential upcalls: see credentials.hpp.
#include "credentials.hpp"

#include <sys/random.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace pmixrun {

namespace {

constexpr const char kType[] = "pmixrun";
constexpr const char kMagic[] = "PMIXRUN1";
constexpr std::size_t kRandom = 32;

struct Holder {
    pmix_proc_t proc{};
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
};

std::mutex g_mutex;
std::map<std::string, Holder> g_issued;  // credential bytes -> its holder

std::uint32_t uint_of(const pmix_info_t dirs[], size_t n, const char *key, bool &found) {
    for (size_t i = 0; dirs != nullptr && i < n; ++i) {
        if (PMIX_CHECK_KEY(&dirs[i], key) && dirs[i].value.type == PMIX_UINT32) {
            found = true;
            return dirs[i].value.data.uint32;
        }
    }
    return 0;
}

// Whether a PMIX_CRED_TYPE directive (a comma list) allows ours; no directive: yes.
bool type_wanted(const pmix_info_t dirs[], size_t n) {
    for (size_t i = 0; dirs != nullptr && i < n; ++i) {
        if (!PMIX_CHECK_KEY(&dirs[i], PMIX_CRED_TYPE)) continue;
        if (dirs[i].value.type != PMIX_STRING || dirs[i].value.data.string == nullptr) return false;
        std::string list = dirs[i].value.data.string;
        std::size_t start = 0;
        while (start <= list.size()) {
            std::size_t comma = list.find(',', start);
            if (comma == std::string::npos) comma = list.size();
            if (list.compare(start, comma - start, kType) == 0 && comma - start == sizeof kType - 1)
                return true;
            start = comma + 1;
        }
        return false;
    }
    return true;
}

pmix_status_t get_credential(const pmix_proc_t *proc, const pmix_info_t directives[], size_t ndirs,
                             pmix_credential_cbfunc_t cbfunc, void *cbdata) {
    if (proc == nullptr || cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    if (!type_wanted(directives, ndirs)) return PMIX_ERR_NOT_SUPPORTED;
    bool has_uid = false, has_gid = false;
    Holder h;
    h.proc = *proc;
    h.uid = uint_of(directives, ndirs, PMIX_USERID, has_uid);
    h.gid = uint_of(directives, ndirs, PMIX_GRPID, has_gid);
    if (!has_uid || !has_gid) return PMIX_ERR_BAD_PARAM;  // the library always adds them
    std::string cred(kMagic, sizeof kMagic - 1);
    unsigned char random[kRandom];
    std::size_t got = 0;
    while (got < kRandom) {
        const ssize_t n = getrandom(random + got, kRandom - got, 0);
        if (n <= 0) return PMIX_ERR_OUT_OF_RESOURCE;
        got += static_cast<std::size_t>(n);
    }
    cred.append(reinterpret_cast<const char *>(random), kRandom);
    {
        std::lock_guard lock(g_mutex);
        g_issued[cred] = h;
    }
    pmix_byte_object_t bo{cred.data(), cred.size()};
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_CRED_TYPE, kType, PMIX_STRING);
    cbfunc(PMIX_SUCCESS, &bo, &info, 1, cbdata);  // the library copies both
    PMIX_INFO_DESTRUCT(&info);
    return PMIX_SUCCESS;
}

pmix_status_t validate_credential(const pmix_proc_t *proc, const pmix_byte_object_t *cred,
                                  const pmix_info_t directives[], size_t ndirs,
                                  pmix_validation_cbfunc_t cbfunc, void *cbdata) {
    (void)proc, (void)directives, (void)ndirs;
    if (cred == nullptr || cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    Holder h;
    bool known = false;
    if (cred->bytes != nullptr) {
        std::lock_guard lock(g_mutex);
        auto it = g_issued.find(std::string(cred->bytes, cred->size));
        if (it != g_issued.end()) {
            h = it->second;
            known = true;
        }
    }
    if (!known) {
        pmix_info_t why;
        PMIX_INFO_LOAD(&why, PMIX_EVENT_TEXT_MESSAGE, "not a credential this pmixrun issued",
                       PMIX_STRING);
        cbfunc(PMIX_ERR_INVALID_CRED, &why, 1, cbdata);
        PMIX_INFO_DESTRUCT(&why);
        return PMIX_SUCCESS;
    }
    pmix_info_t info[4];
    PMIX_INFO_LOAD(&info[0], PMIX_USERID, &h.uid, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_GRPID, &h.gid, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[2], PMIX_PROCID, &h.proc, PMIX_PROC);
    PMIX_INFO_LOAD(&info[3], PMIX_CRED_TYPE, kType, PMIX_STRING);
    cbfunc(PMIX_SUCCESS, info, 4, cbdata);
    for (auto &i : info) PMIX_INFO_DESTRUCT(&i);
    return PMIX_SUCCESS;
}

}  // namespace

void install_credentials(pmix_server_module_t &module) {
    module.get_credential = get_credential;
    module.validate_credential = validate_credential;
}

}  // namespace pmixrun
