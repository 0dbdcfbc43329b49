#include "launcher.hpp"

#include "binding.hpp"
#include "events.hpp"
#include "job_control.hpp"
#include "job_services.hpp"
#include "session_dirs.hpp"
#include "signals.hpp"
#include "tools.hpp"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace pmixrun {

namespace {

// Seconds the other processes get to notice a failed process before they are terminated.
constexpr int kFailureGraceSeconds = 10;

Launcher *g_current = nullptr;

bool is_directory(const std::string &p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Waits for the callback of a non-blocking server call made on this thread.
template <class T>
struct Waiter {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    T value{};
    void complete(T v) {
        std::lock_guard lock(m);
        value = std::move(v);
        done = true;
        cv.notify_all();
    }
    T wait() {
        std::unique_lock lock(m);
        cv.wait(lock, [this] { return done; });
        return std::move(value);
    }
};

// setup_application's answer, to hand to setup_local_support.
struct SetupResult {
    pmix_status_t status = PMIX_ERROR;
    std::vector<pmix_info_t> info;
};

void on_setup_application(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *cbdata,
                          pmix_op_cbfunc_t release, void *release_data) {
    SetupResult r;
    r.status = status;
    for (size_t k = 0; info != nullptr && k < ninfo; ++k) {
        r.info.emplace_back();
        std::memset(&r.info.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_xfer(&r.info.back(), &info[k]);
    }
    if (release != nullptr) release(PMIX_SUCCESS, release_data);
    static_cast<Waiter<SetupResult> *>(cbdata)->complete(std::move(r));
}

void on_op(pmix_status_t status, void *cbdata) {
    static_cast<Waiter<pmix_status_t> *>(cbdata)->complete(status);
}

// PMIx_server_setup_application, then PMIx_server_setup_local_support with
// what it answered: the launch flow of a real RM, on one node.
pmix_status_t set_up_job(const std::string &nspace, const char *node_map, const char *proc_map) {
    std::vector<pmix_info_t> request;
    bool yes = true;
    add_info(request, PMIX_NODE_MAP, node_map, PMIX_STRING);
    add_info(request, PMIX_PROC_MAP, proc_map, PMIX_STRING);
    add_info(request, PMIX_SETUP_APP_ENVARS, &yes, PMIX_BOOL);
    if (std::uint32_t ports = tcp_ports(); ports > 0) {  // --tcp-ports (binding.hpp)
        std::vector<pmix_info_t> fabric;
        const std::string id = "pmixrun-tcp-" + nspace;
        add_info(fabric, PMIX_ALLOC_FABRIC_ID, id.c_str(), PMIX_STRING);
        add_info(fabric, PMIX_ALLOC_FABRIC_TYPE, "tcp", PMIX_STRING);
        add_info(fabric, PMIX_ALLOC_FABRIC_ENDPTS, &ports, PMIX_UINT32);
        pmix_data_array_t array{PMIX_INFO, fabric.size(), fabric.data()};
        add_info(request, PMIX_ALLOC_FABRIC, &array, PMIX_DATA_ARRAY);
        for (auto &x : fabric) PMIx_Value_destruct(&x.value);
    }
    Waiter<SetupResult> app;
    pmix_status_t rc = PMIx_server_setup_application(nspace.c_str(), request.data(), request.size(),
                                                     on_setup_application, &app);
    for (auto &x : request) PMIx_Value_destruct(&x.value);
    if (rc != PMIX_SUCCESS) return rc;
    SetupResult r = app.wait();
    if (r.status != PMIX_SUCCESS) return r.status;
    Waiter<pmix_status_t> local;
    rc = PMIx_server_setup_local_support(nspace.c_str(), r.info.data(), r.info.size(), on_op,
                                         &local);
    for (auto &x : r.info) PMIx_Value_destruct(&x.value);
    if (rc == PMIX_OPERATION_SUCCEEDED) return PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS) return rc;
    return local.wait();
}

std::string program_path(const AppSpec &app) {
    if (!app.cwd.empty() && app.program.find('/') != std::string::npos && app.program[0] != '/') {
        return find_program(app.cwd + "/" + app.program);
    }
    return find_program(app.program);
}

// The ranks whose handshake reached the host (client_connected_upcall).
std::mutex g_connected_mutex;
std::set<std::pair<std::string, pmix_rank_t>> g_connected;

bool ever_connected(const std::string &nspace, pmix_rank_t rank) {
    std::lock_guard lock(g_connected_mutex);
    return g_connected.count({nspace, rank}) != 0;
}

}  // namespace

pmix_status_t client_connected_upcall(const pmix_proc_t *proc, void *, pmix_info_t[], size_t,
                                      pmix_op_cbfunc_t, void *) {
    std::lock_guard lock(g_connected_mutex);
    g_connected.insert({proc->nspace, proc->rank});
    return PMIX_OPERATION_SUCCEEDED;
}

std::string find_program(const std::string &name) {
    auto runnable = [](const std::string &p) {
        struct stat st {};
        return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
    };
    if (name.empty()) return "";
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

Launcher::Launcher(std::vector<std::string> base_env) : base_env_(std::move(base_env)) {
    g_current = this;
}

Launcher::~Launcher() {
    g_current = nullptr;
}

Launcher *Launcher::current() {
    return g_current;
}

pmix_status_t Launcher::launch(const JobSpec &spec, std::string &nspace_out) {
    // --- check everything before registering anything ---
    if (spec.apps.empty()) return PMIX_ERR_BAD_PARAM;
    std::vector<std::string> paths;
    std::uint32_t n = 0;
    for (const auto &app : spec.apps) {
        if (app.nprocs < 1) return PMIX_ERR_BAD_PARAM;
        if (!app.cwd.empty() && !is_directory(app.cwd)) {
            std::fprintf(stderr, "pmixrun: working directory '%s' not found\n", app.cwd.c_str());
            return PMIX_ERR_JOB_WDIR_NOT_FOUND;
        }
        paths.push_back(program_path(app));
        if (paths.back().empty()) {
            std::fprintf(stderr, "pmixrun: program '%s' not found or not executable\n",
                         app.program.c_str());
            return PMIX_ERR_JOB_EXE_NOT_FOUND;
        }
        n += app.nprocs;
    }

    // --- the job's info ---
    pmix_nspace_t nspace{};
    if (jobs_.empty()) {
        std::snprintf(nspace, sizeof nspace, "pmixrun.%d", static_cast<int>(getpid()));
    } else {
        std::snprintf(nspace, sizeof nspace, "pmixrun.%d.%zu", static_cast<int>(getpid()),
                      jobs_.size());
    }
    const std::string host = hostname();
    std::string peers;
    for (uint32_t r = 0; r < n; ++r) peers += (r ? "," : "") + std::to_string(r);
    char *node_map = nullptr, *proc_map = nullptr;
    PMIx_generate_regex(host.c_str(), &node_map);
    PMIx_generate_ppn(peers.c_str(), &proc_map);

    std::vector<pmix_info_t> info;
    uint32_t zero = 0, one = 1, napps = static_cast<uint32_t>(spec.apps.size());
    pmix_rank_t leader = 0, offset = universe_;
    add_info(info, PMIX_JOB_SIZE, &n, PMIX_UINT32);
    add_info(info, PMIX_UNIV_SIZE, &n, PMIX_UINT32);
    add_info(info, PMIX_MAX_PROCS, &n, PMIX_UINT32);
    add_info(info, PMIX_LOCAL_SIZE, &n, PMIX_UINT32);
    add_info(info, PMIX_NODE_SIZE, &n, PMIX_UINT32);
    add_info(info, PMIX_NUM_NODES, &one, PMIX_UINT32);
    add_info(info, PMIX_JOB_NUM_APPS, &napps, PMIX_UINT32);
    add_info(info, PMIX_NPROC_OFFSET, &offset, PMIX_PROC_RANK);
    add_info(info, PMIX_LOCAL_PEERS, peers.c_str(), PMIX_STRING);
    add_info(info, PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
    add_info(info, PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
    add_info(info, PMIX_NODEID, &zero, PMIX_UINT32);
    add_info(info, PMIX_NODE_MAP, node_map, PMIX_STRING);
    // The comma-delimited nodes hosting the job (job realm; each app array
    // below has its own): this one node.
    add_info(info, PMIX_NODE_LIST, host.c_str(), PMIX_STRING);
    add_info(info, PMIX_PROC_MAP, proc_map, PMIX_STRING);
    add_info(info, PMIX_JOBID, nspace, PMIX_STRING);
    if (spec.has_debug_target) add_info(info, PMIX_DEBUG_TARGET, &spec.debug_target, PMIX_PROC);
    if (spec.stop_in_init) {  // the clients wait in PMIx_Init for PMIX_DEBUGGER_RELEASE
        bool yes = true;
        add_info(info, PMIX_DEBUG_STOP_IN_INIT, &yes, PMIX_BOOL);
    }
    // PMIX_DEBUG_STOP_IN_APP as the clients read it (PMIx_Get, rank
    // WILDCARD): true for every rank, else the array of the procs named.
    std::vector<pmix_proc_t> stop_in_app;
    for (pmix_rank_t r : spec.stop_in_app) {
        stop_in_app.emplace_back();
        std::memcpy(stop_in_app.back().nspace, nspace, sizeof nspace);
        stop_in_app.back().rank = r;
    }
    if (!stop_in_app.empty() && stop_in_app.size() == n) {
        bool yes = true;
        add_info(info, PMIX_DEBUG_STOP_IN_APP, &yes, PMIX_BOOL);
    } else if (!stop_in_app.empty()) {
        pmix_data_array_t procs{PMIX_PROC, stop_in_app.size(), stop_in_app.data()};
        add_info(info, PMIX_DEBUG_STOP_IN_APP, &procs, PMIX_DATA_ARRAY);
    }
    if (const std::string &topo = shared_topology_file(); !topo.empty())
        add_info(info, PMIX_TOPOLOGY_FILE, topo.c_str(), PMIX_STRING);  // binding.hpp
    if (spec.spawned) {
        bool yes = true;
        add_info(info, PMIX_SPAWNED, &yes, PMIX_BOOL);
        add_info(info, PMIX_PARENT_ID, &spec.parent, PMIX_PROC);
    }
    // The job's temporary directories (session_dirs.hpp): made here, removed
    // when the job is deregistered; none when they cannot be made.
    const std::string job_dir = make_job_dirs(nspace, n);
    if (!job_dir.empty()) {
        bool yes = true;
        add_info(info, PMIX_TMPDIR, session_dir().c_str(), PMIX_STRING);
        add_info(info, PMIX_NSDIR, job_dir.c_str(), PMIX_STRING);
        add_info(info, PMIX_TDIR_RMCLEAN, &yes, PMIX_BOOL);
    }
    std::vector<std::uint32_t> appnum_of;  // per rank
    std::vector<pmix_rank_t> app_rank_of;
    for (uint32_t a = 0; a < spec.apps.size(); ++a) {
        for (uint32_t k = 0; k < spec.apps[a].nprocs; ++k) {
            appnum_of.push_back(a);
            app_rank_of.push_back(k);
        }
    }
    bool yes = true;
    std::vector<const std::vector<std::string> *> psets_of;  // per rank: its app's
    for (const auto &app : spec.apps)
        for (uint32_t k = 0; k < app.nprocs; ++k) psets_of.push_back(&app.psets);
    for (uint32_t r = 0; r < n; ++r) {
        std::vector<pmix_info_t> pd;
        pmix_rank_t rank = r, global = offset + r, app_rank = app_rank_of[r];
        uint16_t lrank = static_cast<uint16_t>(r);
        uint32_t appnum = appnum_of[r];
        add_info(pd, PMIX_RANK, &rank, PMIX_PROC_RANK);
        add_info(pd, PMIX_GLOBAL_RANK, &global, PMIX_PROC_RANK);
        add_info(pd, PMIX_APP_RANK, &app_rank, PMIX_PROC_RANK);
        add_info(pd, PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
        add_info(pd, PMIX_NODE_RANK, &lrank, PMIX_UINT16);
        add_info(pd, PMIX_NODEID, &zero, PMIX_UINT32);
        add_info(pd, PMIX_APPNUM, &appnum, PMIX_UINT32);
        add_info(pd, PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
        if (!job_dir.empty()) add_info(pd, PMIX_PROCDIR, proc_dir(job_dir, r).c_str(), PMIX_STRING);
        // An app-level PMIX_DEBUG_STOP_IN_INIT: the app's processes only.
        if (!spec.stop_in_init && spec.apps[appnum].stop_in_init)
            add_info(pd, PMIX_DEBUG_STOP_IN_INIT, &yes, PMIX_BOOL);
        std::string cpuset, locality;  // where the process runs (binding.hpp)
        if (placement_strings(offset + r, cpuset, locality)) {
            add_info(pd, PMIX_CPUSET, cpuset.c_str(), PMIX_STRING);
            add_info(pd, PMIX_LOCALITY_STRING, locality.c_str(), PMIX_STRING);
        }
        if (!psets_of[r]->empty()) {  // its launch process sets (docs/process_sets.md)
            std::vector<char *> names;
            for (const auto &ps : *psets_of[r]) names.push_back(const_cast<char *>(ps.c_str()));
            pmix_data_array_t sets{PMIX_STRING, names.size(), names.data()};
            add_info(pd, PMIX_PSET_NAMES, &sets, PMIX_DATA_ARRAY);
        }
        pmix_data_array_t darray{PMIX_INFO, pd.size(), pd.data()};
        add_info(info, PMIX_PROC_DATA, &darray, PMIX_DATA_ARRAY);
        for (auto &x : pd) PMIx_Value_destruct(&x.value);
    }

    // Each app's own info (app realm: PMIx_Get with PMIX_APP_INFO, or a rank's
    // app by default): its number, size, leader (its lowest rank), argv and
    // working directory, nodes. The slots: one per process on this node.
    add_info(info, PMIX_NUM_SLOTS, &n, PMIX_UINT32);
    std::error_code cwd_error;
    const std::string pmixrun_cwd = std::filesystem::current_path(cwd_error).string();
    for (uint32_t a = 0, first = 0; a < spec.apps.size(); first += spec.apps[a].nprocs, ++a) {
        const AppSpec &app = spec.apps[a];
        std::string argv;
        for (const auto &arg : app.argv.empty() ? std::vector<std::string>{app.program} : app.argv)
            argv += (argv.empty() ? "" : " ") + arg;
        const std::string wdir = app.cwd.empty() ? pmixrun_cwd : app.cwd;
        pmix_rank_t app_leader = first;
        std::vector<pmix_info_t> ai;
        add_info(ai, PMIX_APPNUM, &a, PMIX_UINT32);
        add_info(ai, PMIX_APP_SIZE, &app.nprocs, PMIX_UINT32);
        add_info(ai, PMIX_APPLDR, &app_leader, PMIX_PROC_RANK);
        add_info(ai, PMIX_APP_ARGV, argv.c_str(), PMIX_STRING);
        add_info(ai, PMIX_WDIR, wdir.c_str(), PMIX_STRING);
        add_info(ai, PMIX_NODE_LIST, host.c_str(), PMIX_STRING);  // the app's nodes: this one
        pmix_data_array_t darray{PMIX_INFO, ai.size(), ai.data()};
        add_info(info, PMIX_APP_INFO_ARRAY, &darray, PMIX_DATA_ARRAY);
        for (auto &x : ai) PMIx_Value_destruct(&x.value);
    }

    // --- registration: clients first, then the nspace (ORTE's order) ---
    auto proc_of = [&](pmix_rank_t r) {
        pmix_proc_t proc{};
        std::memcpy(proc.nspace, nspace, sizeof nspace);
        proc.rank = r;
        return proc;
    };
    pmix_status_t rc = PMIX_SUCCESS;
    for (uint32_t r = 0; r < n && (rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED); ++r) {
        pmix_proc_t proc = proc_of(r);
        rc = PMIx_server_register_client(&proc, getuid(), getgid(), nullptr, nullptr, nullptr);
    }
    if (rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED) {
        rc = PMIx_server_register_nspace(nspace, static_cast<int>(n), info.data(), info.size(),
                                         nullptr, nullptr);
    }
    for (auto &x : info) PMIx_Value_destruct(&x.value);
    jobs_.emplace_back();  // deregistered at the end, even when incomplete
    jobs_.back().nspace = nspace;
    jobs_.back().size = n;
    jobs_.back().spawned = spec.spawned;
    jobs_.back().parent = spec.parent;
    jobs_.back().notify = spec.notify;
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        std::fprintf(stderr, "pmixrun: registering job %s: %s\n", nspace, PMIx_Error_string(rc));
        std::free(node_map);
        std::free(proc_map);
        return rc;
    }
    rc = set_up_job(nspace, node_map, proc_map);
    std::free(node_map);
    std::free(proc_map);
    if (rc != PMIX_SUCCESS) {
        std::fprintf(stderr, "pmixrun: setting up job %s: %s\n", nspace, PMIx_Error_string(rc));
        return rc;
    }
    universe_ += n;

    // --- launch ---
    // The spawner hears when the processes told to stop (in init, in the
    // app) are all there (PMIX_READY_FOR_DEBUG, tools.hpp).
    if (spec.spawned) {
        std::vector<pmix_rank_t> in_init;
        for (uint32_t r = 0; r < n; ++r) {
            if (spec.stop_in_init || spec.apps[appnum_of[r]].stop_in_init) in_init.push_back(r);
        }
        if (!in_init.empty()) tools_debug_stops(nspace, spec.parent, std::move(in_init), true);
        if (!spec.stop_in_app.empty())
            tools_debug_stops(nspace, spec.parent, spec.stop_in_app, false);
    }
    // Every rank is in the proc table before the first one runs: a process
    // that queries it early sees its peers as launching, not missing.
    {
        pmix_rank_t r = 0;
        for (std::size_t a = 0; a < spec.apps.size(); ++a) {
            for (uint32_t k = 0; k < spec.apps[a].nprocs; ++k, ++r)
                tools_proc_launching(proc_of(r), paths[a]);
        }
    }
    pmix_rank_t rank = 0;
    for (std::size_t a = 0; a < spec.apps.size(); ++a) {
        const AppSpec &app = spec.apps[a];
        std::vector<std::string> env = base_env_;
        for (const auto &e : app.env) {
            const std::string name = e.substr(0, e.find('='));
            std::erase_if(env, [&](const std::string &x) { return x.rfind(name + "=", 0) == 0; });
            env.push_back(e);
        }
        std::vector<std::string> args = app.argv.empty() ? std::vector{app.program} : app.argv;
        std::vector<char *> child_argv;
        // PMIX_DEBUG_STOP_ON_EXEC, without ptrace: a shell stops itself
        // (SIGSTOP) and, once continued (a debugger's PMIx_Job_control
        // RESUME), execs the program in its place, so the pid in the proc
        // table is the program's. Its argv[0] is then the program's path.
        static char sh_name[] = "sh", sh_c[] = "-c",
                    stop_then_exec[] = "kill -STOP $$ && exec \"$0\" \"$@\"";
        std::string program_path = paths[a];
        const bool stop_on_exec = spec.stop_on_exec || app.stop_on_exec;
        if (stop_on_exec) {
            child_argv = {sh_name, sh_c, stop_then_exec, program_path.data()};
            for (std::size_t j = 1; j < args.size(); ++j) child_argv.push_back(args[j].data());
        } else {
            for (auto &s : args) child_argv.push_back(s.data());
        }
        child_argv.push_back(nullptr);
        const std::string launch_path = stop_on_exec ? "/bin/sh" : paths[a];
        for (uint32_t k = 0; k < app.nprocs; ++k, ++rank) {
            pmix_proc_t proc = proc_of(rank);
            char **cenv = static_cast<char **>(std::calloc(env.size() + 1, sizeof(char *)));
            for (std::size_t j = 0; j < env.size(); ++j) cenv[j] = strdup(env[j].c_str());
            rc = PMIx_server_setup_fork(&proc, &cenv);
            if (rc != PMIX_SUCCESS) {
                std::fprintf(stderr, "pmixrun: setup_fork for %s:%u: %s\n", nspace, rank,
                             PMIx_Error_string(rc));
                for (char **e = cenv; *e != nullptr; ++e) std::free(*e);
                std::free(cenv);
                abandon_started(nspace, n);
                return rc;
            }
            // posix_spawn (clone with CLONE_VM | CLONE_VFORK in glibc) instead of
            // fork + exec: no copy of pmixrun's page tables per child, and no
            // copy to tear down at the exec; with 16 children starting on 2
            // cores that CPU is taken from the children's own start-up.
            posix_spawn_file_actions_t actions;
            posix_spawn_file_actions_t *actions_p = nullptr;
            if (!app.cwd.empty()) {
                posix_spawn_file_actions_init(&actions);
                posix_spawn_file_actions_addchdir_np(&actions, app.cwd.c_str());
                actions_p = &actions;
            }
            pid_t pid = -1;
            int err = 0;
            const SpawnBinding binding(offset + rank);  // the child inherits it
            tools_spawn_recorded(proc, paths[a], [&] {  // tools.hpp: the proc table
                err = posix_spawn(&pid, launch_path.c_str(), actions_p, nullptr, child_argv.data(),
                                  cenv);
                return err == 0 ? pid : -1;
            });
            if (actions_p != nullptr) posix_spawn_file_actions_destroy(actions_p);
            for (char **e = cenv; *e != nullptr; ++e) std::free(*e);
            std::free(cenv);
            if (err != 0) {
                std::fprintf(stderr, "pmixrun: cannot execute %s%s%s: %s\n", paths[a].c_str(),
                             app.cwd.empty() ? "" : " in ", app.cwd.c_str(), std::strerror(err));
                abandon_started(nspace, n);
                return PMIX_ERR_JOB_SYS_OP_FAILED;
            }
            children_[pid] = Proc{nspace, rank};
            for (auto &job : jobs_) {
                if (job.nspace == nspace) ++job.running;
            }
            job_services_started(proc, pid);
        }
    }
    nspace_out = nspace;
    return PMIX_SUCCESS;
}

void Launcher::queue_spawn(JobSpec spec, SpawnDone done) {
    {
        std::lock_guard lock(queue_mutex_);
        queue_.push_back({std::move(spec), std::move(done)});
    }
    wake_main_loop();  // wait_all runs it (signals.hpp)
}

void Launcher::run_queued(bool refuse) {
    std::vector<Pending> work;
    {
        std::lock_guard lock(queue_mutex_);
        work.swap(queue_);
    }
    for (auto &p : work) {
        std::string nspace;
        pmix_status_t rc = refuse ? PMIX_ERR_JOB_FAILED_TO_LAUNCH : launch(p.spec, nspace);
        p.done(rc, nspace);
    }
}

// A launch that fails part-way (a later app's program cannot be executed:
// ENOEXEC, a missing interpreter; a fork that fails): its started processes
// wait in the job's collectives for peers that never come. Kill them now,
// whatever launched the job (pmixrun's command line or a PMIx_Spawn, whose
// caller gets the error and goes on), and reap them without taking them for
// the failure of a running job.
void Launcher::abandon_started(const char *nspace, std::uint32_t nprocs) {
    std::size_t started = 0;
    for (const auto &[pid, proc] : children_) {
        if (proc.nspace != nspace) continue;
        kill(pid, SIGKILL);
        abandoned_.insert(pid);
        ++started;
    }
    if (started > 0) {
        std::fprintf(stderr,
                     "pmixrun: launch of %s failed after %zu of %u process(es) started; "
                     "killed them\n",
                     nspace, started, nprocs);
    }
}

void Launcher::terminate_all(int sig) {
    for (const auto &[pid, proc] : children_) kill(pid, sig);
}

int Launcher::wait_all(long timeout_s, const std::atomic<bool> &aborted, bool &timed_out) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    auto kill_deadline = clock::time_point::max();
    bool terminated = false;
    int status = 0;
    timed_out = false;
    for (;;) {
        run_queued(terminated);
        job_control_tick();
        if (children_.empty()) {
            std::lock_guard lock(queue_mutex_);
            if (queue_.empty()) break;
            continue;
        }
        int st = 0;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid > 0) {
            auto it = children_.find(pid);
            if (it == children_.end()) continue;
            const Proc proc = it->second;
            children_.erase(it);
            job_services_ended(proc.nspace, proc.rank);
            if (abandoned_.erase(pid) != 0) continue;  // abandon_started
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            if (code != 0 && !ever_connected(proc.nspace, proc.rank)) {
                // Only the host knows that a rank which never connected (or
                // died mid-handshake) is gone: without this its peers' fence,
                // connect or group waits for it forever (faults.client_killed_
                // in_handshake). Deregistering departs it in the server. A
                // rank that connected departs by its lost connection and
                // stays registered (a local member of its job's collectives).
                pmix_proc_t gone{};
                std::memcpy(gone.nspace, proc.nspace.data(),
                            std::min<std::size_t>(proc.nspace.size(), PMIX_MAX_NSLEN));
                gone.rank = proc.rank;
                PMIx_server_deregister_client(&gone, nullptr, nullptr);
            }
            if (code != 0 && !terminated) {
                raise_proc_terminated(proc.nspace, proc.rank, code, WIFSIGNALED(st));
            }
            proc_ended(proc, code, WIFSIGNALED(st));
            tools_proc_ended(proc.nspace, proc.rank, code, WIFSIGNALED(st));
            if (code != 0 && !aborted && !terminated) {
                if (WIFSIGNALED(st)) {
                    std::fprintf(stderr, "pmixrun: %s rank %u (pid %d) killed by signal %d\n",
                                 proc.nspace.c_str(), proc.rank, static_cast<int>(pid),
                                 WTERMSIG(st));
                } else {
                    std::fprintf(stderr, "pmixrun: %s rank %u (pid %d) exited with status %d\n",
                                 proc.nspace.c_str(), proc.rank, static_cast<int>(pid), code);
                }
                if (status == 0) status = code;
                if (kill_deadline == clock::time_point::max()) {
                    kill_deadline = clock::now() + std::chrono::seconds(kFailureGraceSeconds);
                }
            }
            continue;
        }
        if (pid < 0 && errno != EINTR) break;
        const auto now = clock::now();
        if (aborted && !terminated) {
            terminated = true;
            terminate_all(SIGTERM);
            kill_deadline = now + std::chrono::seconds(3);
        } else if (timeout_s > 0 && !timed_out && now - start > std::chrono::seconds(timeout_s)) {
            std::fprintf(stderr, "pmixrun: job timed out after %ld s; terminating it\n", timeout_s);
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
        // Sleep until a child ends (SIGCHLD), another thread wakes the loop
        // (a queued spawn, an abort, a termination signal, a new checkpoint
        // deadline) or the nearest deadline passes: no polling
        // (signals.hpp). A child that ended since the waitpid above has
        // written its wake-up already.
        auto until = std::min(kill_deadline, job_control_next_deadline());
        if (timeout_s > 0 && !timed_out) {
            // Just past the limit, as the check above reads it (">").
            until = std::min(
                until, start + std::chrono::seconds(timeout_s) + std::chrono::milliseconds(1));
        }
        const int fd = main_loop_fd();
        if (fd < 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));  // no pipe: poll
            continue;
        }
        int ms = -1;
        if (until != clock::time_point::max()) {
            const auto left =
                std::chrono::ceil<std::chrono::milliseconds>(until - clock::now()).count();
            ms = static_cast<int>(std::clamp<long long>(left, 0, INT_MAX));
        }
        pollfd p{fd, POLLIN, 0};
        ::poll(&p, 1, ms);
        drain_main_loop();
    }
    run_queued(true);  // a spawn queued by a process that is gone now
    return status;
}

// What the spawner of the job asked for (Chap_API_Proc_Mgmt: PMIX_NOTIFY_*):
// every end or only abnormal ones as PMIX_EVENT_PROC_TERMINATED, the job's end
// as PMIX_EVENT_JOB_END, to the spawner only, whatever its job.
void Launcher::proc_ended(const Proc &proc, int code, bool by_signal) {
    for (auto &job : jobs_) {
        if (job.nspace != proc.nspace) continue;
        if (code != 0 && !job.failed) {
            job.failed = true;
            job.first_failed = proc.rank;
            job.first_failed_code = code;
        }
        if (job.running > 0) --job.running;
        if (!job.spawned) return;
        const JobNotify &want = job.notify;
        if (want.proc_termination || (want.proc_abnormal && code != 0)) {
            raise_proc_terminated_for(job.parent, proc.nspace, proc.rank, code, by_signal);
        }
        if (job.running == 0 && want.completion && !(want.silent && !job.failed)) {
            pmix_proc_t failed{};
            std::memcpy(failed.nspace, job.nspace.data(),
                        std::min<std::size_t>(job.nspace.size(), PMIX_MAX_NSLEN));
            failed.rank = job.first_failed;
            raise_job_end(job.parent, job.nspace,
                          job.failed ? PMIX_ERR_JOB_NON_ZERO_TERM : PMIX_SUCCESS,
                          job.failed ? &failed : nullptr, job.first_failed_code);
        }
        return;
    }
}

void Launcher::deregister_all() {
    for (const auto &job : jobs_) {
        for (uint32_t r = 0; r < job.size; ++r) {
            pmix_proc_t proc{};
            std::memcpy(proc.nspace, job.nspace.data(),
                        std::min<std::size_t>(job.nspace.size(), PMIX_MAX_NSLEN));
            proc.rank = r;
            PMIx_server_deregister_client(&proc, nullptr, nullptr);
        }
        PMIx_server_deregister_nspace(job.nspace.c_str(), nullptr, nullptr);
        remove_job_dirs(job.nspace);
    }
    jobs_.clear();
}

namespace {

// PMIX_DEBUG_STOP_IN_APP's value (standard: a bool, a rank or a data array
// of procs) -> the job ranks in [first, first + count) it names, added to
// `out`: true (or no value) all of them, false none, a rank that one
// (PMIX_RANK_WILDCARD all), each proc's rank of an array (its namespace is
// the job being spawned, unknown to the spawner). False: another type, or
// a rank outside.
bool stop_in_app_ranks(const pmix_value_t &v, pmix_rank_t first, std::uint32_t count,
                       std::set<pmix_rank_t> &out) {
    auto all = [&] {
        for (std::uint32_t k = 0; k < count; ++k) out.insert(first + k);
        return true;
    };
    auto one = [&](pmix_rank_t r) {
        if (r == PMIX_RANK_WILDCARD) return all();
        if (r < first || r - first >= count) return false;
        out.insert(r);
        return true;
    };
    switch (v.type) {
        case PMIX_UNDEF:
            return all();
        case PMIX_BOOL:
            return v.data.flag ? all() : true;
        case PMIX_PROC_RANK:
            return one(v.data.rank);
        case PMIX_UINT32:
            return one(v.data.uint32);
        case PMIX_DATA_ARRAY: {
            const pmix_data_array_t *d = v.data.darray;
            if (d == nullptr || d->size == 0 || d->array == nullptr) return false;
            for (std::size_t k = 0; k < d->size; ++k) {
                bool ok = false;
                if (d->type == PMIX_PROC)
                    ok = one(static_cast<const pmix_proc_t *>(d->array)[k].rank);
                if (d->type == PMIX_PROC_RANK)
                    ok = one(static_cast<const pmix_rank_t *>(d->array)[k]);
                if (!ok) return false;
            }
            return true;
        }
        default:
            return false;
    }
}

}  // namespace

pmix_status_t spawn_upcall(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                           const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                           void *cbdata) {
    Launcher *launcher = Launcher::current();
    if (launcher == nullptr || cbfunc == nullptr) return PMIX_ERR_NOT_SUPPORTED;
    if (apps == nullptr || napps == 0) return PMIX_ERR_BAD_PARAM;
    JobSpec spec;
    spec.spawned = true;
    if (proc != nullptr) spec.parent = *proc;
    const pmix_value_t *job_stop_in_app = nullptr;  // read once the apps' ranks are known
    std::vector<const pmix_value_t *> app_stop_in_app;
    for (size_t k = 0; job_info != nullptr && k < ninfo; ++k) {
        const pmix_info_t &i = job_info[k];
        // A bool attribute: PMIX_BOOL, or no value at all meaning true.
        const bool on =
            i.value.type == PMIX_UNDEF || (i.value.type == PMIX_BOOL && i.value.data.flag);
        if (PMIX_CHECK_KEY(&i, PMIX_NOTIFY_PROC_TERMINATION)) {
            spec.notify.proc_termination = on;
        } else if (PMIX_CHECK_KEY(&i, PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION)) {
            spec.notify.proc_abnormal = on;
        } else if (PMIX_CHECK_KEY(&i, PMIX_NOTIFY_COMPLETION)) {
            spec.notify.completion = on;
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_SILENT_TERMINATION)) {
            spec.notify.silent = on;
        } else if (PMIX_CHECK_KEY(&i, PMIX_DEBUG_STOP_IN_INIT)) {
            spec.stop_in_init = on;
        } else if (PMIX_CHECK_KEY(&i, PMIX_DEBUG_STOP_ON_EXEC)) {
            spec.stop_on_exec = on;
        } else if (PMIX_CHECK_KEY(&i, PMIX_DEBUG_STOP_IN_APP)) {
            job_stop_in_app = &i.value;
        } else if (PMIX_CHECK_KEY(&i, PMIX_DEBUG_TARGET) && i.value.type == PMIX_PROC &&
                   i.value.data.proc != nullptr) {
            spec.has_debug_target = true;
            spec.debug_target = *i.value.data.proc;
        } else if (PMIX_CHECK_KEY(&i, PMIX_DEBUG_DAEMONS_PER_NODE)) {
            if (i.value.type == PMIX_UINT16) spec.daemons_per_node = i.value.data.uint16;
            if (i.value.type == PMIX_UINT32) spec.daemons_per_node = i.value.data.uint32;
            if (spec.daemons_per_node == 0 || spec.daemons_per_node > 1024)
                return PMIX_ERR_BAD_PARAM;
        } else if (PMIX_CHECK_KEY(&i, PMIX_DEBUG_DAEMONS_PER_PROC)) {
            if (i.value.type == PMIX_UINT16) spec.daemons_per_proc = i.value.data.uint16;
            if (i.value.type == PMIX_UINT32) spec.daemons_per_proc = i.value.data.uint32;
            if (spec.daemons_per_proc == 0 || spec.daemons_per_proc > 1024)
                return PMIX_ERR_BAD_PARAM;
        }
    }
    // Nobody to tell without a requester.
    if (proc == nullptr) spec.notify = JobNotify{};
    for (size_t a = 0; a < napps; ++a) {
        const pmix_app_t &in = apps[a];
        if (in.cmd == nullptr || *in.cmd == '\0') return PMIX_ERR_JOB_NO_EXE_SPECIFIED;
        if (in.maxprocs < 1) return PMIX_ERR_BAD_PARAM;
        AppSpec app;
        app.program = in.cmd;
        for (char **v = in.argv; v != nullptr && *v != nullptr; ++v) app.argv.emplace_back(*v);
        for (char **v = in.env; v != nullptr && *v != nullptr; ++v) {
            if (std::strchr(*v, '=') != nullptr) app.env.emplace_back(*v);
        }
        if (in.cwd != nullptr) app.cwd = in.cwd;
        app_stop_in_app.push_back(nullptr);
        for (size_t k = 0; in.info != nullptr && k < in.ninfo; ++k) {
            const pmix_info_t &i = in.info[k];
            const bool on =
                i.value.type == PMIX_UNDEF || (i.value.type == PMIX_BOOL && i.value.data.flag);
            if (PMIX_CHECK_KEY(&i, PMIX_WDIR) && i.value.type == PMIX_STRING &&
                i.value.data.string != nullptr) {
                app.cwd = i.value.data.string;
            } else if (PMIX_CHECK_KEY(&i, PMIX_DEBUG_STOP_IN_INIT)) {
                app.stop_in_init = on;
            } else if (PMIX_CHECK_KEY(&i, PMIX_DEBUG_STOP_ON_EXEC)) {
                app.stop_on_exec = on;
            } else if (PMIX_CHECK_KEY(&i, PMIX_DEBUG_STOP_IN_APP)) {
                app_stop_in_app.back() = &i.value;
            } else if (PMIX_CHECK_KEY(&i, PMIX_PSET_NAME) && i.value.type == PMIX_STRING &&
                       i.value.data.string != nullptr && *i.value.data.string != '\0') {
                app.psets.emplace_back(i.value.data.string);  // docs/process_sets.md
            }
        }
        app.nprocs = static_cast<std::uint32_t>(in.maxprocs);
        spec.apps.push_back(std::move(app));
    }
    // Debugger daemons: that many per node, and pmixrun has one node; or that
    // many per process of the target (its every rank for PMIX_RANK_WILDCARD).
    // Both at once, or per process without a known target: PMIX_ERR_BAD_PARAM.
    if (spec.daemons_per_node > 0 && spec.daemons_per_proc > 0) return PMIX_ERR_BAD_PARAM;
    if (spec.daemons_per_node > 0) {
        if (spec.apps.size() != 1) return PMIX_ERR_BAD_PARAM;
        spec.apps.front().nprocs = spec.daemons_per_node;
    }
    if (spec.daemons_per_proc > 0) {
        if (spec.apps.size() != 1 || !spec.has_debug_target) return PMIX_ERR_BAD_PARAM;
        const std::size_t targets =
            spec.debug_target.rank == PMIX_RANK_WILDCARD
                ? tools_job_procs(spec.debug_target.nspace)
                : (tools_job_procs(spec.debug_target.nspace) > spec.debug_target.rank ? 1 : 0);
        if (targets == 0) return PMIX_ERR_BAD_PARAM;
        spec.apps.front().nprocs = static_cast<std::uint32_t>(targets * spec.daemons_per_proc);
    }
    // PMIX_DEBUG_STOP_IN_APP: job-level, over every rank; app-level, over the
    // app's ranks. A value of another type, or a rank outside: BAD_PARAM.
    std::set<pmix_rank_t> stop_in_app;
    std::uint32_t total = 0;
    for (const auto &app : spec.apps) total += app.nprocs;
    if (job_stop_in_app != nullptr && !stop_in_app_ranks(*job_stop_in_app, 0, total, stop_in_app))
        return PMIX_ERR_BAD_PARAM;
    for (std::size_t a = 0, first = 0; a < spec.apps.size(); first += spec.apps[a].nprocs, ++a) {
        if (app_stop_in_app[a] != nullptr &&
            !stop_in_app_ranks(*app_stop_in_app[a], static_cast<pmix_rank_t>(first),
                               spec.apps[a].nprocs, stop_in_app))
            return PMIX_ERR_BAD_PARAM;
    }
    spec.stop_in_app.assign(stop_in_app.begin(), stop_in_app.end());
    launcher->queue_spawn(
        std::move(spec), [cbfunc, cbdata](pmix_status_t rc, const std::string &ns) {
            pmix_nspace_t out{};
            std::memcpy(out, ns.data(), std::min<std::size_t>(ns.size(), PMIX_MAX_NSLEN));
            cbfunc(rc, out, cbdata);
        });
    return PMIX_SUCCESS;
}

}  // namespace pmixrun
