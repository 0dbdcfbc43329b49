// C entry points of the server face (pmix_server.h). Each checks its
// arguments, copies what it needs and runs the work on the progress thread
// (server.hpp). Host callbacks given to these functions are called exactly
// once, from the progress thread.
#include <pmix_server.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

#include "mca/logging.hpp"
#include "runtime/init_state.hpp"
#include "runtime/progress.hpp"
#include "client/client.hpp"
#include "event/attributes.hpp"
#include "evcache/evcache_base.hpp"
#include "plog/plog_base.hpp"
#include "pmixpp/mca/info.hpp"
#include "server/server.hpp"

using pmixpp::runtime::Face;
using pmixpp::runtime::ProgressEngine;
using pmixpp::server::Server;

namespace {

std::mutex g_init_mutex;
std::shared_ptr<pmixpp::gds_base::Datastore> g_store;
std::shared_ptr<pmixpp::ptl_base::Transports> g_transports;
pid_t g_server_pid = 0;  // the process that ran PMIx_server_init (see setup_fork)

auto log() {
    return pmixpp::mca::framework_logger("server");
}

bool server_up() {
    return pmixpp::runtime::init_count(Face::server) > 0;
}

std::string nspace_of(const char *ns) {
    return std::string(ns, strnlen(ns, PMIX_MAX_NSLEN));
}

// Sets or replaces NAME=value in a malloc'd argv-style array.
pmix_status_t set_env(char ***env, const std::string &name, const std::string &value) {
    std::string entry = name + "=" + value;
    std::size_t n = 0;
    if (*env != nullptr) {
        for (; (*env)[n] != nullptr; ++n) {
            if (std::strncmp((*env)[n], entry.c_str(), name.size() + 1) == 0) {
                char *copy = strdup(entry.c_str());
                if (copy == nullptr) return PMIX_ERR_NOMEM;
                std::free((*env)[n]);
                (*env)[n] = copy;
                return PMIX_SUCCESS;
            }
        }
    }
    auto **grown = static_cast<char **>(std::realloc(*env, (n + 2) * sizeof(char *)));
    if (grown == nullptr) return PMIX_ERR_NOMEM;
    grown[n] = strdup(entry.c_str());
    grown[n + 1] = nullptr;
    *env = grown;
    return grown[n] != nullptr ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

// The event cache size the host asked for ("pmix.evcache.size").
std::optional<std::size_t> cache_size_of(std::span<const pmix_info_t> info) {
    for (const auto &i : info) {
        if (!PMIX_CHECK_KEY(&i, pmixpp::events::kServerCacheSize)) continue;
        switch (i.value.type) {
            case PMIX_UINT32:
                return i.value.data.uint32;
            case PMIX_UINT64:
                return i.value.data.uint64;
            case PMIX_SIZE:
                return i.value.data.size;
            case PMIX_INT:
                if (i.value.data.integer >= 0)
                    return static_cast<std::size_t>(i.value.data.integer);
                break;
            default:
                break;
        }
        log()->warn("PMIx_server_init: {} must be a non-negative integer; ignored",
                    pmixpp::events::kServerCacheSize);
    }
    return std::nullopt;
}

// The plog channels (framework/plog); none is fine: every entry then goes
// to the host's log upcall.
std::shared_ptr<pmixpp::plog_base::Channels> open_log_channels() {
    auto opened = pmixpp::plog_base::open(pmixpp::mca::ComponentRepository::process_wide());
    if (!opened) {
        pmixpp::mca::framework_logger("plog")->info("PMIx_server_init: no log channel: {}",
                                                    opened.error().message);
        return nullptr;
    }
    return std::make_shared<pmixpp::plog_base::Channels>(std::move(opened).value());
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[],
                                           size_t ninfo) {
    std::lock_guard lock(g_init_mutex);
    if (server_up()) {
        pmixpp::runtime::add_init(Face::server);
        return PMIX_SUCCESS;
    }
    auto store = pmixpp::gds_base::Datastore::acquire();
    if (!store) {
        log()->error("PMIx_server_init: {}", store.status().message());
        return store.status().code();
    }
    auto transports = pmixpp::ptl_base::Transports::acquire();
    if (!transports) {
        log()->error("PMIx_server_init: {}", transports.status().message());
        return transports.status().code();
    }
    std::span<const pmix_info_t> span(info, info == nullptr ? 0 : ninfo);
    auto cache = pmixpp::evcache_base::EventCache::open(cache_size_of(span));
    auto log_channels = open_log_channels();
    const bool gateway = pmixpp::mca::info_flag(span, PMIX_SERVER_GATEWAY).value_or(false);
    auto &engine = ProgressEngine::instance();
    const bool external = pmixpp::mca::info_flag(span, PMIX_EXTERNAL_PROGRESS).value_or(false);
    if (auto st = engine.acquire(external); !st.ok()) {
        log()->error("PMIx_server_init: {}", st.message());
        return st.code();
    }
    pmixpp::mca::Status started;
    engine.run_sync([&] {
        Server::instance().set_event_cache(std::move(cache));
        started = Server::instance().start(module, span, transports.value(), store.value());
        if (started.ok()) Server::instance().logging().start(log_channels, gateway);
    });
    if (!started.ok()) {
        log()->error("PMIx_server_init: {}", started.message());
        engine.release();
        return started.code();
    }
    g_store = store.value();
    g_transports = transports.value();
    pmix_proc_t self{};
    std::shared_ptr<pmixpp::gds_base::LazyModex> pending;
    engine.run_sync([&] {
        self = Server::instance().self();
        pending = Server::instance().pending_modex();
    });
    pmixpp::client::Client::instance().attach_server_view(g_store, self, std::move(pending));
    pmixpp::runtime::add_init(Face::server);
    g_server_pid = getpid();
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_server_finalize(void) {
    std::lock_guard lock(g_init_mutex);
    if (!server_up()) return PMIX_ERR_INIT;
    if (pmixpp::runtime::drop_init(Face::server) > 0) return PMIX_SUCCESS;
    auto &engine = ProgressEngine::instance();
    pmixpp::client::Client::instance().detach_server_view();
    engine.run_sync([] { Server::instance().stop(); });
    engine.release();
    g_store.reset();
    g_transports.reset();
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace, int nlocalprocs,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!server_up()) return PMIX_ERR_INIT;
    if (nspace == nullptr) return PMIX_ERR_BAD_PARAM;
    auto copied = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(info, info == nullptr ? 0 : ninfo));
    std::string ns = nspace_of(nspace);
    // setup_fork's templates go now, before the registration is posted
    // (server/fork_env.hpp); the registration builds the namespace's anew.
    const std::uint64_t epoch = Server::instance().fork_environments().invalidate();
    auto work = [ns, nlocalprocs, copied, epoch] {
        auto &server = Server::instance();
        const pmix_status_t rc = server.register_nspace(ns, nlocalprocs, copied->span());
        if (rc == PMIX_SUCCESS) server.keep_fork_template(ns, epoch);
        return rc;
    };
    if (cbfunc == nullptr) {
        pmix_status_t rc = PMIX_ERROR;
        ProgressEngine::instance().run_sync([&] { rc = work(); });
        return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
    }
    if (!ProgressEngine::instance().post([work, cbfunc, cbdata] { cbfunc(work(), cbdata); })) {
        return PMIX_ERR_INIT;
    }
    return PMIX_SUCCESS;
}

// Resources (server/resources.hpp, docs/resources.md): job-level information
// for every job, the namespace's own registration overriding it.
namespace {

pmix_status_t resources_call(pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                             void *cbdata, bool add) {
    if (!server_up()) return PMIX_ERR_INIT;
    if (info == nullptr && ninfo > 0) return PMIX_ERR_BAD_PARAM;
    auto copied = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(info, info == nullptr ? 0 : ninfo));
    if (copied->size() != ninfo) return PMIX_ERR_NOMEM;
    auto work = [copied, add] {
        auto &resources = Server::instance().resources();
        return add ? resources.add(copied->span()) : resources.remove(copied->span());
    };
    if (cbfunc == nullptr) {
        pmix_status_t rc = PMIX_ERROR;
        if (!ProgressEngine::instance().run_sync([&] { rc = work(); })) return PMIX_ERR_INIT;
        return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
    }
    if (!ProgressEngine::instance().post([work, cbfunc, cbdata] { cbfunc(work(), cbdata); })) {
        return PMIX_ERR_INIT;
    }
    return PMIX_SUCCESS;
}

}  // namespace

PMIX_EXPORT pmix_status_t PMIx_server_register_resources(pmix_info_t info[], size_t ninfo,
                                                         pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return resources_call(info, ninfo, cbfunc, cbdata, true);
}

PMIX_EXPORT pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                                           pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return resources_call(info, ninfo, cbfunc, cbdata, false);
}

// Process sets (server/process_sets.hpp, docs/process_sets.md):
// the server's local clients are told by PMIX_PROCESS_SET_DEFINE / _DELETE.
PMIX_EXPORT pmix_status_t PMIx_server_define_process_set(const pmix_proc_t members[],
                                                         size_t nmembers, const char *pset_name) {
    if (!server_up()) return PMIX_ERR_INIT;
    if (pset_name == nullptr || (members == nullptr && nmembers > 0)) return PMIX_ERR_BAD_PARAM;
    std::vector<pmix_proc_t> copied(members, members + nmembers);
    std::string name(pset_name, strnlen(pset_name, PMIX_MAX_NSLEN + 1));
    pmix_status_t rc = PMIX_ERROR;
    if (!ProgressEngine::instance().run_sync(
            [&] { rc = Server::instance().process_sets().define(name, std::move(copied)); }))
        return PMIX_ERR_INIT;
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_server_delete_process_set(char *pset_name) {
    if (!server_up()) return PMIX_ERR_INIT;
    if (pset_name == nullptr) return PMIX_ERR_BAD_PARAM;
    std::string name(pset_name, strnlen(pset_name, PMIX_MAX_NSLEN + 1));
    pmix_status_t rc = PMIX_ERROR;
    if (!ProgressEngine::instance().run_sync(
            [&] { rc = Server::instance().process_sets().remove(name); }))
        return PMIX_ERR_INIT;
    return rc;
}

PMIX_EXPORT void PMIx_server_deregister_nspace(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata) {
    if (!server_up() || nspace == nullptr) {
        if (cbfunc != nullptr) cbfunc(server_up() ? PMIX_ERR_BAD_PARAM : PMIX_ERR_INIT, cbdata);
        return;
    }
    std::string ns = nspace_of(nspace);
    Server::instance().fork_environments().invalidate();  // server/fork_env.hpp
    auto work = [ns, cbfunc, cbdata] {
        Server::instance().deregister_nspace(ns);
        if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
    };
    if (cbfunc == nullptr) {
        ProgressEngine::instance().run_sync(work);
    } else {
        ProgressEngine::instance().post(work);
    }
}

PMIX_EXPORT pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                                      void *server_object, pmix_op_cbfunc_t cbfunc,
                                                      void *cbdata) {
    if (!server_up()) return PMIX_ERR_INIT;
    if (proc == nullptr) return PMIX_ERR_BAD_PARAM;
    pmix_proc_t p = *proc;
    if (cbfunc == nullptr) {
        pmix_status_t rc = PMIX_ERROR;
        ProgressEngine::instance().run_sync(
            [&] { rc = Server::instance().register_client(p, uid, gid, server_object); });
        return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
    }
    ProgressEngine::instance().post([p, uid, gid, server_object, cbfunc, cbdata] {
        cbfunc(Server::instance().register_client(p, uid, gid, server_object), cbdata);
    });
    return PMIX_SUCCESS;
}

PMIX_EXPORT void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata) {
    if (!server_up() || proc == nullptr) {
        if (cbfunc != nullptr) cbfunc(server_up() ? PMIX_ERR_BAD_PARAM : PMIX_ERR_INIT, cbdata);
        return;
    }
    pmix_proc_t p = *proc;
    auto work = [p, cbfunc, cbdata] {
        Server::instance().deregister_client(p);
        if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
    };
    if (cbfunc == nullptr) {
        ProgressEngine::instance().run_sync(work);
    } else {
        ProgressEngine::instance().post(work);
    }
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env) {
    if (!server_up()) return PMIX_ERR_INIT;
    if (proc == nullptr || env == nullptr) return PMIX_ERR_BAD_PARAM;
    pmix_proc_t p = *proc;
    pmixpp::mca::Result<pmixpp::mca::Environment> vars =
        pmixpp::mca::Status(PMIX_ERR_INIT, "server not running");
    auto compute = [&] { vars = Server::instance().fork_environment(p); };
    if (getpid() == g_server_pid) {
        // The namespace's template, copied in this thread (ORTE calls this
        // once per rank in its fork loop); without one, the progress thread
        // builds the environment and keeps the template (server/fork_env.hpp).
        auto &templates = Server::instance().fork_environments();
        if (auto env = templates.lookup(p)) {
            vars = std::move(*env);
        } else {
            const std::uint64_t epoch = templates.epoch();
            ProgressEngine::instance().run_sync(
                [&] { vars = Server::instance().fork_environment(p, epoch); });
        }
    } else {
        // Called in a child the host forked (Slurm's slurmstepd calls it in
        // each task between fork and exec): the progress thread did not
        // survive the fork, so nothing would run a posted closure. The child
        // is single-threaded and holds a copy of the server's state; read it
        // here, in the caller's thread.
        compute();
    }
    if (!vars) {
        log()->error("PMIx_server_setup_fork: {}", vars.status().message());
        return vars.status().code();
    }
    for (const auto &[name, value] : vars.value()) {
        if (pmix_status_t rc = set_env(env, name, value); rc != PMIX_SUCCESS) return rc;
    }
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc,
                                                     pmix_dmodex_response_fn_t cbfunc,
                                                     void *cbdata) {
    if (!server_up()) return PMIX_ERR_INIT;
    if (proc == nullptr || cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    pmix_proc_t p = *proc;
    if (!ProgressEngine::instance().post(
            [p, cbfunc, cbdata] { Server::instance().dmodex_request(p, cbfunc, cbdata); })) {
        return PMIX_ERR_INIT;
    }
    return PMIX_SUCCESS;
}

// The bytes and info are copied here: with a cbfunc, it is called (progress
// thread) once they went to the matching pulls or the cache; without one,
// the call blocks until then and answers PMIX_OPERATION_SUCCEEDED.
PMIX_EXPORT pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source,
                                                  pmix_iof_channel_t channel,
                                                  const pmix_byte_object_t *bo,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!server_up()) return PMIX_ERR_INIT;
    if (source == nullptr || bo == nullptr || (bo->bytes == nullptr && bo->size > 0) ||
        channel == PMIX_FWD_NO_CHANNELS || (info == nullptr && ninfo > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    const pmix_proc_t src = *source;
    std::vector<std::uint8_t> bytes;
    if (bo->size > 0) bytes.assign(bo->bytes, bo->bytes + bo->size);
    auto copied = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(info, info == nullptr ? 0 : ninfo));
    auto work = [src, channel, b = std::move(bytes), copied] {
        Server::instance().deliver_iof(src, channel, b, copied);
    };
    if (cbfunc == nullptr) {
        return ProgressEngine::instance().run_sync(work) ? PMIX_OPERATION_SUCCEEDED : PMIX_ERR_INIT;
    }
    if (!ProgressEngine::instance().post([work, cbfunc, cbdata] {
            work();
            cbfunc(PMIX_SUCCESS, cbdata);
        })) {
        return PMIX_ERR_INIT;
    }
    return PMIX_SUCCESS;
}

}  // extern "C"

// PMIx_server_setup_application / _setup_local_support: the LocalSupport
// service (server/local_support.hpp).
namespace {

void release_info(pmix_status_t, void *cbdata) {
    delete static_cast<pmixpp::wire::InfoArray *>(cbdata);
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_server_setup_application(const pmix_nspace_t nspace,
                                                        pmix_info_t info[], size_t ninfo,
                                                        pmix_setup_application_cbfunc_t cbfunc,
                                                        void *cbdata) {
    if (!server_up()) return PMIX_ERR_INIT;
    if (nspace == nullptr || cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    auto copied = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(info, info == nullptr ? 0 : ninfo));
    std::string ns = nspace_of(nspace);
    bool posted = ProgressEngine::instance().post([ns, copied, cbfunc, cbdata] {
        auto result = Server::instance().local_support().setup_application(ns, copied->span());
        if (!result) {
            cbfunc(result.status().code(), nullptr, 0, cbdata, nullptr, nullptr);
            return;
        }
        // Ours until the host calls the release function (any thread).
        auto *out = new pmixpp::wire::InfoArray(std::move(result).value());
        cbfunc(PMIX_SUCCESS, out->data(), out->size(), cbdata, &release_info, out);
    });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace,
                                                          pmix_info_t info[], size_t ninfo,
                                                          pmix_op_cbfunc_t cbfunc, void *cbdata) {
    if (!server_up()) return PMIX_ERR_INIT;
    if (nspace == nullptr) return PMIX_ERR_BAD_PARAM;
    auto copied = std::make_shared<pmixpp::wire::InfoArray>(
        pmixpp::wire::InfoArray::copy_of(info, info == nullptr ? 0 : ninfo));
    std::string ns = nspace_of(nspace);
    Server::instance().fork_environments().invalidate();  // server/fork_env.hpp
    auto work = [ns, copied] {
        auto &server = Server::instance();
        const pmix_status_t rc = server.local_support().setup_local_support(ns, std::move(*copied));
        server.fork_environments().invalidate();
        return rc;
    };
    if (cbfunc == nullptr) {
        pmix_status_t rc = PMIX_ERR_INIT;
        ProgressEngine::instance().run_sync([&] { rc = work(); });
        return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
    }
    bool posted =
        ProgressEngine::instance().post([work, cbfunc, cbdata] { cbfunc(work(), cbdata); });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

}  // extern "C"
