// The jobs pmixrun runs: the first one from its command line and every job
// its processes PMIx_Spawn. Each is registered with the PMIx server (clients,
// then nspace with its job info), set up (setup_application ->
// setup_local_support), and its processes are started (posix_spawn) with setup_fork's
// environment. pmixrun waits for the processes of every job.
//
// Threads: launch(), wait_all() and deregister_all() run on the main thread.
// spawn_upcall() runs on the PMIx progress thread and only queues the
// request; the main thread's wait loop launches it and calls back.
#pragma once

#include <pmix_server.h>

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <mutex>
#include <string>
#include <vector>

namespace pmixrun {

struct AppSpec {
    std::string program;            // as given: a path, or a name looked up in PATH
    std::vector<std::string> argv;  // argv[0] included; empty: {program}
    std::vector<std::string> env;   // "NAME=value", set on top of pmixrun's environment
    std::string cwd;                // empty: pmixrun's
    std::uint32_t nprocs = 1;
    // App-level debugger attributes (in the pmix_app_t's info; docs/tools.md,
    // "Debuggers"): PMIX_DEBUG_STOP_IN_INIT, registered for this app's
    // processes only, and PMIX_DEBUG_STOP_ON_EXEC for them.
    bool stop_in_init = false;
    bool stop_on_exec = false;
    // Process sets its processes belong to from launch (PMIX_PSET_NAMES):
    // `--pset`, or PMIX_PSET_NAME in a spawned app's info.
    std::vector<std::string> psets;
};

// Termination events the spawner asked for in PMIx_Spawn's job info; they go
// to `parent` (events.hpp).
struct JobNotify {
    bool proc_termination = false;  // PMIX_NOTIFY_PROC_TERMINATION
    bool proc_abnormal = false;     // PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION
    bool completion = false;        // PMIX_NOTIFY_COMPLETION
    bool silent = false;            // PMIX_EVENT_SILENT_TERMINATION
};

struct JobSpec {
    std::vector<AppSpec> apps;
    bool spawned = false;  // started by PMIx_Spawn of `parent`
    pmix_proc_t parent{};
    JobNotify notify;  // only for a spawned job
    // PMIX_DEBUG_STOP_IN_INIT: registered for the clients (docs/tools.md).
    bool stop_in_init = false;
    bool stop_on_exec = false;  // each process stops before its exec (SIGSTOP)
    // Debugger daemons (docs/tools.md): PMIX_DEBUG_TARGET, registered for them,
    // and PMIX_DEBUG_DAEMONS_PER_NODE, their count on this (the only) node.
    bool has_debug_target = false;
    pmix_proc_t debug_target{};
    std::uint32_t daemons_per_node = 0;
    std::uint32_t daemons_per_proc = 0;  // times the target's processes (tools.hpp)
    // PMIX_DEBUG_STOP_IN_APP (job- or app-level): the job ranks to stop at an
    // application-defined point, sorted (registered for the clients; the
    // spawner gets PMIX_READY_FOR_DEBUG when all of them are there).
    std::vector<pmix_rank_t> stop_in_app;
};

// done(status, nspace): the outcome of a queued spawn, called once.
using SpawnDone = std::function<void(pmix_status_t, const std::string &)>;

class Launcher {
  public:
    explicit Launcher(std::vector<std::string> base_env);
    ~Launcher();
    Launcher(const Launcher &) = delete;
    Launcher &operator=(const Launcher &) = delete;
    // The launcher the spawn upcall queues to (nullptr when none exists).
    static Launcher *current();

    // Registers a job and starts its processes. On success `nspace` names
    // it. Errors (nothing started): PMIX_ERR_JOB_EXE_NOT_FOUND,
    // PMIX_ERR_JOB_WDIR_NOT_FOUND, PMIX_ERR_BAD_PARAM, or the server's error.
    pmix_status_t launch(const JobSpec &spec, std::string &nspace);
    // Any thread: launch `spec` from the main loop, then call `done`.
    void queue_spawn(JobSpec spec, SpawnDone done);

    // Serves queued spawns and reaps processes until every process of every
    // job ended. Returns the first non-zero exit status (128+signal for a
    // signal) of any process, 0 if none. A failing process gives the others
    // a grace period to notice before they are terminated; `aborted` and
    // `timeout_s` (0: none) terminate everything at once.
    int wait_all(long timeout_s, const std::atomic<bool> &aborted, bool &timed_out);
    // Deregisters every client and nspace registered by launch().
    void deregister_all();

  private:
    struct Proc {
        std::string nspace;
        pmix_rank_t rank = 0;
    };
    struct Pending {
        JobSpec spec;
        SpawnDone done;
    };
    struct Registered {
        std::string nspace;
        std::uint32_t size = 0;
        // Termination events for the spawner (launcher.cpp, proc_ended).
        bool spawned = false;
        pmix_proc_t parent{};
        JobNotify notify;
        std::uint32_t running = 0;
        bool failed = false;
        pmix_rank_t first_failed = 0;
        int first_failed_code = 0;
    };
    void proc_ended(const Proc &proc, int code, bool by_signal);
    void run_queued(bool refuse);
    void terminate_all(int sig);
    void abandon_started(const char *nspace, std::uint32_t nprocs);

    std::vector<std::string> base_env_;
    std::map<pid_t, Proc> children_;
    // Processes of a launch that failed part-way, killed by abandon_started():
    // reaped without counting as the job's failure.
    std::set<pid_t> abandoned_;
    std::vector<Registered> jobs_;
    std::uint32_t universe_ = 0;  // processes launched so far: the next job's rank offset
    std::mutex queue_mutex_;
    std::vector<Pending> queue_;
};

// pmix_server_module_t::spawn: copies the request and queues it to the
// current Launcher.
pmix_status_t spawn_upcall(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                           const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                           void *cbdata);

// pmix_server_module_t::client_connected2: records that the rank's
// handshake reached the host (faults, issue 19). A rank that dies before
// that has no connection whose loss departs it in the server: wait_all()
// deregisters it instead.
pmix_status_t client_connected_upcall(const pmix_proc_t *proc, void *server_object,
                                      pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                      void *cbdata);

// The path of an executable program (`name` with a '/', else searched in
// PATH), or "" when there is none.
std::string find_program(const std::string &name);
std::string hostname();
void add_info(std::vector<pmix_info_t> &v, const char *key, const void *data, pmix_data_type_t t);

}  // namespace pmixrun
