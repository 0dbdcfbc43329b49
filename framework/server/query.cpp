// The Queries service (queries.hpp): PMIx_Query_info on the server side. The library answers the
// keys it knows from its own state (registered jobs and clients, the datastore); every other key
// goes to the host's query upcall, with the query's qualifiers. Keys nobody answers are "not found"
// (the spec treats an unsupported key like a missing one). Status: all found -> PMIX_SUCCESS; some
// -> PMIX_ERR_PARTIAL_SUCCESS; none -> PMIX_ERR_NOT_FOUND.
//
// PMIX_QUERY_PROC_TABLE, _LOCAL_PROC_TABLE and PMIX_QUERY_JOB_STATUS go to the
// host first when it has a query upcall (it knows executables, exit codes
// and job states); the library's table (no executable, no exit code) answers
// what the host did not.
//
// Answered here:
//   PMIX_QUERY_NAMESPACES        STRING, comma list of the registered nspaces
//   PMIX_QUERY_NAMESPACE_INFO    DATA_ARRAY of INFO, one PMIX_QUERY_NAMESPACE_INFO
//                                entry per nspace (qualifier PMIX_NSPACE: that one),
//                                each a DATA_ARRAY of INFO {PMIX_NSPACE, PMIX_JOB_SIZE,
//                                PMIX_CMD_LINE when registered}
//   PMIX_JOB_SIZE                UINT32 (qualifier PMIX_NSPACE, default: the caller's)
//   PMIX_QUERY_PROC_TABLE        DATA_ARRAY of PROC_INFO, every rank of the nspace
//   PMIX_QUERY_LOCAL_PROC_TABLE  DATA_ARRAY of PROC_INFO, the ranks served here
//   PMIX_QUERY_NUM_PSETS         SIZE, the process sets known here (process_sets.hpp)
//   PMIX_QUERY_PSET_NAMES        DATA_ARRAY of STRING, their names
//   PMIX_QUERY_PSET_MEMBERSHIP   DATA_ARRAY of PROC (qualifier PMIX_PSET_NAME)
//   PMIX_PSET_NAMES              DATA_ARRAY of STRING, the sets of the process named
//                                by the qualifier PMIX_PROCID (a client's PMIx_Get)
//   PMIX_QUERY_SUPPORTED_KEYS    STRING, the keys above
//   PMIX_QUERY_ATTRIBUTE_SUPPORT the host's level (PMIX_HOST_ATTRIBUTES / _FUNCTIONS):
//                                DATA_ARRAY of INFO (wire/attribute_support.hpp)
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "server/queries.hpp"
#include "server/info_build.hpp"
#include "server/upcall_results.hpp"
#include "wire/protocol.hpp"

namespace pmixpp::server {

using wire::BodyReader;
using wire::BodyWriter;
using wire::Channel;
using wire::Frame;

namespace {

constexpr const char *kLibraryKeys[] = {
    PMIX_QUERY_NAMESPACES,     PMIX_QUERY_NAMESPACE_INFO,   PMIX_JOB_SIZE,
    PMIX_QUERY_PROC_TABLE,     PMIX_QUERY_LOCAL_PROC_TABLE, PMIX_QUERY_NUM_PSETS,
    PMIX_QUERY_PSET_NAMES,     PMIX_QUERY_PSET_MEMBERSHIP,  PMIX_PSET_NAMES,
    PMIX_QUERY_SUPPORTED_KEYS, PMIX_QUERY_ATTRIBUTE_SUPPORT};

struct Pending {
    std::vector<std::string> keys;
    wire::InfoArray qualifiers;
    std::shared_ptr<HostInfo> results = std::make_shared<HostInfo>();
    std::vector<std::string> unresolved;
};

const pmix_info_t *qualifier(std::span<const pmix_info_t> qualifiers, const char *key) {
    for (const auto &i : qualifiers) {
        if (PMIX_CHECK_KEY(&i, key)) return &i;
    }
    return nullptr;
}

// The nspace a query is about: PMIX_NSPACE or PMIX_PROCID, else the caller's.
std::string target_nspace(std::span<const pmix_info_t> q, const std::string &caller) {
    if (const auto *i = qualifier(q, PMIX_NSPACE);
        i != nullptr && i->value.type == PMIX_STRING && i->value.data.string != nullptr) {
        return i->value.data.string;
    }
    if (const auto *i = qualifier(q, PMIX_PROCID);
        i != nullptr && i->value.type == PMIX_PROC && i->value.data.proc != nullptr) {
        return std::string(i->value.data.proc->nspace,
                           strnlen(i->value.data.proc->nspace, PMIX_MAX_NSLEN));
    }
    return caller;
}

// A DATA_ARRAY value over a malloc'd array it takes over.
pmix_info_t make_array_info(const char *key, pmix_data_type_t type, void *array, std::size_t n) {
    pmix_info_t i;
    std::memset(&i, 0, sizeof i);
    std::strncpy(i.key, key, PMIX_MAX_KEYLEN);
    auto *darray = static_cast<pmix_data_array_t *>(std::calloc(1, sizeof(pmix_data_array_t)));
    darray->type = type;
    darray->size = n;
    darray->array = n > 0 ? array : nullptr;
    if (n == 0) std::free(array);
    i.value.type = PMIX_DATA_ARRAY;
    i.value.data.darray = darray;
    return i;
}

// Keys the host knows better (executable, exit code, job state): asked of
// the host's query upcall first when it has one.
bool host_first(const std::string &key) {
    return key == PMIX_QUERY_PROC_TABLE || key == PMIX_QUERY_LOCAL_PROC_TABLE ||
           key == PMIX_QUERY_JOB_STATUS;
}

pmix_proc_state_t state_of(const ClientRecord &c) {
    switch (c.state) {
        case ClientRecord::State::registered:
            return PMIX_PROC_STATE_LAUNCH_UNDERWAY;
        case ClientRecord::State::connecting:
            return PMIX_PROC_STATE_RUNNING;
        case ClientRecord::State::connected:
            return PMIX_PROC_STATE_CONNECTED;
        case ClientRecord::State::finalized:
            return PMIX_PROC_STATE_TERMINATED;
        case ClientRecord::State::lost:
            return PMIX_PROC_STATE_COMM_FAILED;
    }
    return PMIX_PROC_STATE_UNDEF;
}

}  // namespace

Queries::Queries(const ClientTable &clients, const HostUpcalls &host, RequestTable &requests,
                 QueryHooks hooks)
    : clients_(clients), host_(host), hooks_(std::move(hooks)) {
    requests.add(wire::Command::query, [this](Channel &ch, Frame &frame, ClientRecord *client) {
        handle_query(ch, frame, client);
    });
}

void Queries::handle_query(Channel &ch, Frame &frame, ClientRecord *client) {
    BodyReader r(frame.body);
    std::uint32_t n = 0;
    r.u32(n);
    std::vector<Query> queries;
    if (n <= r.remaining()) {
        queries.resize(n);
        for (auto &q : queries) {
            std::uint32_t m = 0;
            if (!r.u32(m) || m > r.remaining()) break;
            q.keys.resize(m);
            for (auto &k : q.keys) r.str(k);
            r.infos(q.qualifiers);
        }
    }
    if (!r.finished() || client == nullptr || queries.empty()) {
        ch.close("malformed query request");
        return;
    }
    request(PendingReply::to(ch, frame), client->proc, std::move(queries));
}

void Queries::request(const PendingReply &reply, const pmix_proc_t &caller,
                      std::vector<Query> asked_queries) {
    auto queries = std::make_shared<std::vector<Pending>>(asked_queries.size());
    for (std::size_t i = 0; i < asked_queries.size(); ++i) {
        (*queries)[i].keys = std::move(asked_queries[i].keys);
        (*queries)[i].qualifiers = std::move(asked_queries[i].qualifiers);
    }
    const ProcKey me = key_of(caller);

    std::size_t asked = 0, found = 0;
    for (auto &q : *queries) {
        for (const auto &key : q.keys) {
            ++asked;
            if (host_->query != nullptr && host_first(key)) {
                q.unresolved.push_back(key);  // the library's answer is the fallback
            } else if (answer_key(q.qualifiers.span(), key, me.first, *q.results)) {
                ++found;
            } else {
                q.unresolved.push_back(key);
            }
        }
    }
    auto finish = [reply, queries, asked](std::size_t found_total) {
        const pmix_status_t s = found_total == 0      ? PMIX_ERR_NOT_FOUND
                                : found_total < asked ? PMIX_ERR_PARTIAL_SUCCESS
                                                      : PMIX_SUCCESS;
        if (s == PMIX_ERR_NOT_FOUND) {
            send_reply(reply, status_body(s));
            return;
        }
        BodyWriter w;
        w.i32(s).u32(static_cast<std::uint32_t>(queries->size()));
        for (const auto &q : *queries) {
            auto span = q.results->span();
            w.infos(span.data(), span.size());
        }
        send_reply(reply, w.take());
    };
    if (found == asked || host_->query == nullptr) {
        finish(found);
        return;
    }

    // The rest goes to the host, one pmix_query_t per query with unresolved keys.
    struct HostQueries {
        std::vector<std::unique_ptr<KeyList>> keys;
        std::vector<pmix_query_t> q;
        std::vector<std::size_t> index;  // into *queries
    };
    auto hq = std::make_shared<HostQueries>();
    for (std::size_t i = 0; i < queries->size(); ++i) {
        auto &q = (*queries)[i];
        if (q.unresolved.empty()) continue;
        hq->keys.push_back(std::make_unique<KeyList>(q.unresolved));
        pmix_query_t pq{};
        pq.keys = hq->keys.back()->argv();
        pq.qualifiers = q.qualifiers.data();
        pq.nqual = q.qualifiers.size();
        hq->q.push_back(pq);
        hq->index.push_back(i);
    }
    pmix_proc_t proc = caller;
    // What the host did not answer of the keys it was asked first: the
    // library's own (less complete) answer.
    auto fallback = [this, queries, caller = me.first]() {
        std::size_t added = 0;
        for (auto &q : *queries) {
            for (const auto &key : q.unresolved) {
                if (!host_first(key)) continue;
                const auto have = q.results->span();
                if (std::any_of(have.begin(), have.end(), [&](const pmix_info_t &i) {
                        return PMIX_CHECK_KEY(&i, key.c_str());
                    }))
                    continue;
                if (answer_key(q.qualifiers.span(), key, caller, *q.results)) ++added;
            }
        }
        return added;
    };
    call_host_info(
        [this, proc, hq](pmix_info_cbfunc_t cb, void *cbdata) mutable {
            return host_->query(&proc, hq->q.data(), hq->q.size(), cb, cbdata);
        },
        [queries, hq, found, finish, fallback](pmix_status_t s, wire::InfoArray results) {
            std::size_t total = found;
            if (s == PMIX_SUCCESS || s == PMIX_ERR_PARTIAL_SUCCESS) {
                std::size_t next_results = 0;  // PMIX_QUERY_RESULTS entries, in query order
                for (auto &res : std::span<pmix_info_t>(results.data(), results.size())) {
                    if (PMIX_CHECK_KEY(&res, PMIX_QUERY_RESULTS) &&
                        res.value.type == PMIX_DATA_ARRAY && res.value.data.darray != nullptr &&
                        res.value.data.darray->type == PMIX_INFO) {
                        if (next_results >= hq->index.size()) continue;
                        auto &q = (*queries)[hq->index[next_results++]];
                        auto *arr = static_cast<pmix_info_t *>(res.value.data.darray->array);
                        for (std::size_t k = 0; k < res.value.data.darray->size; ++k) {
                            if (PMIX_CHECK_KEY(&arr[k], PMIX_QUERY_QUALIFIERS)) continue;
                            q.results->adopt(arr[k]);
                            ++total;
                        }
                        continue;
                    }
                    // A flat answer: the first query that asked for that key.
                    for (std::size_t idx : hq->index) {
                        auto &q = (*queries)[idx];
                        auto it = std::find_if(
                            q.unresolved.begin(), q.unresolved.end(),
                            [&](const std::string &k) { return PMIX_CHECK_KEY(&res, k.c_str()); });
                        if (it == q.unresolved.end()) continue;
                        q.unresolved.erase(it);
                        q.results->adopt(res);
                        ++total;
                        break;
                    }
                }
            }
            total += fallback();
            finish(total);
        });
}

std::optional<std::string> Queries::job_string(const pmix_proc_t &proc, const char *key) const {
    if (store_ == nullptr) return std::nullopt;
    std::optional<std::string> out;
    [[maybe_unused]] auto st = store_->read([&](const mca::gds::Module &m) {
        return m.fetch(proc, key, {}, [&](const pmix_value_t &v) {
            if (v.type == PMIX_STRING && v.data.string != nullptr) out = v.data.string;
        });
    });
    return out;
}

bool Queries::answer_key(std::span<const pmix_info_t> qualifiers, const std::string &key,
                         const std::string &caller_nspace, HostInfo &out) const {
    const auto &q = qualifiers;
    const char *k = key.c_str();
    if (hooks_.service_keys && hooks_.service_keys(qualifiers, key, out))
        return true;  // groups, psets
    if (key == PMIX_QUERY_ATTRIBUTE_SUPPORT) {
        // The host's level only: the client answers the library's levels
        // itself (api/attribute_support.cpp) and merges.
        std::vector<pmix_info_t> entries;
        if (hooks_.host_attributes) hooks_.host_attributes(q, entries);
        if (entries.empty()) return false;
        auto *arr = static_cast<pmix_info_t *>(std::calloc(entries.size(), sizeof(pmix_info_t)));
        std::memcpy(arr, entries.data(), entries.size() * sizeof(pmix_info_t));
        auto i = make_array_info(k, PMIX_INFO, arr, entries.size());
        out.adopt(i);
        return true;
    }
    if (key == PMIX_QUERY_SUPPORTED_KEYS) {
        std::string all;
        for (const char *x : kLibraryKeys) all += (all.empty() ? "" : ",") + std::string(x);
        auto i = load_info(k, all.c_str(), PMIX_STRING);
        out.adopt(i);
        return true;
    }
    if (key == PMIX_QUERY_NAMESPACES) {
        std::string all;
        for (const auto &[ns, job] : clients_.jobs()) {
            if (job.registered) all += (all.empty() ? "" : ",") + ns;
        }
        auto i = load_info(k, all.c_str(), PMIX_STRING);
        out.adopt(i);
        return true;
    }
    if (key == PMIX_QUERY_NAMESPACE_INFO) {
        const pmix_info_t *want = qualifier(q, PMIX_NSPACE);
        std::vector<const JobRecord *> jobs;
        for (const auto &[ns, job] : clients_.jobs()) {
            if (!job.registered) continue;
            if (want != nullptr &&
                (want->value.type != PMIX_STRING || want->value.data.string == nullptr ||
                 ns != want->value.data.string))
                continue;
            jobs.push_back(&job);
        }
        if (jobs.empty()) return false;
        auto *outer = static_cast<pmix_info_t *>(std::calloc(jobs.size(), sizeof(pmix_info_t)));
        for (std::size_t j = 0; j < jobs.size(); ++j) {
            std::vector<pmix_info_t> inner;
            inner.push_back(load_info(PMIX_NSPACE, jobs[j]->nspace.c_str(), PMIX_STRING));
            if (jobs[j]->job_size > 0)
                inner.push_back(load_info(PMIX_JOB_SIZE, &jobs[j]->job_size, PMIX_UINT32));
            pmix_proc_t wild = proc_of({jobs[j]->nspace, PMIX_RANK_WILDCARD});
            if (auto cmd = job_string(wild, PMIX_CMD_LINE))
                inner.push_back(load_info(PMIX_CMD_LINE, cmd->c_str(), PMIX_STRING));
            auto *arr = static_cast<pmix_info_t *>(std::calloc(inner.size(), sizeof(pmix_info_t)));
            std::memcpy(arr, inner.data(), inner.size() * sizeof(pmix_info_t));
            outer[j] = make_array_info(PMIX_QUERY_NAMESPACE_INFO, PMIX_INFO, arr, inner.size());
        }
        auto i = make_array_info(k, PMIX_INFO, outer, jobs.size());
        out.adopt(i);
        return true;
    }
    const std::string ns = target_nspace(q, caller_nspace);
    const JobRecord *job = clients_.find_job(ns);
    if (job == nullptr || !job->registered) return false;
    if (key == PMIX_JOB_SIZE) {
        if (job->job_size == 0) return false;
        auto i = load_info(k, &job->job_size, PMIX_UINT32);
        out.adopt(i);
        return true;
    }
    if (key == PMIX_QUERY_PROC_TABLE || key == PMIX_QUERY_LOCAL_PROC_TABLE) {
        std::vector<pmix_rank_t> ranks;
        if (key == PMIX_QUERY_LOCAL_PROC_TABLE) {
            for (const auto &[rank, c] : job->clients) ranks.push_back(rank);
        } else {
            for (pmix_rank_t rank = 0; rank < job->job_size; ++rank) ranks.push_back(rank);
            if (job->job_size == 0) {
                for (const auto &[rank, c] : job->clients) ranks.push_back(rank);
            }
        }
        auto *table = static_cast<pmix_proc_info_t *>(
            std::calloc(ranks.size() + 1, sizeof(pmix_proc_info_t)));
        for (std::size_t j = 0; j < ranks.size(); ++j) {
            pmix_proc_info_t &pi = table[j];
            pi.proc = proc_of({ns, ranks[j]});
            if (auto host = job_string(pi.proc, PMIX_HOSTNAME)) pi.hostname = strdup(host->c_str());
            auto c = job->clients.find(ranks[j]);
            if (c != job->clients.end()) {
                pi.pid = static_cast<pid_t>(c->second.pid);
                pi.state = state_of(c->second);
            } else {
                pi.state = PMIX_PROC_STATE_UNDEF;  // served by another node's server
            }
        }
        auto i = make_array_info(k, PMIX_PROC_INFO, table, ranks.size());
        out.adopt(i);
        return true;
    }
    return false;
}

}  // namespace pmixpp::server
