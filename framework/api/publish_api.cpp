// C entry points PMIx_Publish / PMIx_Lookup / PMIx_Unpublish and their _nb
// forms. The data store is the host's (server/publish.cpp): the client only
// carries the request and the answer. PMIX_TIMEOUT also bounds the wait here
// (request_util.hpp), in case the host never answers.
#include <pmix.h>

#include <cstdlib>
#include <cstring>

#include "client/request_util.hpp"
#include "wire/codec.hpp"

using pmixpp::client::post_request;
using pmixpp::client::request_gate;
using pmixpp::client::timeout_of;
using pmixpp::client::write_keys;
using pmixpp::runtime::Completion;
using pmixpp::wire::BodyReader;
using pmixpp::wire::BodyWriter;
using pmixpp::wire::Command;

namespace {

// A lookup answer: publishers and key=value pairs (parallel).
struct Found {
    pmix_status_t status = PMIX_ERR_TIMEOUT;
    std::vector<pmix_proc_t> procs;
    std::shared_ptr<pmixpp::wire::InfoArray> data;
};

Found read_found(pmix_status_t s, BodyReader &r) {
    Found f;
    f.status = s;
    f.data = std::make_shared<pmixpp::wire::InfoArray>();
    if (s != PMIX_SUCCESS && s != PMIX_ERR_PARTIAL_SUCCESS) return f;
    r.procs(f.procs);
    r.infos(*f.data);
    if (!r.finished() || f.procs.size() != f.data->size()) {
        f.status = PMIX_ERR_UNPACK_FAILURE;
        f.procs.clear();
        f.data->reset();
    }
    return f;
}

bool keys_ok(char **keys) {
    for (char **k = keys; k != nullptr && *k != nullptr; ++k) {
        if (strnlen(*k, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN) return false;
    }
    return true;
}

pmix_status_t publish_async(const pmix_info_t info[], size_t ninfo,
                            std::function<void(pmix_status_t)> done) {
    if (pmix_status_t rc = request_gate(); rc != PMIX_SUCCESS) return rc;
    if (info == nullptr || ninfo == 0) return PMIX_ERR_BAD_PARAM;
    auto body = BodyWriter().infos(info, ninfo).take();
    bool posted = post_request(Command::publish, std::move(body), timeout_of(info, ninfo),
                               [done](pmix_status_t s, BodyReader &) { done(s); });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t lookup_async(char **keys, const pmix_info_t info[], size_t ninfo,
                           std::function<void(Found)> done) {
    if (pmix_status_t rc = request_gate(); rc != PMIX_SUCCESS) return rc;
    if (keys == nullptr || keys[0] == nullptr || !keys_ok(keys)) return PMIX_ERR_BAD_PARAM;
    BodyWriter w;
    write_keys(w, keys).infos(info, info == nullptr ? 0 : ninfo);
    bool posted = post_request(Command::lookup, w.take(), timeout_of(info, ninfo),
                               [done](pmix_status_t s, BodyReader &r) { done(read_found(s, r)); });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t unpublish_async(char **keys, const pmix_info_t info[], size_t ninfo,
                              std::function<void(pmix_status_t)> done) {
    if (pmix_status_t rc = request_gate(); rc != PMIX_SUCCESS) return rc;
    if (!keys_ok(keys)) return PMIX_ERR_BAD_PARAM;
    BodyWriter w;
    write_keys(w, keys).infos(info, info == nullptr ? 0 : ninfo);
    bool posted = post_request(Command::unpublish, w.take(), timeout_of(info, ninfo),
                               [done](pmix_status_t s, BodyReader &) { done(s); });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

pmix_status_t wait_status(
    const std::function<pmix_status_t(std::function<void(pmix_status_t)>)> &start) {
    auto done = std::make_shared<Completion<pmix_status_t>>();
    pmix_status_t rc = start([done](pmix_status_t s) { done->complete(s); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    return done->value();
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo) {
    return wait_status([&](std::function<void(pmix_status_t)> done) {
        return publish_async(info, ninfo, std::move(done));
    });
}

PMIX_EXPORT pmix_status_t PMIx_Publish_nb(const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return publish_async(info, ninfo, [cbfunc, cbdata](pmix_status_t s) {
        if (cbfunc != nullptr) cbfunc(s, cbdata);
    });
}

PMIX_EXPORT pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata, const pmix_info_t info[],
                                      size_t ninfo) {
    if (data == nullptr || ndata == 0) {
        return request_gate() == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : request_gate();
    }
    std::vector<std::string> names;
    for (size_t i = 0; i < ndata; ++i) {
        names.emplace_back(data[i].key, strnlen(data[i].key, PMIX_MAX_KEYLEN));
        if (names.back().empty()) return PMIX_ERR_BAD_PARAM;
    }
    std::vector<char *> keys;
    for (auto &n : names) keys.push_back(n.data());
    keys.push_back(nullptr);
    auto done = std::make_shared<Completion<Found>>();
    pmix_status_t rc =
        lookup_async(keys.data(), info, ninfo, [done](Found f) { done->complete(std::move(f)); });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    Found &f = done->value();
    if (f.status != PMIX_SUCCESS && f.status != PMIX_ERR_PARTIAL_SUCCESS) return f.status;
    // Each requested key gets its value and publisher; a missing one stays PMIX_UNDEF.
    for (size_t i = 0; i < ndata; ++i) {
        for (size_t j = 0; j < f.data->size(); ++j) {
            pmix_info_t &got = f.data->data()[j];
            if (!PMIX_CHECK_KEY(&got, data[i].key)) continue;
            data[i].proc = f.procs[j];
            data[i].value = got.value;  // move the payload
            std::memset(&got.value, 0, sizeof got.value);
            break;
        }
    }
    return f.status;
}

PMIX_EXPORT pmix_status_t PMIx_Lookup_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                         pmix_lookup_cbfunc_t cbfunc, void *cbdata) {
    if (cbfunc == nullptr)
        return request_gate() == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : request_gate();
    return lookup_async(keys, info, ninfo, [cbfunc, cbdata](Found f) {
        // The pdata belong to the library: released when cbfunc returns.
        const size_t n = f.data->size();
        if (n == 0) {
            cbfunc(f.status == PMIX_SUCCESS ? PMIX_ERR_NOT_FOUND : f.status, nullptr, 0, cbdata);
            return;
        }
        auto *pdata = static_cast<pmix_pdata_t *>(std::calloc(n, sizeof(pmix_pdata_t)));
        if (pdata == nullptr) {
            cbfunc(PMIX_ERR_NOMEM, nullptr, 0, cbdata);
            return;
        }
        for (size_t j = 0; j < n; ++j) {
            pmix_info_t &got = f.data->data()[j];
            pdata[j].proc = f.procs[j];
            std::memcpy(pdata[j].key, got.key, PMIX_MAX_KEYLEN);
            pdata[j].value = got.value;
            std::memset(&got.value, 0, sizeof got.value);
        }
        cbfunc(f.status, pdata, n, cbdata);
        for (size_t j = 0; j < n; ++j) pmixpp::wire::destruct(PMIX_VALUE, &pdata[j].value, 1);
        std::free(pdata);
    });
}

PMIX_EXPORT pmix_status_t PMIx_Unpublish(char **keys, const pmix_info_t info[], size_t ninfo) {
    return wait_status([&](std::function<void(pmix_status_t)> done) {
        return unpublish_async(keys, info, ninfo, std::move(done));
    });
}

PMIX_EXPORT pmix_status_t PMIx_Unpublish_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return unpublish_async(keys, info, ninfo, [cbfunc, cbdata](pmix_status_t s) {
        if (cbfunc != nullptr) cbfunc(s, cbdata);
    });
}

}  // extern "C"
