// Thread-shifting the completions of the upcalls that hand back data:
// lookup (pmix_lookup_cbfunc_t) and query / job_control (pmix_info_cbfunc_t).
// Same contract as upcalls.hpp: the host may call back on any thread, at any
// time, or inline; what it hands us is deep-copied in the callback, and the
// continuation runs exactly once on the progress thread, after calling the
// host's release_fn there. Return codes of the upcall: PMIX_SUCCESS = wait for the callback,
// PMIX_OPERATION_SUCCEEDED = done (no data), anything else = failed.
//
// Also: building the info arrays passed up (HostInfo).
#pragma once

#include <pmix_server.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "runtime/progress.hpp"
#include "wire/codec.hpp"
#include "wire/message.hpp"

namespace pmixpp::server {

// Lookup results: publishers and key=value infos, parallel.
struct LookupResult {
    std::vector<pmix_proc_t> procs;
    wire::InfoArray data;
};
using LookupDone = std::function<void(pmix_status_t, LookupResult)>;
using InfoDone = std::function<void(pmix_status_t, wire::InfoArray)>;

// An info array built for an upcall: owns its values (an mca::InfoArray),
// stays valid until the continuation ran (hold it in a shared_ptr).
class HostInfo {
  public:
    HostInfo() = default;
    HostInfo(const HostInfo &) = delete;
    HostInfo &operator=(const HostInfo &) = delete;
    // Deep copies of the caller's infos, except those keys in `drop`.
    void add_copies(std::span<const pmix_info_t> from, std::initializer_list<const char *> drop) {
        for (const auto &i : from) {
            bool skip = false;
            for (const char *k : drop) skip = skip || PMIX_CHECK_KEY(&i, k);
            if (skip) continue;
            pmix_info_t copy{};
            if (wire::copy(PMIX_INFO, &copy, &i, 1) == PMIX_SUCCESS) info_.adopt(copy);
        }
    }
    void add_uint32(const char *key, std::uint32_t v) { load(key, &v, PMIX_UINT32); }
    // The caller's directives with its identity as the host must see it: any
    // PMIX_USERID / PMIX_GRPID it sent replaced by the ones the server knows.
    void add_copies_as(std::span<const pmix_info_t> from, std::uint32_t uid, std::uint32_t gid) {
        add_copies(from, {PMIX_USERID, PMIX_GRPID});
        add_uint32(PMIX_USERID, uid);
        add_uint32(PMIX_GRPID, gid);
    }
    // Takes over `i`'s value (left as PMIX_UNDEF).
    void adopt(pmix_info_t &i) { info_.adopt(i); }
    std::span<const pmix_info_t> span() const { return info_.span(); }
    pmix_info_t *data() { return info_.data(); }
    std::size_t size() const { return info_.size(); }

  private:
    void load(const char *key, const void *v, pmix_data_type_t t) {
        pmix_info_t info{};
        PMIx_Info_load(&info, key, v, t);
        info_.adopt(info);
    }
    mca::InfoArray info_;
};

// A NULL-terminated char** over strings it owns.
class KeyList {
  public:
    explicit KeyList(std::vector<std::string> keys) : keys_(std::move(keys)) {
        for (auto &k : keys_) ptrs_.push_back(k.data());
        ptrs_.push_back(nullptr);
    }
    char **argv() { return ptrs_.data(); }
    const std::vector<std::string> &keys() const { return keys_; }

  private:
    std::vector<std::string> keys_;
    std::vector<char *> ptrs_;
};

namespace detail {
struct LookupShift {
    LookupDone done;
};
struct InfoShift {
    InfoDone done;
};
inline void lookup_shift(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata) {
    auto *s = static_cast<LookupShift *>(cbdata);
    LookupResult r;
    if (data != nullptr && ndata > 0) {
        auto *arr = static_cast<pmix_info_t *>(std::calloc(ndata, sizeof(pmix_info_t)));
        std::size_t n = 0;
        for (std::size_t i = 0; arr != nullptr && i < ndata; ++i) {
            std::memcpy(arr[n].key, data[i].key, PMIX_MAX_KEYLEN);
            if (wire::copy(PMIX_VALUE, &arr[n].value, &data[i].value, 1) != PMIX_SUCCESS) continue;
            r.procs.push_back(data[i].proc);
            ++n;
        }
        if (arr != nullptr && n == 0) {
            std::free(arr);
            arr = nullptr;
        }
        r.data = wire::InfoArray(arr, n);
    }
    auto shared = std::make_shared<LookupResult>(std::move(r));  // tasks must be copyable
    runtime::ProgressEngine::instance().post([s, status, shared] {
        s->done(status, std::move(*shared));
        delete s;
    });
}
inline void info_shift(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                       pmix_release_cbfunc_t relfn, void *relcbdata) {
    auto *s = static_cast<InfoShift *>(cbdata);
    wire::InfoArray copy = wire::InfoArray::copy_of(info, info == nullptr ? 0 : ninfo);
    auto shared = std::make_shared<wire::InfoArray>(std::move(copy));
    // Released on the progress thread, not inside the host's callback (upcalls.hpp).
    const bool posted =
        runtime::ProgressEngine::instance().post([s, status, shared, relfn, relcbdata] {
            if (relfn != nullptr) relfn(relcbdata);
            s->done(status, std::move(*shared));
            delete s;
        });
    if (!posted && relfn != nullptr) relfn(relcbdata);
}
}  // namespace detail

template <class Invoke>
void call_host_lookup(Invoke &&invoke, LookupDone done) {
    auto *s = new detail::LookupShift{std::move(done)};
    const pmix_status_t rc = invoke(&detail::lookup_shift, s);
    if (rc == PMIX_SUCCESS) return;
    LookupDone fn = std::move(s->done);
    delete s;
    fn(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_ERR_NOT_FOUND : rc, {});
}

template <class Invoke>
void call_host_info(Invoke &&invoke, InfoDone done) {
    auto *s = new detail::InfoShift{std::move(done)};
    const pmix_status_t rc = invoke(&detail::info_shift, s);
    if (rc == PMIX_SUCCESS) return;
    InfoDone fn = std::move(s->done);
    delete s;
    fn(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, {});
}

}  // namespace pmixpp::server
