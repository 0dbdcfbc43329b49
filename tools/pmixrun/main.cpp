// pmixrun -n N [-x VAR[=value]]... [--timeout SECONDS] program [args...]
//
// A single-node PMIx host built on the public server API only: it registers
// one job of N processes on this node, forks them with PMIx_server_setup_fork's
// environment, serves the upcalls it can locally (fences complete inside the
// library because every participant is local) and exits with the job's status:
//   - the status given to PMIx_Abort when a process aborts;
//   - else the first non-zero exit status (128+signal for a signal);
//   - 124 when --timeout expired; 2 for a usage error; 127 when the program
//     cannot be found.
// When a process fails without PMIx_Abort, the others get a grace period to
// notice (their PMIx calls fail) before they are terminated.
#include <pmix_server.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace {

constexpr const char *kUsage =
    "usage: pmixrun -n N [-x VAR[=value]]... [--timeout SECONDS] program [args...]\n"
    "\n"
    "Runs N copies of program as one PMIx job on this node.\n"
    "  -n, --np N           number of processes (1 or more)\n"
    "  -x VAR[=value]       export VAR to the processes (its value here, or the given one)\n"
    "  --timeout SECONDS    terminate the job after SECONDS; exit status 124\n"
    "  -h, --help           this text\n"
    "Exit status: the job's (the abort status, or the first failing process's).\n";

// Seconds the other processes get to notice a failed process before they are terminated.
constexpr int kFailureGraceSeconds = 10;

std::atomic<bool> g_aborted{false};
std::atomic<int> g_abort_status{0};

int usage_error(const std::string &message) {
    std::fprintf(stderr, "pmixrun: %s\n%s", message.c_str(), kUsage);
    return 2;
}

pmix_status_t on_abort(const pmix_proc_t *proc, void *, int status, const char msg[], pmix_proc_t[],
                       size_t, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    std::fprintf(stderr, "pmixrun: rank %u called PMIx_Abort(%d): %s\n", proc->rank, status,
                 msg != nullptr ? msg : "");
    if (!g_aborted.exchange(true)) g_abort_status = status;
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

std::string find_program(const std::string &name) {
    auto runnable = [](const std::string &p) {
        struct stat st {};
        return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
    };
    if (name.find('/') != std::string::npos) return runnable(name) ? name : "";
    const char *path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= dirs.size()) {
        std::size_t end = dirs.find(':', start);
        if (end == std::string::npos) end = dirs.size();
        std::string dir = dirs.substr(start, end - start);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (runnable(candidate)) return candidate;
        start = end + 1;
    }
    return "";
}

void add_info(std::vector<pmix_info_t> &v, const char *key, const void *data, pmix_data_type_t t) {
    v.emplace_back();
    std::memset(&v.back(), 0, sizeof(pmix_info_t));
    PMIx_Info_load(&v.back(), key, data, t);
}

std::string hostname() {
    char name[HOST_NAME_MAX + 1] = {};
    gethostname(name, sizeof name - 1);
    return name;
}

}  // namespace

int main(int argc, char **argv) {
    long nprocs = 0;
    long timeout = 0;
    std::vector<std::string> exports;
    int i = 1;
    for (; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](const char *what) -> const char * {
            if (i + 1 >= argc) return nullptr;
            (void)what;
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "-n" || a == "--np" || a == "-np") {
            const char *v = value("-n");
            char *end = nullptr;
            if (v == nullptr) return usage_error("option " + a + " needs a number");
            nprocs = std::strtol(v, &end, 10);
            if (*end != '\0' || nprocs < 1 || nprocs > 4096) {
                return usage_error(std::string("bad process count '") + v + "' (1 to 4096)");
            }
        } else if (a == "-x") {
            const char *v = value("-x");
            if (v == nullptr || *v == '\0' || *v == '=')
                return usage_error("option -x needs VAR[=value]");
            exports.emplace_back(v);
        } else if (a == "--timeout") {
            const char *v = value("--timeout");
            char *end = nullptr;
            if (v == nullptr) return usage_error("option --timeout needs a number of seconds");
            timeout = std::strtol(v, &end, 10);
            if (*end != '\0' || timeout < 1)
                return usage_error(std::string("bad timeout '") + v + "'");
        } else if (a == "--") {
            ++i;
            break;
        } else if (!a.empty() && a[0] == '-') {
            return usage_error("unknown option " + a);
        } else {
            break;
        }
    }
    if (i >= argc) return usage_error("no program given");
    if (nprocs == 0) return usage_error("missing -n N");
    const std::string program = find_program(argv[i]);
    if (program.empty()) {
        std::fprintf(stderr, "pmixrun: program '%s' not found or not executable\n", argv[i]);
        return 127;
    }
    std::vector<char *> child_argv(argv + i, argv + argc);
    child_argv.push_back(nullptr);

    signal(SIGPIPE, SIG_IGN);
    pmix_server_module_t module{};
    module.abort = on_abort;
    pmix_status_t rc = PMIx_server_init(&module, nullptr, 0);
    if (rc != PMIX_SUCCESS) {
        std::fprintf(stderr, "pmixrun: cannot start the PMIx server: %s\n", PMIx_Error_string(rc));
        return 1;
    }

    // --- the job ---
    pmix_nspace_t nspace{};
    std::snprintf(nspace, sizeof nspace, "pmixrun.%d", static_cast<int>(getpid()));
    const std::string host = hostname();
    const auto n = static_cast<uint32_t>(nprocs);
    std::string peers, ppn_input;
    for (uint32_t r = 0; r < n; ++r) peers += (r ? "," : "") + std::to_string(r);
    ppn_input = peers;
    char *node_map = nullptr, *proc_map = nullptr;
    PMIx_generate_regex(host.c_str(), &node_map);
    PMIx_generate_ppn(ppn_input.c_str(), &proc_map);

    std::vector<pmix_info_t> info;
    uint32_t zero = 0, one = 1;
    pmix_rank_t leader = 0;
    add_info(info, PMIX_JOB_SIZE, &n, PMIX_UINT32);
    add_info(info, PMIX_UNIV_SIZE, &n, PMIX_UINT32);
    add_info(info, PMIX_MAX_PROCS, &n, PMIX_UINT32);
    add_info(info, PMIX_LOCAL_SIZE, &n, PMIX_UINT32);
    add_info(info, PMIX_NODE_SIZE, &n, PMIX_UINT32);
    add_info(info, PMIX_NUM_NODES, &one, PMIX_UINT32);
    add_info(info, PMIX_JOB_NUM_APPS, &one, PMIX_UINT32);
    add_info(info, PMIX_NPROC_OFFSET, &zero, PMIX_PROC_RANK);
    add_info(info, PMIX_LOCAL_PEERS, peers.c_str(), PMIX_STRING);
    add_info(info, PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
    add_info(info, PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
    add_info(info, PMIX_NODEID, &zero, PMIX_UINT32);
    add_info(info, PMIX_NODE_MAP, node_map, PMIX_STRING);
    add_info(info, PMIX_PROC_MAP, proc_map, PMIX_STRING);
    add_info(info, PMIX_JOBID, nspace, PMIX_STRING);
    std::free(node_map);
    std::free(proc_map);
    for (uint32_t r = 0; r < n; ++r) {
        std::vector<pmix_info_t> pd;
        pmix_rank_t rank = r;
        uint16_t lrank = static_cast<uint16_t>(r);
        add_info(pd, PMIX_RANK, &rank, PMIX_PROC_RANK);
        add_info(pd, PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK);
        add_info(pd, PMIX_APP_RANK, &rank, PMIX_PROC_RANK);
        add_info(pd, PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
        add_info(pd, PMIX_NODE_RANK, &lrank, PMIX_UINT16);
        add_info(pd, PMIX_NODEID, &zero, PMIX_UINT32);
        add_info(pd, PMIX_APPNUM, &zero, PMIX_UINT32);
        add_info(pd, PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
        pmix_data_array_t darray{PMIX_INFO, pd.size(), pd.data()};
        add_info(info, PMIX_PROC_DATA, &darray, PMIX_DATA_ARRAY);
        for (auto &x : pd) PMIx_Value_destruct(&x.value);
    }
    for (uint32_t r = 0; r < n; ++r) {
        pmix_proc_t proc{};
        std::memcpy(proc.nspace, nspace, sizeof nspace);
        proc.rank = r;
        rc = PMIx_server_register_client(&proc, getuid(), getgid(), nullptr, nullptr, nullptr);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
            std::fprintf(stderr, "pmixrun: register_client: %s\n", PMIx_Error_string(rc));
            return 1;
        }
    }
    rc = PMIx_server_register_nspace(nspace, static_cast<int>(n), info.data(), info.size(), nullptr,
                                     nullptr);
    for (auto &x : info) PMIx_Value_destruct(&x.value);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        std::fprintf(stderr, "pmixrun: register_nspace: %s\n", PMIx_Error_string(rc));
        return 1;
    }

    // --- launch ---
    std::vector<std::string> base_env;
    for (char **e = environ; *e != nullptr; ++e) base_env.emplace_back(*e);
    for (const auto &x : exports) {
        auto eq = x.find('=');
        std::string name = x.substr(0, eq);
        std::string entry;
        if (eq != std::string::npos) {
            entry = x;
        } else if (const char *v = std::getenv(name.c_str())) {
            entry = name + "=" + v;
        } else {
            continue;
        }
        std::erase_if(base_env, [&](const std::string &e) { return e.rfind(name + "=", 0) == 0; });
        base_env.push_back(entry);
    }
    std::map<pid_t, uint32_t> children;
    for (uint32_t r = 0; r < n; ++r) {
        pmix_proc_t proc{};
        std::memcpy(proc.nspace, nspace, sizeof nspace);
        proc.rank = r;
        char **env = static_cast<char **>(std::calloc(base_env.size() + 1, sizeof(char *)));
        for (std::size_t k = 0; k < base_env.size(); ++k) env[k] = strdup(base_env[k].c_str());
        rc = PMIx_server_setup_fork(&proc, &env);
        if (rc != PMIX_SUCCESS) {
            std::fprintf(stderr, "pmixrun: setup_fork for rank %u: %s\n", r, PMIx_Error_string(rc));
            return 1;
        }
        pid_t pid = fork();
        if (pid == 0) {
            execve(program.c_str(), child_argv.data(), env);
            std::fprintf(stderr, "pmixrun: cannot execute %s: %s\n", program.c_str(),
                         std::strerror(errno));
            _exit(127);
        }
        for (char **e = env; *e != nullptr; ++e) std::free(*e);
        std::free(env);
        if (pid < 0) {
            std::fprintf(stderr, "pmixrun: fork: %s\n", std::strerror(errno));
            break;
        }
        children[pid] = r;
    }

    // --- wait ---
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    auto kill_deadline = clock::time_point::max();
    bool terminated = false, timed_out = false;
    int job_status = 0;
    auto terminate_all = [&](int sig) {
        for (const auto &[pid, rank] : children) kill(pid, sig);
    };
    while (!children.empty()) {
        int st = 0;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid > 0) {
            auto it = children.find(pid);
            if (it == children.end()) continue;
            const uint32_t rank = it->second;
            children.erase(it);
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            if (code != 0 && !g_aborted && !terminated) {
                if (WIFSIGNALED(st)) {
                    std::fprintf(stderr, "pmixrun: rank %u (pid %d) killed by signal %d\n", rank,
                                 static_cast<int>(pid), WTERMSIG(st));
                } else {
                    std::fprintf(stderr, "pmixrun: rank %u (pid %d) exited with status %d\n", rank,
                                 static_cast<int>(pid), code);
                }
                if (job_status == 0) job_status = code;
                if (kill_deadline == clock::time_point::max()) {
                    kill_deadline = clock::now() + std::chrono::seconds(kFailureGraceSeconds);
                }
            }
            continue;
        }
        if (pid < 0 && errno != EINTR) break;
        const auto now = clock::now();
        if (g_aborted && !terminated) {
            terminated = true;
            terminate_all(SIGTERM);
            kill_deadline = now + std::chrono::seconds(3);
        } else if (timeout > 0 && !timed_out && now - start > std::chrono::seconds(timeout)) {
            std::fprintf(stderr, "pmixrun: job timed out after %ld s; terminating it\n", timeout);
            timed_out = terminated = true;
            terminate_all(SIGTERM);
            kill_deadline = now + std::chrono::seconds(3);
        } else if (now > kill_deadline) {
            if (!terminated) {
                terminated = true;
                terminate_all(SIGTERM);
                kill_deadline = now + std::chrono::seconds(3);
            } else {
                terminate_all(SIGKILL);
                kill_deadline = clock::time_point::max();
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }

    for (uint32_t r = 0; r < n; ++r) {
        pmix_proc_t proc{};
        std::memcpy(proc.nspace, nspace, sizeof nspace);
        proc.rank = r;
        PMIx_server_deregister_client(&proc, nullptr, nullptr);
    }
    PMIx_server_deregister_nspace(nspace, nullptr, nullptr);
    PMIx_server_finalize();
    if (g_aborted) return g_abort_status.load() != 0 ? g_abort_status.load() : 1;
    if (timed_out) return 124;
    return job_status;
}
