// Calling the host's upcalls and thread-shifting their completions.
//
// The host may call a completion callback on any thread, at any time, or
// inline before the upcall returns (DESIGN.md §5). Each helper gives the host
// a C callback that copies what it was handed and posts the continuation to
// the progress thread (which then calls the host's release function, if it
// gave one), and handles the upcall's return code:
//   PMIX_SUCCESS              -> the host will call back; wait for it
//   PMIX_OPERATION_SUCCEEDED  -> done now, successfully; no callback comes
//   anything else             -> done now with that error; no callback comes
// The continuation runs exactly once, on the progress thread.
#pragma once

#include <pmix_server.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/progress.hpp"

namespace pmixpp::server {

// The host's server module (PMIx_server_init), shared by the services:
// host->fence_nb etc. A NULL entry: the host does not provide that upcall.
class HostUpcalls {
  public:
    void set(const pmix_server_module_t *module) {
        module_ = pmix_server_module_t{};
        if (module != nullptr) module_ = *module;  // the 4.x layout, 224 bytes (contract rule 3)
    }
    const pmix_server_module_t *operator->() const { return &module_; }

  private:
    pmix_server_module_t module_{};
};

// Arrays handed to an upcall stay valid until its completion ran: the
// continuation holds the shared_ptr.
struct HostArgs {
    std::vector<pmix_proc_t> procs;
    std::vector<pmix_info_t> info;
    ~HostArgs() {
        for (auto &i : info) PMIx_Value_destruct(&i.value);
    }
    void add_bool(const char *key, bool v) { load(key, &v, PMIX_BOOL); }
    void add_int(const char *key, int v) { load(key, &v, PMIX_INT); }
    void add_uint32(const char *key, std::uint32_t v) { load(key, &v, PMIX_UINT32); }
    void add_string(const char *key, const std::string &v) { load(key, v.c_str(), PMIX_STRING); }
    // `v` points to a value of type `t` (PMIx_Info_load copies it).
    void load(const char *key, const void *v, pmix_data_type_t t) {
        info.emplace_back();
        std::memset(&info.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_load(&info.back(), key, v, t);
    }
    // A deep copy of the caller's `from`.
    void add_copy(const pmix_info_t &from) {
        info.emplace_back();
        std::memset(&info.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_xfer(&info.back(), &from);
    }
    pmix_info_t *info_data() { return info.empty() ? nullptr : info.data(); }
    std::size_t info_size() const { return info.size(); }
};

using OpDone = std::function<void(pmix_status_t)>;
using ModexDone = std::function<void(pmix_status_t, std::vector<std::uint8_t>)>;

namespace detail {
struct OpShift {
    OpDone done;
};
struct ModexShift {
    ModexDone done;
};
inline void op_shift(pmix_status_t status, void *cbdata) {
    auto *s = static_cast<OpShift *>(cbdata);
    runtime::ProgressEngine::instance().post([s, status] {
        s->done(status);
        delete s;
    });
}
inline void modex_shift(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                        pmix_release_cbfunc_t relfn, void *relcbdata) {
    auto *s = static_cast<ModexShift *>(cbdata);
    std::vector<std::uint8_t> copy;
    if (data != nullptr && ndata > 0) copy.assign(data, data + ndata);
    // The release function runs on the progress thread, never inside this
    // callback: a host may call us holding a lock its release function takes
    // (Slurm's fence_nb completion holds its collective's lock; its release
    // function locks it again).
    const bool posted = runtime::ProgressEngine::instance().post(
        [s, status, c = std::move(copy), relfn, relcbdata]() mutable {
            if (relfn != nullptr) relfn(relcbdata);
            s->done(status, std::move(c));
            delete s;
        });
    if (!posted && relfn != nullptr) relfn(relcbdata);
}
}  // namespace detail

template <class Invoke>
void call_host_op(Invoke &&invoke, OpDone done) {
    auto *s = new detail::OpShift{std::move(done)};
    const pmix_status_t rc = invoke(&detail::op_shift, s);
    if (rc == PMIX_SUCCESS) return;
    OpDone fn = std::move(s->done);
    delete s;
    fn(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc);
}

template <class Invoke>
void call_host_modex(Invoke &&invoke, ModexDone done) {
    auto *s = new detail::ModexShift{std::move(done)};
    const pmix_status_t rc = invoke(&detail::modex_shift, s);
    if (rc == PMIX_SUCCESS) return;
    ModexDone fn = std::move(s->done);
    delete s;
    fn(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, {});
}

}  // namespace pmixpp::server
