// Queries and resolution in a client or tool (query.cpp); the C entry points
// are in api/query_api.cpp. See query.cpp's head for what is answered where.
#pragma once

#include <pmix.h>

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace pmixpp::client {

// Receives the results (malloc'd, released with release_query_results) once.
using QueryDone = std::function<void(pmix_status_t, pmix_info_t *, std::size_t)>;

// PMIX_QUERY_ATTRIBUTE_SUPPORT (docs/tools.md, "Attribute support"): the
// api layer knows the library's levels (api/attribute_support.cpp) and hands
// them in. `library`: appends the client/server/tool entries the qualifiers
// ask for; `asks_host`: whether they ask for the host's level; `host_here`:
// set in a server process (no server to ask), appends the host's level.
struct AttributeSupport {
    void (*library)(std::span<const pmix_info_t>, std::vector<pmix_info_t> &) = nullptr;
    bool (*asks_host)(std::span<const pmix_info_t>) = nullptr;
    void (*host_here)(std::span<const pmix_info_t>, std::vector<pmix_info_t> &) = nullptr;
};

// Answers what the library knows here and asks the server for the rest;
// `done` runs on the progress thread. Not PMIX_SUCCESS: `done` never runs.
pmix_status_t query(pmix_query_t queries[], size_t nqueries, QueryDone done,
                    const AttributeSupport &attrs);
// Whether every key of every query is one the library answers by itself
// (the ABI versions): then query_here() answers in the caller's thread,
// initialized or not (Chap_API_Query).
bool query_only_library_facts(const pmix_query_t queries[], size_t nqueries,
                              const AttributeSupport &attrs);
pmix_status_t query_here(pmix_query_t queries[], size_t nqueries, pmix_info_t **results,
                         size_t *nresults, const AttributeSupport &attrs);
// The release function handed with query results (cbdata: what query() made).
void release_query_results(void *cbdata);

// Whether any face is initialized (resolution needs one).
bool resolve_available();
// The processes of `nspace` (empty: the caller's) on `nodename` (null or
// empty: this node), appended to `out`; PMIX_ERR_NOT_FOUND: unknown job.
pmix_status_t resolve_peers(const char *nodename, const std::string &nspace,
                            std::vector<pmix_proc_t> &out);
// The comma list of nodes hosting `nspace` (empty: the caller's).
pmix_status_t resolve_nodes(const std::string &nspace, std::string &list);

}  // namespace pmixpp::client
