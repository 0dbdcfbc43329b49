// C entry points PMIx_Query_info(_nb), PMIx_Resolve_peers and
// PMIx_Resolve_nodes (docs/tools.md, "Queries"; the work is in
// client/query.cpp), and PMIx_Register_attributes (the host's attribute
// support: server/host_attributes.hpp).
#include <pmix.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/attribute_support.hpp"
#include "client/client.hpp"
#include "client/query.hpp"
#include "client/request_util.hpp"
#include "runtime/init_state.hpp"
#include "runtime/progress.hpp"
#include "server/server.hpp"

using pmixpp::client::request_gate;
using pmixpp::runtime::Completion;
using pmixpp::runtime::Face;
using pmixpp::runtime::ProgressEngine;

namespace {

// A server process that is not also connected to a server of its own.
bool server_process() {
    return pmixpp::runtime::init_count(Face::server) > 0 &&
           !pmixpp::client::Client::instance().connected();
}

// The host's level of an attribute query made in the server process itself.
void host_level_here(std::span<const pmix_info_t> qualifiers, std::vector<pmix_info_t> &entries) {
    ProgressEngine::instance().run_sync(
        [&] { pmixpp::server::Server::instance().host_attribute_support(qualifiers, entries); });
}

pmixpp::client::AttributeSupport attribute_support() {
    pmixpp::client::AttributeSupport a;
    a.library = &pmixpp::api::library_attribute_support;
    a.asks_host = &pmixpp::api::asks_host_level;
    if (server_process()) a.host_here = &host_level_here;
    return a;
}

}  // namespace

extern "C" {

PMIX_EXPORT pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                             pmix_info_cbfunc_t cbfunc, void *cbdata) {
    if (cbfunc == nullptr)
        return request_gate() == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : request_gate();
    return pmixpp::client::query(
        queries, nqueries,
        [cbfunc, cbdata](pmix_status_t s, pmix_info_t *info, std::size_t n) {
            // Ours until the caller calls the release function.
            auto *keep = new std::pair<pmix_info_t *, std::size_t>(info, n);
            cbfunc(s, info, n, cbdata, pmixpp::client::release_query_results, keep);
        },
        attribute_support());
}

PMIX_EXPORT pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries,
                                          pmix_info_t **results, size_t *nresults) {
    if (results != nullptr) *results = nullptr;
    if (nresults != nullptr) *nresults = 0;
    if (results == nullptr || nresults == nullptr)
        return request_gate() == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : request_gate();
    const auto attrs = attribute_support();
    if (pmixpp::client::query_only_library_facts(queries, nqueries, attrs)) {
        // Answered in the caller's thread, initialized or not (Chap_API_Query).
        return pmixpp::client::query_here(queries, nqueries, results, nresults, attrs);
    }
    struct Out {
        pmix_status_t status = PMIX_ERR_TIMEOUT;
        pmix_info_t *info = nullptr;
        std::size_t n = 0;
    };
    auto done = std::make_shared<Completion<Out>>();
    pmix_status_t rc = pmixpp::client::query(
        queries, nqueries,
        [done](pmix_status_t s, pmix_info_t *info, std::size_t n) {
            done->complete(Out{s, info, n});
        },
        attrs);
    if (rc != PMIX_SUCCESS) return rc;
    done->wait();
    const Out &o = done->value();
    *results = o.info;  // the caller frees it (PMIX_INFO_FREE)
    *nresults = o.n;
    return o.status;
}

PMIX_EXPORT pmix_status_t PMIx_Resolve_peers(const char *nodename, const pmix_nspace_t nspace,
                                             pmix_proc_t **procs, size_t *nprocs) {
    if (procs != nullptr) *procs = nullptr;
    if (nprocs != nullptr) *nprocs = 0;
    if (!pmixpp::client::resolve_available()) return PMIX_ERR_INIT;
    if (procs == nullptr || nprocs == nullptr) return PMIX_ERR_BAD_PARAM;
    std::string ns;
    if (nspace != nullptr && nspace[0] != '\0') ns.assign(nspace, strnlen(nspace, PMIX_MAX_NSLEN));
    std::vector<pmix_proc_t> out;
    if (pmix_status_t rc = pmixpp::client::resolve_peers(nodename, ns, out); rc != PMIX_SUCCESS)
        return rc;
    if (out.empty()) return PMIX_SUCCESS;  // the node hosts none: NULL, 0
    auto *arr = static_cast<pmix_proc_t *>(std::calloc(out.size(), sizeof(pmix_proc_t)));
    if (arr == nullptr) return PMIX_ERR_NOMEM;
    std::memcpy(arr, out.data(), out.size() * sizeof(pmix_proc_t));
    *procs = arr;  // the caller frees it (PMIX_PROC_FREE)
    *nprocs = out.size();
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Resolve_nodes(const pmix_nspace_t nspace, char **nodelist) {
    if (nodelist != nullptr) *nodelist = nullptr;
    if (!pmixpp::client::resolve_available()) return PMIX_ERR_INIT;
    if (nodelist == nullptr) return PMIX_ERR_BAD_PARAM;
    std::string ns;
    if (nspace != nullptr && nspace[0] != '\0') ns.assign(nspace, strnlen(nspace, PMIX_MAX_NSLEN));
    std::string list;
    if (pmix_status_t rc = pmixpp::client::resolve_nodes(ns, list); rc != PMIX_SUCCESS) return rc;
    *nodelist = strdup(list.c_str());
    return *nodelist != nullptr ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

// The host's attributes for one upcall (the 4.2 form: NULL-terminated names
// or keys; docs/tools.md, "Attribute support").
PMIX_EXPORT pmix_status_t PMIx_Register_attributes(char *function, char *attrs[]) {
    if (pmixpp::runtime::init_count(Face::server) == 0) return PMIX_ERR_INIT;
    if (function == nullptr || *function == '\0') return PMIX_ERR_BAD_PARAM;
    std::vector<pmixpp::wire::AttributeFacts> facts;
    for (char **a = attrs; a != nullptr && *a != nullptr; ++a) {
        if (**a == '\0' || strnlen(*a, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)
            return PMIX_ERR_BAD_PARAM;
        facts.push_back(pmixpp::api::describe_attribute(*a));
    }
    pmix_status_t rc = PMIX_ERR_INIT;
    const std::string fn = function;
    ProgressEngine::instance().run_sync([&] {
        auto &server = pmixpp::server::Server::instance();
        if (server.active()) rc = server.register_host_attributes(fn, std::move(facts));
    });
    return rc;
}

}  // extern "C"
