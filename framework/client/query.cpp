// PMIx_Query_info(_nb) and PMIx_Resolve_peers / _nodes in the client and tool
// (the C entry points: api/query_api.cpp; declarations: query.hpp).
//
// Query: the library's own facts (PMIX_QUERY_STABLE_ABI_VERSION,
// PMIX_QUERY_PROVISIONAL_ABI_VERSION: runtime/std_abi.hpp) are always
// answered here, and a blocking PMIx_Query_info made of those keys alone
// works before any init and after finalize too, in the caller's thread (the
// standard's exception, Chap_API_Query). A key whose answer the process
// already holds (PMIX_JOB_SIZE of a job in the local datastore) is answered
// here unless the query carries PMIX_QUERY_REFRESH_CACHE; every other key
// goes to the server
// (server/query.cpp), which answers from its own state or asks the host. The
// result holds one PMIX_QUERY_RESULTS entry per query, in order: a
// DATA_ARRAY of INFO starting with PMIX_QUERY_QUALIFIERS (when the query had
// qualifiers), then one key=value entry per key found. Status: all keys found
// -> PMIX_SUCCESS, some -> PMIX_ERR_PARTIAL_SUCCESS, none -> PMIX_ERR_NOT_FOUND
// (and no results).
//
// Resolve: from the job's PMIX_NODE_MAP / PMIX_PROC_MAP (our regex format,
// wire/regex.hpp), else from the per-process PMIX_HOSTNAME values. Data of
// another job comes through PMIx_Get, which asks the server on a miss.
#include <pmix.h>

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include "client/query.hpp"
#include "client/request_util.hpp"
#include "runtime/std_abi.hpp"
#include "wire/regex.hpp"
#include "wire/codec.hpp"
#include "wire/rendezvous.hpp"

using pmixpp::client::Client;
using pmixpp::client::post_request;
using pmixpp::client::request_gate;
using pmixpp::wire::BodyReader;
using pmixpp::wire::BodyWriter;
using pmixpp::wire::Command;
using pmixpp::wire::InfoArray;

namespace {

bool is_true(const pmix_info_t &i) {
    return i.value.type == PMIX_UNDEF || (i.value.type == PMIX_BOOL && i.value.data.flag);
}

// One query being answered: its keys, qualifiers and what was found so far
// (values owned here, released with the codec).
struct QueryState {
    std::vector<std::string> keys;
    InfoArray qualifiers;
    std::vector<pmix_info_t> found;
    std::vector<std::string> remote;  // keys left for the server
    // PMIX_QUERY_ATTRIBUTE_SUPPORT: the library's levels, answered here and
    // merged with the host's level from the server (merge_attribute_support).
    std::vector<pmix_info_t> attr_local;
    QueryState() = default;
    QueryState(const QueryState &) = delete;
    QueryState &operator=(const QueryState &) = delete;
    ~QueryState() {
        if (!found.empty()) pmixpp::wire::destruct(PMIX_INFO, found.data(), found.size());
        if (!attr_local.empty())
            pmixpp::wire::destruct(PMIX_INFO, attr_local.data(), attr_local.size());
    }
};

struct QueryJob {
    std::vector<std::unique_ptr<QueryState>> queries;
    std::size_t asked = 0;
};

using pmixpp::client::AttributeSupport;
using pmixpp::client::QueryDone;

// The library's levels of a PMIX_QUERY_ATTRIBUTE_SUPPORT answer go into the
// host's answer from the server (same key), or make the answer alone.
void merge_attribute_support(QueryState &q) {
    if (q.attr_local.empty()) return;
    for (auto &f : q.found) {
        if (!PMIX_CHECK_KEY(&f, PMIX_QUERY_ATTRIBUTE_SUPPORT) || f.value.type != PMIX_DATA_ARRAY ||
            f.value.data.darray == nullptr || f.value.data.darray->type != PMIX_INFO)
            continue;
        pmix_data_array_t *d = f.value.data.darray;
        const std::size_t n = d->size + q.attr_local.size();
        auto *arr = static_cast<pmix_info_t *>(std::calloc(n, sizeof(pmix_info_t)));
        if (d->size > 0) std::memcpy(arr, d->array, d->size * sizeof(pmix_info_t));
        std::memcpy(arr + d->size, q.attr_local.data(), q.attr_local.size() * sizeof(pmix_info_t));
        std::free(d->array);  // the entries moved
        d->array = arr;
        d->size = n;
        q.attr_local.clear();
        return;
    }
    const std::size_t n = q.attr_local.size();
    auto *arr = static_cast<pmix_info_t *>(std::calloc(n, sizeof(pmix_info_t)));
    std::memcpy(arr, q.attr_local.data(), n * sizeof(pmix_info_t));
    q.attr_local.clear();
    auto *d = static_cast<pmix_data_array_t *>(std::calloc(1, sizeof(pmix_data_array_t)));
    *d = pmix_data_array_t{PMIX_INFO, n, arr};
    pmix_info_t i;
    std::memset(&i, 0, sizeof i);
    std::strncpy(i.key, PMIX_QUERY_ATTRIBUTE_SUPPORT, PMIX_MAX_KEYLEN);
    i.value.type = PMIX_DATA_ARRAY;
    i.value.data.darray = d;
    q.found.push_back(i);
}

// Whether a PMIX_QUERY_ATTRIBUTE_SUPPORT query is answered in this process.
bool attributes_here(const AttributeSupport &attrs, std::span<const pmix_info_t> qualifiers) {
    return attrs.library != nullptr && (attrs.host_here != nullptr || attrs.asks_host == nullptr ||
                                        !attrs.asks_host(qualifiers));
}

// The namespace a query is about (PMIX_NSPACE / PMIX_PROCID), else our own.
std::string nspace_of(const QueryState &q) {
    for (const auto &i : q.qualifiers.span()) {
        if (PMIX_CHECK_KEY(&i, PMIX_NSPACE) && i.value.type == PMIX_STRING &&
            i.value.data.string != nullptr)
            return i.value.data.string;
        if (PMIX_CHECK_KEY(&i, PMIX_PROCID) && i.value.type == PMIX_PROC &&
            i.value.data.proc != nullptr)
            return std::string(i.value.data.proc->nspace,
                               strnlen(i.value.data.proc->nspace, PMIX_MAX_NSLEN));
    }
    const pmix_proc_t me = Client::instance().self();
    return std::string(me.nspace, strnlen(me.nspace, PMIX_MAX_NSLEN));
}

// The library's own answer to `key`, or nullptr when it is not one of those.
const char *library_fact(const std::string &key) {
    if (key == PMIX_QUERY_STABLE_ABI_VERSION) return pmixpp::runtime::kStdAbiStableVersion;
    if (key == PMIX_QUERY_PROVISIONAL_ABI_VERSION)
        return pmixpp::runtime::kStdAbiProvisionalVersion;
    return nullptr;
}

void add_string(QueryState &q, const std::string &key, const char *value) {
    pmix_info_t i;
    PMIx_Info_load(&i, key.c_str(), value, PMIX_STRING);
    q.found.push_back(i);
}

// PMIX_QUERY_AVAIL_SERVERS: the live servers of this node's rendezvous files
// (wire/rendezvous.hpp), the system server first; the directories from the
// qualifiers PMIX_SYSTEM_TMPDIR / PMIX_SERVER_TMPDIR, else $TMPDIR, else /tmp.
// Each a PMIX_SERVER_INFO_ARRAY: PMIX_NSPACE, PMIX_RANK, PMIX_PROC_PID,
// PMIX_SERVER_URI (best first), PMIX_SERVER_SYSTEM_SUPPORT.
bool answer_servers(QueryState &q, const std::string &key) {
    auto dir = [&](const char *k) -> std::string {
        for (const auto &i : q.qualifiers.span()) {
            if (PMIX_CHECK_KEY(&i, k) && i.value.type == PMIX_STRING && i.value.data.string)
                return i.value.data.string;
        }
        const char *t = std::getenv("TMPDIR");
        return t != nullptr && *t != '\0' ? t : "/tmp";
    };
    std::vector<std::pair<pmixpp::wire::Rendezvous, bool>> servers;
    if (auto sys = pmixpp::wire::read_rendezvous(dir(PMIX_SYSTEM_TMPDIR) + "/" +
                                                 pmixpp::wire::system_rendezvous_name());
        sys && pmixpp::wire::process_alive(sys->pid))
        servers.emplace_back(std::move(*sys), true);
    for (auto &r : pmixpp::wire::list_session_servers(dir(PMIX_SERVER_TMPDIR))) {
        if (!servers.empty() && servers.front().first.pid == r.pid) continue;
        servers.emplace_back(std::move(r), false);
    }
    std::vector<pmix_info_t> outer(servers.size());
    for (std::size_t k = 0; k < servers.size(); ++k) {
        const auto &[r, system] = servers[k];
        pmix_info_t inner[5] = {};
        const pmix_rank_t rank = r.rank;
        const pid_t pid = r.pid;
        const bool sys = system;
        PMIx_Info_load(&inner[0], PMIX_NSPACE, r.nspace.c_str(), PMIX_STRING);
        PMIx_Info_load(&inner[1], PMIX_RANK, &rank, PMIX_PROC_RANK);
        PMIx_Info_load(&inner[2], PMIX_PROC_PID, &pid, PMIX_PID);
        PMIx_Info_load(&inner[3], PMIX_SERVER_URI, r.uris.front().c_str(), PMIX_STRING);
        PMIx_Info_load(&inner[4], PMIX_SERVER_SYSTEM_SUPPORT, &sys, PMIX_BOOL);
        pmix_data_array_t arr{PMIX_INFO, 5, inner};
        PMIx_Info_load(&outer[k], PMIX_SERVER_INFO_ARRAY, &arr, PMIX_DATA_ARRAY);  // copies
        pmixpp::wire::destruct(PMIX_INFO, inner, 5);
    }
    pmix_data_array_t all{PMIX_INFO, outer.size(), outer.empty() ? nullptr : outer.data()};
    pmix_info_t i{};
    PMIx_Info_load(&i, key.c_str(), &all, PMIX_DATA_ARRAY);
    if (!outer.empty()) pmixpp::wire::destruct(PMIX_INFO, outer.data(), outer.size());
    q.found.push_back(i);
    return true;
}

bool answer_locally(QueryState &q, const std::string &key) {
    if (key == PMIX_QUERY_AVAIL_SERVERS) return answer_servers(q, key);
    if (key != PMIX_JOB_SIZE) return false;
    pmix_proc_t wild{};
    const std::string ns = nspace_of(q);
    std::strncpy(wild.nspace, ns.c_str(), PMIX_MAX_NSLEN);
    wild.rank = PMIX_RANK_WILDCARD;
    pmix_value_t *v = nullptr;
    if (Client::instance().lookup(wild, PMIX_JOB_SIZE, {}, &v) != PMIX_SUCCESS || v == nullptr)
        return false;
    pmix_info_t i;
    std::memset(&i, 0, sizeof i);
    std::strncpy(i.key, key.c_str(), PMIX_MAX_KEYLEN);
    i.value = *v;  // move the payload
    std::free(v);
    q.found.push_back(i);
    return true;
}

// The caller's result array: one PMIX_QUERY_RESULTS per query.
pmix_info_t *assemble(QueryJob &job, std::size_t &n) {
    n = job.queries.size();
    auto *out = static_cast<pmix_info_t *>(std::calloc(n, sizeof(pmix_info_t)));
    if (out == nullptr) {
        n = 0;
        return nullptr;
    }
    for (std::size_t k = 0; k < n; ++k) {
        QueryState &q = *job.queries[k];
        const std::size_t nq = q.qualifiers.size();
        const std::size_t m = q.found.size() + (nq > 0 ? 1 : 0);
        auto *arr = static_cast<pmix_info_t *>(std::calloc(m == 0 ? 1 : m, sizeof(pmix_info_t)));
        std::size_t pos = 0;
        if (nq > 0) {
            std::strncpy(arr[0].key, PMIX_QUERY_QUALIFIERS, PMIX_MAX_KEYLEN);
            auto *quals = static_cast<pmix_info_t *>(std::calloc(nq, sizeof(pmix_info_t)));
            pmixpp::wire::copy(PMIX_INFO, quals, q.qualifiers.data(), nq);
            auto *qa = static_cast<pmix_data_array_t *>(std::calloc(1, sizeof(pmix_data_array_t)));
            *qa = pmix_data_array_t{PMIX_INFO, nq, quals};
            arr[0].value.type = PMIX_DATA_ARRAY;
            arr[0].value.data.darray = qa;
            pos = 1;
        }
        std::memcpy(arr + pos, q.found.data(), q.found.size() * sizeof(pmix_info_t));
        q.found.clear();  // moved
        auto *da = static_cast<pmix_data_array_t *>(std::calloc(1, sizeof(pmix_data_array_t)));
        *da = pmix_data_array_t{PMIX_INFO, m, m == 0 ? nullptr : arr};
        if (m == 0) std::free(arr);
        std::strncpy(out[k].key, PMIX_QUERY_RESULTS, PMIX_MAX_KEYLEN);
        out[k].value.type = PMIX_DATA_ARRAY;
        out[k].value.data.darray = da;
    }
    return out;
}

void finish(QueryJob &job, const QueryDone &done) {
    for (auto &q : job.queries) merge_attribute_support(*q);
    std::size_t found = 0;
    for (const auto &q : job.queries) found += q->found.size();
    if (found == 0) {
        done(PMIX_ERR_NOT_FOUND, nullptr, 0);
        return;
    }
    std::size_t n = 0;
    pmix_info_t *out = assemble(job, n);
    if (out == nullptr) {
        done(PMIX_ERR_NOMEM, nullptr, 0);
        return;
    }
    done(found < job.asked ? PMIX_ERR_PARTIAL_SUCCESS : PMIX_SUCCESS, out, n);
}

// Whether every key of every query is one the library answers by itself.
bool only_library_facts(const pmix_query_t queries[], size_t nqueries,
                        const AttributeSupport &attrs) {
    if (queries == nullptr || nqueries == 0) return false;
    for (size_t i = 0; i < nqueries; ++i) {
        if (queries[i].keys == nullptr || queries[i].keys[0] == nullptr) return false;
        const std::span<const pmix_info_t> quals(
            queries[i].qualifiers, queries[i].qualifiers == nullptr ? 0 : queries[i].nqual);
        for (char **k = queries[i].keys; *k != nullptr; ++k) {
            if (std::strcmp(*k, PMIX_QUERY_ATTRIBUTE_SUPPORT) == 0 && attributes_here(attrs, quals))
                continue;
            if (library_fact(*k) == nullptr) return false;
        }
    }
    return true;
}

// Reads the queries and answers what can be answered here; `any_remote`:
// some key is left for the server.
pmix_status_t prepare(pmix_query_t queries[], size_t nqueries, QueryJob &job, bool &any_remote,
                      const AttributeSupport &attrs) {
    if (queries == nullptr || nqueries == 0) return PMIX_ERR_BAD_PARAM;
    any_remote = false;
    for (size_t i = 0; i < nqueries; ++i) {
        auto q = std::make_unique<QueryState>();
        for (char **k = queries[i].keys; k != nullptr && *k != nullptr; ++k)
            q->keys.emplace_back(*k);
        if (q->keys.empty()) return PMIX_ERR_BAD_PARAM;
        q->qualifiers = InfoArray::copy_of(queries[i].qualifiers,
                                           queries[i].qualifiers == nullptr ? 0 : queries[i].nqual);
        bool refresh = false, has_procid = false, has_ns_or_rank = false;
        for (const auto &x : q->qualifiers.span()) {
            if (PMIX_CHECK_KEY(&x, PMIX_QUERY_REFRESH_CACHE)) refresh = refresh || is_true(x);
            if (PMIX_CHECK_KEY(&x, PMIX_PROCID)) has_procid = true;
            if (PMIX_CHECK_KEY(&x, PMIX_NSPACE) || PMIX_CHECK_KEY(&x, PMIX_RANK))
                has_ns_or_rank = true;
        }
        if (has_procid && has_ns_or_rank) return PMIX_ERR_BAD_PARAM;  // the spec's rule
        for (const auto &k : q->keys) {
            ++job.asked;
            if (const char *fact = library_fact(k)) {
                add_string(*q, k, fact);  // no other source: refresh or not
            } else if (k == PMIX_QUERY_ATTRIBUTE_SUPPORT && attrs.library != nullptr) {
                // The library's levels here; the host's from the server (or
                // from this process's own server library).
                const auto quals = q->qualifiers.span();
                attrs.library(quals, q->attr_local);
                if (attrs.asks_host != nullptr && attrs.asks_host(quals)) {
                    if (attrs.host_here != nullptr) {
                        attrs.host_here(quals, q->attr_local);
                    } else {
                        q->remote.push_back(k);
                    }
                }
                // No level asked (the levels are required qualifiers): not found.
            } else if (refresh || !answer_locally(*q, k)) {
                q->remote.push_back(k);
            }
        }
        any_remote = any_remote || !q->remote.empty();
        job.queries.push_back(std::move(q));
    }
    return PMIX_SUCCESS;
}

pmix_status_t query_async(pmix_query_t queries[], size_t nqueries, QueryDone done,
                          const AttributeSupport &attrs) {
    if (pmix_status_t rc = request_gate(); rc != PMIX_SUCCESS) {
        // A server process has no server to ask, but answers the library's facts.
        if (rc != PMIX_ERR_NOT_SUPPORTED || !only_library_facts(queries, nqueries, attrs))
            return rc;
    }
    auto job = std::make_shared<QueryJob>();
    bool any_remote = false;
    if (pmix_status_t rc = prepare(queries, nqueries, *job, any_remote, attrs); rc != PMIX_SUCCESS)
        return rc;
    if (!any_remote) {
        bool posted =
            pmixpp::runtime::ProgressEngine::instance().post([job, done] { finish(*job, done); });
        return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
    }
    BodyWriter w;
    w.u32(static_cast<std::uint32_t>(job->queries.size()));
    for (const auto &q : job->queries) {
        w.u32(static_cast<std::uint32_t>(q->remote.size()));
        for (const auto &k : q->remote) w.str(k);
        w.infos(q->qualifiers.data(), q->qualifiers.size());
    }
    bool posted =
        post_request(Command::query, w.take(), 0, [job, done](pmix_status_t s, BodyReader &r) {
            if (s == PMIX_SUCCESS || s == PMIX_ERR_PARTIAL_SUCCESS) {
                std::uint32_t n = 0;
                r.u32(n);
                for (std::uint32_t k = 0; k < n && r.ok(); ++k) {
                    InfoArray got;
                    if (!r.infos(got)) break;
                    if (k >= job->queries.size()) continue;
                    auto &q = *job->queries[k];
                    for (std::size_t j = 0; j < got.size(); ++j) {
                        q.found.push_back(got.data()[j]);
                        std::memset(&got.data()[j].value, 0, sizeof(pmix_value_t));  // moved
                    }
                }
                if (!r.finished()) {
                    done(PMIX_ERR_UNPACK_FAILURE, nullptr, 0);
                    return;
                }
            } else if (s != PMIX_ERR_NOT_FOUND && s != PMIX_ERR_NOT_SUPPORTED) {
                done(s, nullptr, 0);
                return;
            }
            finish(*job, done);
        });
    return posted ? PMIX_SUCCESS : PMIX_ERR_INIT;
}

void release_results(void *cbdata) {
    auto *p = static_cast<std::pair<pmix_info_t *, std::size_t> *>(cbdata);
    if (p->first != nullptr) {
        pmixpp::wire::destruct(PMIX_INFO, p->first, p->second);
        std::free(p->first);
    }
    delete p;
}

// --- resolve ---

std::string local_hostname() {
    pmix_value_t *v = nullptr;
    const pmix_proc_t me = Client::instance().self();
    if (PMIx_Get(&me, PMIX_HOSTNAME, nullptr, 0, &v) == PMIX_SUCCESS && v != nullptr) {
        std::string h = v->type == PMIX_STRING && v->data.string != nullptr ? v->data.string : "";
        PMIX_VALUE_RELEASE(v);
        if (!h.empty()) return h;
    }
    char name[HOST_NAME_MAX + 1] = {};
    gethostname(name, sizeof name - 1);
    return name;
}

std::optional<std::string> get_string(const pmix_proc_t &p, const char *key) {
    pmix_value_t *v = nullptr;
    if (PMIx_Get(&p, key, nullptr, 0, &v) != PMIX_SUCCESS || v == nullptr) return std::nullopt;
    std::optional<std::string> s;
    if (v->type == PMIX_STRING && v->data.string != nullptr) s = v->data.string;
    PMIX_VALUE_RELEASE(v);
    return s;
}

bool same_host(const std::string &a, const std::string &b) {
    if (a == b) return true;
    auto shorten = [](const std::string &s) { return s.substr(0, s.find('.')); };
    return shorten(a) == shorten(b);
}

// (node name, ranks on it) for every node of job `ns`; nullopt: unknown job.
std::optional<std::vector<std::pair<std::string, std::vector<pmix_rank_t>>>> job_layout(
    const std::string &ns) {
    pmix_proc_t wild{};
    std::strncpy(wild.nspace, ns.c_str(), PMIX_MAX_NSLEN);
    wild.rank = PMIX_RANK_WILDCARD;
    auto nmap = get_string(wild, PMIX_NODE_MAP);
    auto pmap = get_string(wild, PMIX_PROC_MAP);
    if (nmap && pmap) {
        auto nodes = pmixpp::wire::decode_node_map(*nmap);
        auto ranks = pmixpp::wire::decode_proc_map(*pmap);
        if (nodes && ranks && nodes->size() == ranks->size()) {
            std::vector<std::pair<std::string, std::vector<pmix_rank_t>>> out;
            for (std::size_t i = 0; i < nodes->size(); ++i) {
                out.emplace_back((*nodes)[i],
                                 std::vector<pmix_rank_t>((*ranks)[i].begin(), (*ranks)[i].end()));
            }
            return out;
        }
    }
    // Not our map format: the hostname of every rank.
    pmix_value_t *v = nullptr;
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, nullptr, 0, &v) != PMIX_SUCCESS || v == nullptr)
        return std::nullopt;
    const std::uint32_t size = v->type == PMIX_UINT32 ? v->data.uint32 : 0;
    PMIX_VALUE_RELEASE(v);
    std::vector<std::pair<std::string, std::vector<pmix_rank_t>>> out;
    for (pmix_rank_t r = 0; r < size; ++r) {
        pmix_proc_t p = wild;
        p.rank = r;
        auto host = get_string(p, PMIX_HOSTNAME);
        if (!host) continue;
        auto it =
            std::find_if(out.begin(), out.end(), [&](const auto &e) { return e.first == *host; });
        if (it == out.end()) {
            out.emplace_back(*host, std::vector<pmix_rank_t>{});
            it = std::prev(out.end());
        }
        it->second.push_back(r);
    }
    return out;
}

bool resolve_up() {
    using pmixpp::runtime::Face;
    return pmixpp::runtime::init_count(Face::client) > 0 ||
           pmixpp::runtime::init_count(Face::server) > 0 ||
           pmixpp::runtime::init_count(Face::tool) > 0;
}

}  // namespace

namespace pmixpp::client {

pmix_status_t query(pmix_query_t queries[], size_t nqueries, QueryDone done,
                    const AttributeSupport &attrs) {
    return query_async(queries, nqueries, std::move(done), attrs);
}

bool query_only_library_facts(const pmix_query_t queries[], size_t nqueries,
                              const AttributeSupport &attrs) {
    return only_library_facts(queries, nqueries, attrs);
}

pmix_status_t query_here(pmix_query_t queries[], size_t nqueries, pmix_info_t **results,
                         size_t *nresults, const AttributeSupport &attrs) {
    QueryJob job;
    bool any_remote = false;
    if (pmix_status_t rc = prepare(queries, nqueries, job, any_remote, attrs); rc != PMIX_SUCCESS)
        return rc;
    pmix_status_t status = PMIX_ERR_NOT_FOUND;
    finish(job, [&](pmix_status_t s, pmix_info_t *info, std::size_t n) {
        status = s;
        *results = info;
        *nresults = n;
    });
    return status;
}

void release_query_results(void *cbdata) {
    release_results(cbdata);
}

bool resolve_available() {
    return resolve_up();
}

pmix_status_t resolve_peers(const char *nodename, const std::string &nspace,
                            std::vector<pmix_proc_t> &out) {
    const std::string node = nodename != nullptr && *nodename != '\0' ? nodename : local_hostname();
    std::vector<std::string> spaces;
    if (!nspace.empty()) {
        spaces.push_back(nspace);
    } else {
        // All processes on the node: of the jobs this process knows, its own.
        const pmix_proc_t me = Client::instance().self();
        spaces.emplace_back(me.nspace, strnlen(me.nspace, PMIX_MAX_NSLEN));
    }
    bool known = false;
    for (const auto &ns : spaces) {
        auto layout = job_layout(ns);
        if (!layout) continue;
        known = true;
        for (const auto &[host, ranks] : *layout) {
            if (!same_host(host, node)) continue;
            for (pmix_rank_t r : ranks) {
                pmix_proc_t p{};
                std::strncpy(p.nspace, ns.c_str(), PMIX_MAX_NSLEN);
                p.rank = r;
                out.push_back(p);
            }
        }
    }
    return known ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
}

pmix_status_t resolve_nodes(const std::string &nspace, std::string &list) {
    std::string ns = nspace;
    if (ns.empty()) {
        const pmix_proc_t me = Client::instance().self();
        ns.assign(me.nspace, strnlen(me.nspace, PMIX_MAX_NSLEN));
    }
    auto layout = job_layout(ns);
    if (!layout) return PMIX_ERR_NOT_FOUND;
    for (const auto &[host, ranks] : *layout) {
        if (ranks.empty()) continue;
        list += (list.empty() ? "" : ",") + host;
    }
    return PMIX_SUCCESS;
}

}  // namespace pmixpp::client
