#include "tools.hpp"
#include "events.hpp"
#include "launcher.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <functional>
#include <set>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace pmixrun {

namespace {

std::atomic<unsigned> g_next_tool{0};

// The PMIx_Spawn attributes pmixrun acts on (launcher.cpp, spawn_upcall):
// answered for PMIX_QUERY_SPAWN_SUPPORT and registered for "spawn".
constexpr const char *kSpawnAttributes[] = {PMIX_WDIR, PMIX_NOTIFY_PROC_TERMINATION,
                                            PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION,
                                            PMIX_NOTIFY_COMPLETION, PMIX_EVENT_SILENT_TERMINATION};
// The debugger attributes of a spawn (launcher.cpp).
constexpr const char *kDebugSpawnAttributes[] = {
    PMIX_DEBUG_STOP_IN_INIT, PMIX_DEBUG_STOP_ON_EXEC,     PMIX_DEBUG_STOP_IN_APP,
    PMIX_DEBUG_TARGET,       PMIX_DEBUG_DAEMONS_PER_PROC, PMIX_DEBUG_DAEMONS_PER_NODE};

void on_tool_connected(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                       void *cbdata) {
    pmix_proc_t proc;
    PMIX_PROC_CONSTRUCT(&proc);
    bool named = false, uid_ok = false;
    proc.rank = 0;
    for (size_t i = 0; i < ninfo; ++i) {
        const pmix_info_t &x = info[i];
        if (PMIX_CHECK_KEY(&x, PMIX_TOOL_NSPACE) && x.value.type == PMIX_STRING &&
            x.value.data.string != nullptr) {
            PMIX_LOAD_NSPACE(proc.nspace, x.value.data.string);
            named = true;
        } else if (PMIX_CHECK_KEY(&x, PMIX_TOOL_RANK) && x.value.type == PMIX_UINT32) {
            proc.rank = x.value.data.uint32;
        } else if (PMIX_CHECK_KEY(&x, PMIX_USERID) && x.value.type == PMIX_UINT32) {
            uid_ok = x.value.data.uint32 == static_cast<uint32_t>(getuid());
        }
    }
    if (!uid_ok) {
        std::fprintf(stderr, "pmixrun: refused a tool of another user\n");
        cbfunc(PMIX_ERR_NO_PERMISSIONS, nullptr, cbdata);
        return;
    }
    if (!named) {
        std::string host = hostname();
        if (host.empty()) host = "localhost";
        const std::string ns = host + ".pmixrun-" + std::to_string(getpid()) + ".tool-" +
                               std::to_string(g_next_tool++);
        PMIX_LOAD_NSPACE(proc.nspace, ns.c_str());
        proc.rank = 0;
    }
    cbfunc(PMIX_SUCCESS, &proc, cbdata);
}

// --- the proc table and the query upcall ---

struct ProcRecord {
    pid_t pid = 0;
    std::string program;
    bool started = false;  // false: registered, its launch under way (pid 0)
    bool ended = false;
    int code = 0;
    bool by_signal = false;
};

std::mutex g_table_mutex;
std::map<std::string, std::map<pmix_rank_t, ProcRecord>> g_table;  // under g_table_mutex

pmix_proc_state_t state_of(const ProcRecord &r) {
    if (!r.started) return PMIX_PROC_STATE_LAUNCH_UNDERWAY;
    if (!r.ended) return PMIX_PROC_STATE_RUNNING;
    if (r.by_signal) return PMIX_PROC_STATE_ABORTED_BY_SIG;
    return r.code == 0 ? PMIX_PROC_STATE_TERMINATED : PMIX_PROC_STATE_TERM_NON_ZERO;
}

// VmRSS of /proc/<pid>/status in megabytes.
std::optional<double> resident_mb(pid_t pid) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
    }
    return std::nullopt;
}

const char *qualifier_nspace(const pmix_query_t &q) {
    for (size_t i = 0; q.qualifiers != nullptr && i < q.nqual; ++i) {
        const pmix_info_t &x = q.qualifiers[i];
        if (PMIX_CHECK_KEY(&x, PMIX_NSPACE) && x.value.type == PMIX_STRING)
            return x.value.data.string;
        if (PMIX_CHECK_KEY(&x, PMIX_PROCID) && x.value.type == PMIX_PROC &&
            x.value.data.proc != nullptr)
            return x.value.data.proc->nspace;
    }
    return nullptr;
}

// Whether the query has a true bool qualifier `key`.
bool qualifier_set(const pmix_query_t &q, const char *key) {
    for (size_t i = 0; q.qualifiers != nullptr && i < q.nqual; ++i) {
        const pmix_info_t &x = q.qualifiers[i];
        if (PMIX_CHECK_KEY(&x, key))
            return x.value.type == PMIX_UNDEF || (x.value.type == PMIX_BOOL && x.value.data.flag);
    }
    return false;
}

// One answer per key it knows, for the job `ns` (the requester's if no
// qualifier names one), with `minmax` (PMIX_QUERY_REPORT_MINMAX) asked or
// not. Caller holds g_table_mutex.
bool answer(const std::string &key, const std::string &ns, bool minmax, pmix_info_t &out) {
    PMIX_INFO_CONSTRUCT(&out);
    if (key == PMIX_QUERY_SPAWN_SUPPORT) {
        // The PMIx_Spawn attributes pmixrun acts on (launcher.cpp, spawn_upcall).
        std::string list;
        for (const char *a : kSpawnAttributes) list += (list.empty() ? "" : ",") + std::string(a);
        PMIX_INFO_LOAD(&out, key.c_str(), list.c_str(), PMIX_STRING);
        return true;
    }
    if (key == PMIX_QUERY_DEBUG_SUPPORT) {
        // The debugger attributes pmixrun acts on (spawn_upcall).
        const std::string list = std::string(PMIX_DEBUG_STOP_IN_INIT) + "," +
                                 PMIX_DEBUG_STOP_ON_EXEC + "," + PMIX_DEBUG_STOP_IN_APP;
        PMIX_INFO_LOAD(&out, key.c_str(), list.c_str(), PMIX_STRING);
        return true;
    }
    if (key == PMIX_QUERY_MEMORY_USAGE) {
        // pmixrun's resident memory and the average of the running processes
        // (of the job named, else of all jobs), in megabytes. Every process is
        // local, so PMIX_QUERY_LOCAL_ONLY changes nothing, and the average is
        // what is reported (PMIX_QUERY_REPORT_AVG). PMIX_QUERY_REPORT_MINMAX
        // adds an entry of that key: a DATA_ARRAY of two FLOATs, the smallest
        // and the largest process (docs/tools.md, "Queries").
        double sum = 0, least = 0, most = 0;
        std::size_t count = 0;
        const bool one = g_table.count(ns) != 0;
        for (const auto &[job_ns, ranks] : g_table) {
            if (one && job_ns != ns) continue;
            for (const auto &[rank, r] : ranks) {
                if (r.ended) continue;
                if (auto mb = resident_mb(r.pid)) {
                    least = count == 0 ? *mb : std::min(least, *mb);
                    most = count == 0 ? *mb : std::max(most, *mb);
                    sum += *mb;
                    ++count;
                }
            }
        }
        const auto self = resident_mb(getpid());
        if (!self || count == 0) return false;
        float daemon = static_cast<float>(*self);
        float avg = static_cast<float>(sum / static_cast<double>(count));
        float range[2] = {static_cast<float>(least), static_cast<float>(most)};
        pmix_data_array_t range_array{PMIX_FLOAT, 2, range};
        pmix_info_t fields[3];
        const std::size_t nfields = minmax ? 3 : 2;
        for (auto &f : fields) PMIX_INFO_CONSTRUCT(&f);
        PMIX_INFO_LOAD(&fields[0], PMIX_DAEMON_MEMORY, &daemon, PMIX_FLOAT);
        PMIX_INFO_LOAD(&fields[1], PMIX_CLIENT_AVG_MEMORY, &avg, PMIX_FLOAT);
        if (minmax)
            PMIX_INFO_LOAD(&fields[2], PMIX_QUERY_REPORT_MINMAX, &range_array, PMIX_DATA_ARRAY);
        pmix_data_array_t darray{PMIX_INFO, nfields, fields};
        PMIX_INFO_LOAD(&out, key.c_str(), &darray, PMIX_DATA_ARRAY);  // copies
        for (auto &f : fields) PMIX_INFO_DESTRUCT(&f);
        return true;
    }
    auto job = g_table.find(ns);
    if (job == g_table.end()) return false;
    if (key == PMIX_QUERY_JOB_STATUS) {
        pmix_job_state_t state = PMIX_JOB_STATE_TERMINATED;
        bool running = false, failed = false;
        for (const auto &[rank, r] : job->second) {
            running |= !r.ended;
            failed |= r.ended && (r.code != 0 || r.by_signal);
        }
        if (running) {
            state = PMIX_JOB_STATE_RUNNING;
        } else if (failed) {
            state = PMIX_JOB_STATE_TERMINATED_WITH_ERROR;
        }
        PMIX_INFO_LOAD(&out, key.c_str(), &state, PMIX_JOB_STATE);
        return true;
    }
    if (key == PMIX_QUERY_PROC_TABLE || key == PMIX_QUERY_LOCAL_PROC_TABLE) {
        // Every process of a pmixrun job runs on this node: both tables are the same.
        pmix_proc_info_t *table = nullptr;
        const size_t n = job->second.size();
        PMIX_PROC_INFO_CREATE(table, n);
        const std::string host = hostname();
        size_t k = 0;
        for (const auto &[rank, r] : job->second) {
            pmix_proc_info_t &pi = table[k++];
            PMIX_LOAD_PROCID(&pi.proc, ns.c_str(), rank);
            pi.hostname = strdup(host.c_str());
            pi.executable_name = strdup(r.program.c_str());
            pi.pid = r.pid;
            pi.exit_code = r.ended ? r.code : 0;
            pi.state = state_of(r);
        }
        pmix_data_array_t darray{PMIX_PROC_INFO, n, table};
        PMIX_INFO_LOAD(&out, key.c_str(), &darray, PMIX_DATA_ARRAY);  // copies
        PMIX_PROC_INFO_FREE(table, n);
        return true;
    }
    return false;
}

void release_answers(void *cbdata) {
    auto *a = static_cast<std::vector<pmix_info_t> *>(cbdata);
    for (auto &i : *a) PMIX_INFO_DESTRUCT(&i);
    delete a;
}

pmix_status_t on_query(pmix_proc_t *requester, pmix_query_t *queries, size_t nqueries,
                       pmix_info_cbfunc_t cbfunc, void *cbdata) {
    if (cbfunc == nullptr) return PMIX_ERR_BAD_PARAM;
    auto *answers = new std::vector<pmix_info_t>;
    size_t asked = 0;
    {
        std::lock_guard lock(g_table_mutex);
        for (size_t q = 0; q < nqueries; ++q) {
            const char *named = qualifier_nspace(queries[q]);
            const std::string ns = named != nullptr       ? named
                                   : requester != nullptr ? requester->nspace
                                                          : "";
            for (char **k = queries[q].keys; k != nullptr && *k != nullptr; ++k) {
                ++asked;
                pmix_info_t out;
                if (answer(*k, ns, qualifier_set(queries[q], PMIX_QUERY_REPORT_MINMAX), out))
                    answers->push_back(out);
            }
        }
    }
    if (answers->empty()) {
        delete answers;
        return PMIX_ERR_NOT_FOUND;
    }
    const pmix_status_t status = answers->size() < asked ? PMIX_ERR_PARTIAL_SUCCESS : PMIX_SUCCESS;
    cbfunc(status, answers->data(), answers->size(), cbdata, release_answers, answers);
    return PMIX_SUCCESS;
}

}  // namespace

void tools_proc_launching(const pmix_proc_t &proc, const std::string &program) {
    std::lock_guard lock(g_table_mutex);
    ProcRecord &r = g_table[proc.nspace][proc.rank];
    r = ProcRecord{};
    r.program = program;
}

pid_t tools_spawn_recorded(const pmix_proc_t &proc, const std::string &program,
                           const std::function<pid_t()> &spawn) {
    // Under the table's lock: a query of the new process itself (answered on
    // the server's thread) cannot overtake the record of its pid.
    std::lock_guard lock(g_table_mutex);
    const pid_t pid = spawn();
    if (pid <= 0) return pid;
    ProcRecord &r = g_table[proc.nspace][proc.rank];
    r = ProcRecord{};
    r.pid = pid;
    r.program = program;
    r.started = true;
    return pid;
}

std::size_t tools_job_procs(const std::string &nspace) {
    std::lock_guard lock(g_table_mutex);
    auto job = g_table.find(nspace);
    return job == g_table.end() ? 0 : job->second.size();
}

void tools_proc_ended(const std::string &nspace, pmix_rank_t rank, int code, bool by_signal) {
    std::lock_guard lock(g_table_mutex);
    ProcRecord &r = g_table[nspace][rank];
    r.ended = true;
    r.code = code;  // 128 + the signal for a signal (launcher.cpp)
    r.by_signal = by_signal;
}

namespace {

// PMIX_DEBUG_STOP_IN_INIT / _STOP_IN_APP: per job and kind (in init or
// not), who spawned it and which targeted ranks have not announced
// PMIX_READY_FOR_DEBUG yet.
struct DebugStop {
    pmix_proc_t spawner{};
    std::vector<pmix_rank_t> targets;
    std::set<pmix_rank_t> waiting;
    std::string breakpoint;  // the first one announced
};
std::mutex g_stop_mutex;
std::map<std::pair<std::string, bool>, DebugStop> g_stops;  // under g_stop_mutex

}  // namespace

void tools_debug_stops(const std::string &nspace, const pmix_proc_t &spawner,
                       std::vector<pmix_rank_t> ranks, bool in_init) {
    std::lock_guard lock(g_stop_mutex);
    DebugStop &s = g_stops[{nspace, in_init}];
    s.spawner = spawner;
    s.waiting = std::set<pmix_rank_t>(ranks.begin(), ranks.end());
    s.targets = std::move(ranks);
}

void tools_ready_for_debug(const pmix_proc_t &source, const pmix_info_t info[], size_t ninfo) {
    std::string breakpoint;
    for (size_t k = 0; info != nullptr && k < ninfo; ++k) {
        if (PMIX_CHECK_KEY(&info[k], PMIX_BREAKPOINT) && info[k].value.type == PMIX_STRING &&
            info[k].value.data.string != nullptr)
            breakpoint = info[k].value.data.string;
    }
    const bool in_init = breakpoint == "pmix-init";  // client/debug.cpp's breakpoint
    DebugStop done;
    std::string nspace;
    {
        std::lock_guard lock(g_stop_mutex);
        auto it = g_stops.find(
            {std::string(source.nspace, strnlen(source.nspace, PMIX_MAX_NSLEN)), in_init});
        if (it == g_stops.end() || it->second.waiting.erase(source.rank) == 0) return;
        if (it->second.breakpoint.empty()) it->second.breakpoint = breakpoint;
        if (!it->second.waiting.empty()) return;
        nspace = it->first.first;
        done = std::move(it->second);
        g_stops.erase(it);  // once per job
    }
    raise_ready_for_debug(done.spawner, nspace, done.targets, done.breakpoint);
}

void install_tool_services(pmix_server_module_t &module) {
    module.tool_connected = on_tool_connected;
    module.query = on_query;
}

pmix_status_t register_tool_attributes() {
    std::vector<char *> spawn;
    for (const char *a : kSpawnAttributes) spawn.push_back(const_cast<char *>(a));
    for (const char *a : kDebugSpawnAttributes) spawn.push_back(const_cast<char *>(a));
    spawn.push_back(nullptr);
    // The qualifiers on_query reads, and what on_tool_connected reads.
    char *query[] = {const_cast<char *>(PMIX_NSPACE),
                     const_cast<char *>(PMIX_PROCID),
                     const_cast<char *>(PMIX_QUERY_LOCAL_ONLY),
                     const_cast<char *>(PMIX_QUERY_REPORT_AVG),
                     const_cast<char *>(PMIX_QUERY_REPORT_MINMAX),
                     nullptr};
    char *tool[] = {const_cast<char *>(PMIX_TOOL_NSPACE), const_cast<char *>(PMIX_TOOL_RANK),
                    const_cast<char *>(PMIX_USERID), nullptr};
    const std::pair<const char *, char **> all[] = {
        {"spawn", spawn.data()}, {"query", query}, {"tool_connected", tool}};
    for (const auto &[fn, attrs] : all) {
        const pmix_status_t rc = PMIx_Register_attributes(const_cast<char *>(fn), attrs);
        if (rc != PMIX_SUCCESS) return rc;
    }
    return PMIX_SUCCESS;
}

}  // namespace pmixrun
