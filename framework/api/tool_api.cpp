// C entry points of the tool face (pmix_tool.h; docs/tools.md): init and
// finalize (reference counted), attach/connect to another server, the list of
// servers, switching and disconnecting. The work is in client/tool.cpp.
#include <pmix_tool.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <span>

#include "client/client.hpp"
#include "mca/logging.hpp"
#include "runtime/init_state.hpp"

using pmixpp::runtime::Face;

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo) {
    auto &client = pmixpp::client::Client::instance();
    std::lock_guard lock(client.init_mutex());
    if (pmixpp::runtime::init_count(Face::tool) > 0) {
        pmixpp::runtime::add_init(Face::tool);  // reference counted (standard)
        if (proc != nullptr) *proc = client.self();
        return PMIX_SUCCESS;
    }
    if (pmixpp::runtime::init_count(Face::client) > 0 ||
        pmixpp::runtime::init_count(Face::server) > 0) {
        pmixpp::mca::framework_logger("client")->error(
            "PMIx_tool_init: this process is already a PMIx client or server");
        return PMIX_ERR_NOT_SUPPORTED;
    }
    if (info == nullptr && ninfo > 0) return PMIX_ERR_BAD_PARAM;
    const std::span<const pmix_info_t> given(info, info == nullptr ? 0 : ninfo);
    // A tool a launcher started as a process of a job (PMIX_NAMESPACE and
    // PMIX_RANK in its environment) is also that job's member: it connects
    // as that rank, like PMIx_Init, unless it names its identity or its
    // server (docs/tools.md, "Identity").
    auto named = [&] {
        for (const char *key :
             {PMIX_TOOL_NSPACE, PMIX_TOOL_DO_NOT_CONNECT, PMIX_SERVER_URI, PMIX_TCP_URI,
              PMIX_SERVER_PIDINFO, PMIX_SERVER_NSPACE, PMIX_TOOL_ATTACHMENT_FILE,
              PMIX_CONNECT_TO_SYSTEM, PMIX_CONNECT_SYSTEM_FIRST}) {
            for (const auto &i : given) {
                if (PMIX_CHECK_KEY(&i, key)) return true;
            }
        }
        return false;
    };
    const char *job = std::getenv("PMIX_NAMESPACE");
    const char *rank = std::getenv("PMIX_RANK");
    const pmix_status_t rc =
        job != nullptr && *job != '\0' && rank != nullptr && *rank != '\0' && !named()
            ? client.init(given, proc)
            : client.tool_init(given, proc);
    if (rc == PMIX_SUCCESS) pmixpp::runtime::add_init(Face::tool);
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void) {
    auto &client = pmixpp::client::Client::instance();
    std::lock_guard lock(client.init_mutex());
    if (pmixpp::runtime::init_count(Face::tool) == 0) return PMIX_ERR_INIT;
    if (pmixpp::runtime::drop_init(Face::tool) > 0) return PMIX_SUCCESS;
    return client.tool_finalize();
}

}  // extern "C"

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *myproc, pmix_proc_t *server,
                                                     pmix_info_t info[], size_t ninfo) {
    auto &client = pmixpp::client::Client::instance();
    if (pmixpp::runtime::init_count(Face::tool) == 0) return PMIX_ERR_INIT;
    if (info == nullptr && ninfo > 0) return PMIX_ERR_BAD_PARAM;
    std::lock_guard lock(client.init_mutex());
    return client.tool_attach({info, info == nullptr ? 0 : ninfo}, myproc, server);
}

// The 4.0 form: connect to that server and make it the current one.
PMIX_EXPORT pmix_status_t PMIx_tool_connect_to_server(pmix_proc_t *proc, pmix_info_t info[],
                                                      size_t ninfo) {
    pmix_proc_t server;
    pmix_status_t rc = PMIx_tool_attach_to_server(proc, &server, info, ninfo);
    if (rc != PMIX_SUCCESS) return rc;
    return pmixpp::client::Client::instance().tool_set_server(server);
}

PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers) {
    if (servers != nullptr) *servers = nullptr;
    if (nservers != nullptr) *nservers = 0;
    if (pmixpp::runtime::init_count(Face::tool) == 0) return PMIX_ERR_INIT;
    if (servers == nullptr || nservers == nullptr) return PMIX_ERR_BAD_PARAM;
    auto list = pmixpp::client::Client::instance().tool_servers();
    if (list.empty()) return PMIX_SUCCESS;
    auto *out = static_cast<pmix_proc_t *>(std::calloc(list.size(), sizeof(pmix_proc_t)));
    if (out == nullptr) return PMIX_ERR_NOMEM;
    std::memcpy(out, list.data(), list.size() * sizeof(pmix_proc_t));
    *servers = out;  // the caller frees it (PMIX_PROC_FREE)
    *nservers = list.size();
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server, pmix_info_t info[],
                                               size_t ninfo) {
    (void)info, (void)ninfo;
    if (pmixpp::runtime::init_count(Face::tool) == 0) return PMIX_ERR_INIT;
    if (server == nullptr) return PMIX_ERR_BAD_PARAM;
    return pmixpp::client::Client::instance().tool_set_server(*server);
}

PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server) {
    if (pmixpp::runtime::init_count(Face::tool) == 0) return PMIX_ERR_INIT;
    if (server == nullptr) return PMIX_ERR_BAD_PARAM;
    return pmixpp::client::Client::instance().tool_disconnect(*server);
}

}  // extern "C"
