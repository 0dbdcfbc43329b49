// pmix_ps [--pid PID | --nspace NS | --uri URI | --system] [--job NS]
//
// Lists the jobs and processes a running PMIx server knows, through the tool
// API only (PMIx_tool_init + PMIx_Query_info; docs/tools.md, "pmix_ps"): for
// each namespace its state and size, then one line per process: rank, pid,
// host, state, exit code, executable. Without an option the server is found
// as PMIx_tool_init finds it (the system server, else the one session
// server). Exit status: 0 listed, 1 cannot connect or query, 2 usage.
#include <pmix_tool.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr const char *kUsage =
    "usage: pmix_ps [--pid PID | --nspace NS | --uri URI | --system] [--job NS]\n"
    "  --pid PID     the server with that pid (its rendezvous file)\n"
    "  --nspace NS   the server whose namespace is NS\n"
    "  --uri URI     the server at URI\n"
    "  --system      the node's system server\n"
    "  --job NS      list only job NS\n";

// One query; the answers of its PMIX_QUERY_RESULTS entry (qualifiers skipped)
// are passed to `use`. Returns the query's status.
template <typename Use>
pmix_status_t query(std::vector<const char *> keys, const std::string &nspace, Use use) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc = PMIX_SUCCESS;
    for (const char *k : keys) PMIX_ARGV_APPEND(rc, q.keys, k);
    if (!nspace.empty()) {
        PMIX_INFO_CREATE(q.qualifiers, 1);
        q.nqual = 1;
        PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, nspace.c_str(), PMIX_STRING);
    }
    pmix_info_t *results = nullptr;
    size_t nresults = 0;
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    PMIX_QUERY_DESTRUCT(&q);
    for (size_t r = 0; r < nresults; ++r) {
        const pmix_info_t &res = results[r];
        if (!PMIX_CHECK_KEY(&res, PMIX_QUERY_RESULTS) || res.value.type != PMIX_DATA_ARRAY ||
            res.value.data.darray == nullptr || res.value.data.darray->type != PMIX_INFO)
            continue;
        const auto *a = static_cast<const pmix_info_t *>(res.value.data.darray->array);
        for (size_t k = 0; k < res.value.data.darray->size; ++k) {
            if (!PMIX_CHECK_KEY(&a[k], PMIX_QUERY_QUALIFIERS)) use(a[k]);
        }
    }
    if (results != nullptr) PMIX_INFO_FREE(results, nresults);
    return rc;
}

std::vector<std::string> split(const std::string &s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < s.size()) {
        size_t end = s.find(',', start);
        if (end == std::string::npos) end = s.size();
        if (end > start) out.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

int list_job(const std::string &ns) {
    pmix_job_state_t jstate = PMIX_JOB_STATE_UNDEF;
    std::vector<pmix_proc_info_t> procs;
    std::vector<std::string> hosts, exes;
    pmix_status_t rc =
        query({PMIX_QUERY_JOB_STATUS, PMIX_QUERY_PROC_TABLE}, ns, [&](const pmix_info_t &i) {
            if (PMIX_CHECK_KEY(&i, PMIX_QUERY_JOB_STATUS) && i.value.type == PMIX_JOB_STATE) {
                jstate = i.value.data.jstate;
            } else if (PMIX_CHECK_KEY(&i, PMIX_QUERY_PROC_TABLE) &&
                       i.value.type == PMIX_DATA_ARRAY &&
                       i.value.data.darray->type == PMIX_PROC_INFO) {
                const auto *t = static_cast<const pmix_proc_info_t *>(i.value.data.darray->array);
                for (size_t k = 0; k < i.value.data.darray->size; ++k) {
                    procs.push_back(t[k]);
                    hosts.emplace_back(t[k].hostname != nullptr ? t[k].hostname : "?");
                    exes.emplace_back(t[k].executable_name != nullptr ? t[k].executable_name : "?");
                }
            }
        });
    if (rc != PMIX_SUCCESS && rc != PMIX_ERR_PARTIAL_SUCCESS) {
        std::printf("%s: %s\n", ns.c_str(), PMIx_Error_string(rc));
        return 1;
    }
    std::printf("JOB %s  state %s  procs %zu\n", ns.c_str(),
                jstate == PMIX_JOB_STATE_UNDEF ? "unknown" : PMIx_Job_state_string(jstate),
                procs.size());
    std::printf("  %-6s %-8s %-20s %-16s %-5s %s\n", "RANK", "PID", "HOST", "STATE", "EXIT",
                "EXECUTABLE");
    for (size_t k = 0; k < procs.size(); ++k) {
        std::printf("  %-6u %-8d %-20s %-16s %-5d %s\n", procs[k].proc.rank,
                    static_cast<int>(procs[k].pid), hosts[k].c_str(),
                    PMIx_Proc_state_string(procs[k].state), procs[k].exit_code, exes[k].c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<pmix_info_t> info;
    std::string only;
    bool yes = true;
    pid_t pid = 0;
    for (int a = 1; a < argc; ++a) {
        const std::string arg = argv[a];
        auto value = [&]() -> const char * { return a + 1 < argc ? argv[++a] : nullptr; };
        pmix_info_t i;
        PMIX_INFO_CONSTRUCT(&i);
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (arg == "--pid") {
            const char *v = value();
            char *end = nullptr;
            if (v == nullptr || (pid = static_cast<pid_t>(std::strtol(v, &end, 10))) <= 0 ||
                *end != '\0') {
                std::fprintf(stderr, "pmix_ps: --pid needs a process id\n%s", kUsage);
                return 2;
            }
            PMIX_INFO_LOAD(&i, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
        } else if (arg == "--nspace" || arg == "--uri") {
            const char *v = value();
            if (v == nullptr) {
                std::fprintf(stderr, "pmix_ps: %s needs a value\n%s", arg.c_str(), kUsage);
                return 2;
            }
            PMIX_INFO_LOAD(&i, arg == "--uri" ? PMIX_SERVER_URI : PMIX_SERVER_NSPACE, v,
                           PMIX_STRING);
        } else if (arg == "--system") {
            PMIX_INFO_LOAD(&i, PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
        } else if (arg == "--job") {
            const char *v = value();
            if (v == nullptr) {
                std::fprintf(stderr, "pmix_ps: --job needs a namespace\n%s", kUsage);
                return 2;
            }
            only = v;
            continue;
        } else {
            std::fprintf(stderr, "pmix_ps: unknown argument %s\n%s", arg.c_str(), kUsage);
            return 2;
        }
        info.push_back(i);
    }
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, info.data(), info.size());
    for (auto &i : info) PMIX_INFO_DESTRUCT(&i);
    if (rc != PMIX_SUCCESS) {
        std::fprintf(stderr, "pmix_ps: cannot connect to a PMIx server: %s\n",
                     PMIx_Error_string(rc));
        return 1;
    }
    std::vector<std::string> jobs;
    if (!only.empty()) {
        jobs.push_back(only);
    } else {
        rc = query({PMIX_QUERY_NAMESPACES}, "", [&](const pmix_info_t &i) {
            if (PMIX_CHECK_KEY(&i, PMIX_QUERY_NAMESPACES) && i.value.type == PMIX_STRING)
                jobs = split(i.value.data.string);
        });
        if (rc != PMIX_SUCCESS) {
            std::fprintf(stderr, "pmix_ps: cannot list the namespaces: %s\n",
                         PMIx_Error_string(rc));
            PMIx_tool_finalize();
            return 1;
        }
    }
    pmix_proc_t *servers = nullptr;
    size_t nservers = 0;
    if (PMIx_tool_get_servers(&servers, &nservers) == PMIX_SUCCESS && nservers > 0) {
        std::printf("SERVER %s:%u  jobs %zu\n", servers[0].nspace, servers[0].rank, jobs.size());
        PMIX_PROC_FREE(servers, nservers);
    }
    int status = 0;
    for (const auto &ns : jobs) status |= list_job(ns);
    PMIx_tool_finalize();
    return status;
}
