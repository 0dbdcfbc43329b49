// C entry points of the client face (pmix.h): Init/Finalize/Abort, Put/Commit,
// Fence, Get, Store_internal. Blocking forms wait on their non-blocking form
// (runtime::Completion), which pumps the loop when called on the progress
// thread, so a blocking call made from a callback cannot deadlock.
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "client/client.hpp"
#include "client/get_refresh.hpp"
#include "client/groups.hpp"
#include "client/network.hpp"
#include "client/psets.hpp"
#include "mca/logging.hpp"
#include "runtime/init_state.hpp"
#include "runtime/progress.hpp"
#include "server/server.hpp"
#include "wire/codec.hpp"

using pmixpp::client::Client;
using pmixpp::client::GetDirectives;
using pmixpp::runtime::Completion;
using pmixpp::runtime::Face;
using pmixpp::runtime::ProgressEngine;

namespace {

// client_base_verbose (framework/mca/README.md, "Verbosity").
auto log() {
    return pmixpp::mca::framework_logger("client");
}

bool client_up() {
    return pmixpp::runtime::init_count(Face::client) > 0;
}
bool server_up() {
    return pmixpp::runtime::init_count(Face::server) > 0;
}
// A tool reads data of the jobs its server knows (docs/tools.md).
bool tool_up() {
    return pmixpp::runtime::init_count(Face::tool) > 0;
}

// A server process that is not also connected to a server of its own.
bool server_process() {
    return server_up() && !Client::instance().connected();
}

// The sets `target` belongs to, in a server process: its own ProcessSets.
std::vector<std::string> local_pset_names(const pmix_proc_t &target) {
    std::vector<std::string> names;
    ProgressEngine::instance().run_sync(
        [&] { names = pmixpp::server::Server::instance().process_sets().sets_of(target); });
    return names;
}

// PMIx_Get of PMIX_PSET_NAMES (client/psets.hpp): asked of the server each
// time, since the host defines and deletes sets while the job runs.
pmix_status_t pset_names(const pmix_proc_t &target, pmix_value_t **out) {
    if (server_process()) {
        const auto names = local_pset_names(target);
        if (names.empty()) return PMIX_ERR_NOT_FOUND;
        *out = pmixpp::client::pset_names_value(names);
        return *out != nullptr ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    struct Result {
        pmix_status_t status = PMIX_ERR_TIMEOUT;
        pmix_value_t *value = nullptr;
    };
    auto done = std::make_shared<Completion<Result>>();
    pmix_status_t rc =
        pmixpp::client::pset_names_async(target, [done](pmix_status_t s, pmix_value_t *v) {
            Result r{s, nullptr};
            if (s == PMIX_SUCCESS) {
                r.value = static_cast<pmix_value_t *>(std::calloc(1, sizeof(pmix_value_t)));
                if (r.value == nullptr ||
                    pmixpp::wire::copy(PMIX_VALUE, r.value, v, 1) != PMIX_SUCCESS) {
                    std::free(r.value);
                    r = Result{PMIX_ERR_NOMEM, nullptr};
                }
            }
            done->complete(r);
        });
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    *out = done->value().value;
    return done->value().status;
}

bool key_ok(const char *key) {
    return key != nullptr && strnlen(key, PMIX_MAX_KEYLEN + 1) <= PMIX_MAX_KEYLEN;
}

struct FenceArgs {
    std::vector<pmix_proc_t> procs;
    bool collect = false;
    std::uint32_t timeout = 0;
    bool ft = false;  // PMIX_GROUP_FT_COLLECTIVE: the server's tracker, never the barrier
    std::shared_ptr<pmixpp::wire::InfoArray> info;
};

FenceArgs fence_args(const pmix_proc_t *procs, size_t nprocs, const pmix_info_t *info,
                     size_t ninfo) {
    FenceArgs a;
    if (procs != nullptr) a.procs.assign(procs, procs + nprocs);
    for (size_t i = 0; info != nullptr && i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_COLLECT_DATA)) {
            a.collect = info[i].value.type == PMIX_UNDEF ||
                        (info[i].value.type == PMIX_BOOL && info[i].value.data.flag);
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_FT_COLLECTIVE)) {
            a.ft = info[i].value.type == PMIX_UNDEF ||
                   (info[i].value.type == PMIX_BOOL && info[i].value.data.flag);
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT)) {
            if (info[i].value.type == PMIX_INT && info[i].value.data.integer > 0) {
                a.timeout = static_cast<std::uint32_t>(info[i].value.data.integer);
            } else if (info[i].value.type == PMIX_UINT32) {
                a.timeout = info[i].value.data.uint32;
            }
        }
    }
    a.info = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(info, info == nullptr ? 0 : ninfo));
    return a;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo) {
    auto &client = Client::instance();
    std::lock_guard lock(client.init_mutex());
    if (client_up() || (server_up() && client.has_view())) {
        // Nested (OPENMPI-CONTRACT rule 9) or a server process as its own client.
        pmixpp::runtime::add_init(Face::client);
        if (proc != nullptr) *proc = client.self();
        return PMIX_SUCCESS;
    }
    pmix_status_t rc = client.init({info, info == nullptr ? 0 : ninfo}, proc);
    if (rc == PMIX_SUCCESS) {
        const pmix_proc_t me = client.self();
        log()->info("PMIx_Init: connected as {}:{}", me.nspace, me.rank);
        pmixpp::runtime::add_init(Face::client);
        pmixpp::client::stop_in_init_if_asked(client.self());  // debug.cpp
    }
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo) {
    auto &client = Client::instance();
    std::lock_guard lock(client.init_mutex());
    if (!client_up()) return PMIX_ERR_INIT;
    if (pmixpp::runtime::drop_init(Face::client) > 0) return PMIX_SUCCESS;
    const pmix_proc_t me = client.self();
    const pmix_status_t rc = client.finalize({info, info == nullptr ? 0 : ninfo});
    log()->info("PMIx_Finalize: {}:{} disconnected ({})", me.nspace, me.rank,
                PMIx_Error_string(rc));
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[],
                                     size_t nprocs) {
    auto &client = Client::instance();
    if (!client_up()) return PMIX_ERR_INIT;
    if (!client.connected()) return PMIX_ERR_NOT_SUPPORTED;
    auto body = pmixpp::wire::BodyWriter()
                    .i32(status)
                    .str(msg != nullptr ? msg : "")
                    .procs(procs, procs == nullptr ? 0 : nprocs)
                    .take();
    auto done = std::make_shared<Completion<pmix_status_t>>();
    ProgressEngine::instance().post([&client, done, b = std::move(body)]() mutable {
        client.request(pmixpp::wire::Command::abort, std::move(b),
                       [done](pmix_status_t s, pmixpp::wire::BodyReader &) { done->complete(s); });
    });
    done->wait();
    return done->value();
}

PMIX_EXPORT pmix_status_t PMIx_Put(pmix_scope_t scope, const pmix_key_t key, pmix_value_t *val) {
    if (!client_up() && !server_up()) return PMIX_ERR_INIT;
    if (!key_ok(key) || val == nullptr) return PMIX_ERR_BAD_PARAM;
    return Client::instance().put(scope, key, *val);
}

PMIX_EXPORT pmix_status_t PMIx_Commit(void) {
    if (!client_up() && !server_up()) return PMIX_ERR_INIT;
    return Client::instance().commit();
}

PMIX_EXPORT pmix_status_t PMIx_Store_internal(const pmix_proc_t *proc, const pmix_key_t key,
                                              pmix_value_t *val) {
    if (!client_up() && !server_up()) return PMIX_ERR_INIT;
    if (proc == nullptr || !key_ok(key) || val == nullptr) return PMIX_ERR_BAD_PARAM;
    return Client::instance().store_internal(*proc, key, *val);
}

PMIX_EXPORT pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!client_up() && !server_up()) return PMIX_ERR_INIT;
    if (procs == nullptr && nprocs > 0) return PMIX_ERR_BAD_PARAM;
    FenceArgs a = fence_args(procs, nprocs, info, ninfo);
    // A group address stands for its members (client/groups.hpp).
    if (auto rc = pmixpp::client::GroupTable::instance().translate(a.procs); rc != PMIX_SUCCESS)
        return rc;
    bool posted = ProgressEngine::instance().post([a, cbfunc, cbdata] {
        Client::instance().fence_async(a.procs, a.collect, a.timeout, a.info,
                                       [cbfunc, cbdata](pmix_status_t s) {
                                           if (cbfunc != nullptr) cbfunc(s, cbdata);
                                       });
    });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

PMIX_EXPORT pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo) {
    if (!client_up() && !server_up()) return PMIX_ERR_INIT;
    if (procs == nullptr && nprocs > 0) return PMIX_ERR_BAD_PARAM;
    FenceArgs a = fence_args(procs, nprocs, info, ninfo);
    // A group address stands for its members (client/groups.hpp).
    if (auto rc = pmixpp::client::GroupTable::instance().translate(a.procs); rc != PMIX_SUCCESS)
        return rc;
    if (auto rc =
            a.ft ? std::nullopt : Client::instance().fence_in_shm(a.procs, a.collect, a.timeout))
        return *rc;
    auto done = std::make_shared<Completion<pmix_status_t>>();
    bool posted = ProgressEngine::instance().post([a, done] {
        Client::instance().fence_async(a.procs, a.collect, a.timeout, a.info,
                                       [done](pmix_status_t s) { done->complete(s); });
    });
    if (!posted) return PMIX_ERR_INIT;
    done->wait();
    return done->value();
}

PMIX_EXPORT pmix_status_t PMIx_Get(const pmix_proc_t *proc, const pmix_key_t key,
                                   const pmix_info_t info[], size_t ninfo, pmix_value_t **val) {
    if (!client_up() && !server_up() && !tool_up()) return PMIX_ERR_INIT;
    if (val == nullptr || (key != nullptr && !key_ok(key))) return PMIX_ERR_BAD_PARAM;
    auto &client = Client::instance();
    const GetDirectives d = GetDirectives::from(info, ninfo);
    pmix_proc_t target = proc != nullptr ? *proc : client.self();
    std::span<const pmix_info_t> quals(info, info == nullptr ? 0 : ninfo);
    // Group keys, and a group member addressed by its group rank (client/groups.hpp).
    auto &groups = pmixpp::client::GroupTable::instance();
    if (auto rc = groups.get(target, key, quals, val)) return *rc;
    if (pmix_status_t rc = PMIX_SUCCESS; groups.translate_one(target, rc) && rc != PMIX_SUCCESS)
        return rc;

    // Fast path: in the caller's thread, under the reader lock.
    pmix_value_t *found = nullptr;
    // PMIX_GET_REFRESH_CACHE: a remote process's data is asked of the server again.
    const bool refresh =
        pmixpp::client::refresh_cache_requested(quals) && client.should_ask_server(target, key, d);
    // Process sets change while the job runs: always asked (client/psets.hpp).
    const bool psets = pmixpp::client::is_pset_names_key(key);
    pmix_status_t rc = psets     ? pset_names(target, &found)
                       : refresh ? PMIX_ERR_NOT_FOUND
                                 : client.lookup(target, key, quals, &found);
    if (rc == PMIX_ERR_NOT_FOUND && !refresh &&
        !psets)  // keys the network area derives (client/network.hpp)
        if (auto derived = pmixpp::client::network_get(target, key, quals, &found)) rc = *derived;
    if (rc != PMIX_SUCCESS && rc != PMIX_ERR_NOT_FOUND) return rc;
    if (rc == PMIX_ERR_NOT_FOUND && !psets && client.should_ask_server(target, key, d)) {
        struct Result {
            pmix_status_t status = PMIX_ERR_TIMEOUT;
            pmix_value_t *value = nullptr;
        };
        auto done = std::make_shared<Completion<Result>>();
        auto copied = std::make_shared<pmixpp::wire::InfoArray>(
            pmixpp::wire::InfoArray::copy_of(info, info == nullptr ? 0 : ninfo));
        std::string k = key != nullptr ? key : "";
        bool posted = ProgressEngine::instance().post([target, k, d, copied, done] {
            Client::instance().get_async(
                target, k, d, copied, [done](pmix_status_t s, pmix_value_t *v) {
                    Result r{s, nullptr};
                    if (s == PMIX_SUCCESS && v != nullptr) {
                        // get_async frees v: keep a copy.
                        r.value = static_cast<pmix_value_t *>(std::calloc(1, sizeof(pmix_value_t)));
                        if (r.value == nullptr ||
                            pmixpp::wire::copy(PMIX_VALUE, r.value, v, 1) != PMIX_SUCCESS) {
                            std::free(r.value);
                            r = Result{PMIX_ERR_NOMEM, nullptr};
                        }
                    }
                    done->complete(r);
                });
        });
        if (!posted) return PMIX_ERR_INIT;
        done->wait();
        rc = done->value().status;
        found = done->value().value;
    }
    if (rc != PMIX_SUCCESS) return rc;
    if (d.static_values) {
        if (*val == nullptr) {
            pmixpp::wire::destruct(PMIX_VALUE, found, 1);
            std::free(found);
            return PMIX_ERR_BAD_PARAM;
        }
        **val = *found;  // move the payload into the caller's storage
        std::free(found);
        return PMIX_SUCCESS;
    }
    *val = found;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const pmix_key_t key,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_value_cbfunc_t cbfunc, void *cbdata) {
    if (!client_up() && !server_up() && !tool_up()) return PMIX_ERR_INIT;
    if (cbfunc == nullptr || (key != nullptr && !key_ok(key))) return PMIX_ERR_BAD_PARAM;
    auto &client = Client::instance();
    const GetDirectives d = GetDirectives::from(info, ninfo);
    pmix_proc_t target = proc != nullptr ? *proc : client.self();
    // Group keys, and a group member addressed by its group rank, as in PMIx_Get.
    auto &groups = pmixpp::client::GroupTable::instance();
    pmix_value_t *group_value = nullptr;
    std::span<const pmix_info_t> quals(info, info == nullptr ? 0 : ninfo);
    if (auto rc = groups.get(target, key, quals, &group_value)) {
        const pmix_status_t st = *rc;
        return ProgressEngine::instance().post([st, group_value, cbfunc, cbdata] {
            cbfunc(st, group_value, cbdata);
            if (group_value != nullptr) {
                pmixpp::wire::destruct(PMIX_VALUE, group_value, 1);
                std::free(group_value);
            }
        })
                   ? PMIX_SUCCESS
                   : PMIX_ERR_INIT;
    }
    if (pmix_status_t rc = PMIX_SUCCESS; groups.translate_one(target, rc) && rc != PMIX_SUCCESS)
        return rc;
    if (pmixpp::client::is_pset_names_key(key)) {  // client/psets.hpp
        if (!server_process())
            return pmixpp::client::pset_names_async(
                target,
                [cbfunc, cbdata](pmix_status_t s, pmix_value_t *v) { cbfunc(s, v, cbdata); });
        return ProgressEngine::instance().post([target, cbfunc, cbdata] {
            const auto names = pmixpp::server::Server::instance().process_sets().sets_of(target);
            pmix_value_t *v = names.empty() ? nullptr : pmixpp::client::pset_names_value(names);
            cbfunc(names.empty()  ? PMIX_ERR_NOT_FOUND
                   : v == nullptr ? PMIX_ERR_NOMEM
                                  : PMIX_SUCCESS,
                   v, cbdata);
            if (v != nullptr) {
                pmixpp::wire::destruct(PMIX_VALUE, v, 1);
                std::free(v);
            }
        })
                   ? PMIX_SUCCESS
                   : PMIX_ERR_INIT;
    }
    auto copied = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(info, info == nullptr ? 0 : ninfo));
    std::string k = key != nullptr ? key : "";
    bool posted = ProgressEngine::instance().post([target, k, d, copied, cbfunc, cbdata] {
        // The value belongs to the library: released when cbfunc returns.
        Client::instance().get_async(
            target, k, d, copied,
            [cbfunc, cbdata](pmix_status_t s, pmix_value_t *v) { cbfunc(s, v, cbdata); });
    });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

}  // extern "C"
