// pmixrun -n N [-x VAR[=value]]... [--timeout SECONDS] program [args...]
//
// A single-node PMIx host built on the public server API only: it registers
// one job of N processes on this node, starts them (posix_spawn) with PMIx_server_setup_fork's
// environment, serves the upcalls it can locally (fences and connects
// complete inside the library because every participant is local; PMIx_Spawn
// starts another job on this node: launcher.hpp) and exits when the processes
// of every job ended, with the status:
//   - the status given to PMIx_Abort when a process aborts;
//   - else the first non-zero exit status of any process of any job
//     (128+signal for a signal);
//   - 124 when --timeout expired; 2 for a usage error; 127 when the program
//     cannot be found.
// When a process fails without PMIx_Abort, the others get a grace period to
// notice (their PMIx calls fail) before they are terminated. Processes that
// registered for them get PMIX_ERR_PROC_ABORTED when a peer calls PMIx_Abort
// and PMIX_EVENT_PROC_TERMINATED when a peer ends abnormally (events.hpp).
// Tools of the same user may connect (PMIx_tool_init; tools.hpp, docs/tools.md).
// Process monitoring is the library's (PMIX_SERVER_ENABLE_MONITORING); alerts
// get pmixrun's default action (monitoring.hpp, docs/monitoring.md).
#include <pmix.h>
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

#include "allocation.hpp"
#include "binding.hpp"
#include "data_server.hpp"
#include "events.hpp"
#include "job_control.hpp"
#include "groups.hpp"
#include "fabric.hpp"
#include "job_services.hpp"
#include "launcher.hpp"
#include "monitoring.hpp"
#include "signals.hpp"
#include "tools.hpp"
#include "credentials.hpp"

extern char **environ;

namespace {

constexpr const char *kUsage =
    "usage: pmixrun -n N [-x VAR[=value]]... [--timeout SECONDS] [--bind-to core|none]\n"
    "               [--tcp-ports N] [--pset NAME]...\n"
    "               program [args...]\n"
    "\n"
    "Runs N copies of program as one PMIx job on this node.\n"
    "  -n, --np N           number of processes (1 or more)\n"
    "  -x VAR[=value]       export VAR to the processes (its value here, or the given one)\n"
    "  --timeout SECONDS    terminate the job after SECONDS; exit status 124\n"
    "  --monitor-kill       terminate the job on a monitor alert the application did not\n"
    "                       ask to handle itself (PMIX_MONITOR_APP_CONTROL); exit status 1\n"
    "  --bind-to core|none  bind the k-th process to core k (modulo the cores), or not\n"
    "                       (default); each learns its PMIX_CPUSET and PMIX_LOCALITY_STRING\n"
    "  --tcp-ports N        give each process N TCP ports and its job a key (pnet_tcp;\n"
    "                       docs/network.md)\n"
    "  --pset NAME          the processes belong to process set NAME (PMIX_PSET_NAMES;\n"
    "                       repeat for several)\n"
    "  -V, --version        pmixrun's version and the library's PMIx_Get_version()\n"
    "  -h, --help           this text\n"
    "Exit status: the job's (the abort status, or the first failing process's).\n"
    "SIGUSR1 to pmixrun: PMIX_JCTRL_PREEMPT_ALERT to the processes that declared\n"
    "themselves preemptible (docs/job_control.md).\n";

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
    pmixrun::raise_proc_aborted(*proc, status, msg);
    if (!g_aborted.exchange(true)) g_abort_status = status;
    pmixrun::wake_main_loop();  // the wait loop terminates the job (signals.hpp)
    if (cbfunc != nullptr) cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

using pmixrun::find_program;

}  // namespace

int main(int argc, char **argv) {
    long nprocs = 0;
    long timeout = 0;
    std::vector<std::string> exports;
    bool monitor_kill = false;
    std::vector<std::string> psets;
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
        } else if (a == "-V" || a == "--version") {
            // The library's string is "pmixpp <version> (PMIx Standard: ...)".
            const std::string lib = PMIx_Get_version();
            const auto sp = lib.find(' ');
            const std::string ver =
                sp == std::string::npos ? lib : lib.substr(sp + 1, lib.find(' ', sp + 1) - sp - 1);
            std::printf("pmixrun (pmixpp) %s\nPMIx_Get_version(): %s\n", ver.c_str(), lib.c_str());
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
        } else if (a == "--monitor-kill") {
            monitor_kill = true;
        } else if (a == "--bind-to") {
            const char *v = value("--bind-to");
            const std::string policy = v != nullptr ? v : "";
            if (policy == "core") {
                pmixrun::set_bind_to(pmixrun::BindTo::core);
            } else if (policy == "none") {
                pmixrun::set_bind_to(pmixrun::BindTo::none);
            } else {
                return usage_error("option --bind-to needs core or none");
            }
        } else if (a == "--tcp-ports") {
            const char *v = value("--tcp-ports");
            char *end = nullptr;
            if (v == nullptr) return usage_error("option --tcp-ports needs a number of ports");
            const long ports = std::strtol(v, &end, 10);
            if (*end != '\0' || ports < 1 || ports > 65535)
                return usage_error(std::string("bad port count '") + v + "'");
            pmixrun::set_tcp_ports(static_cast<std::uint32_t>(ports));
        } else if (a == "--pset") {
            const char *v = value("--pset");
            if (v == nullptr || *v == '\0' || std::strlen(v) > PMIX_MAX_NSLEN)
                return usage_error("option --pset needs a name (at most " +
                                   std::to_string(PMIX_MAX_NSLEN) + " characters)");
            psets.emplace_back(v);
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
    const std::vector<std::string> child_argv(argv + i, argv + argc);

    signal(SIGPIPE, SIG_IGN);
    pmix_server_module_t module{};
    module.abort = on_abort;
    module.spawn = pmixrun::spawn_upcall;
    module.client_connected2 = pmixrun::client_connected_upcall;  // launcher.hpp (faults)
    pmixrun::install_data_server(module);     // publish, lookup, unpublish, client_finalized
    pmixrun::install_job_services(module);    // job_control, log
    pmixrun::install_event_services(module);  // register_events, notify_event (events.hpp)
    pmixrun::install_tool_services(module);   // tool_connected (tools.hpp)
    pmixrun::install_allocation(module);      // allocate (allocation.hpp)
    pmixrun::install_credentials(module);     // get/validate_credential (credentials.hpp)
    pmixrun::install_group_services(module);  // group (groups.hpp)
    pmixrun::install_fabric(module);          // fabric (fabric.hpp), network
    // Tools may connect (docs/tools.md): by the PMIX_SERVER_URI* variables
    // its processes inherit, or by pmixrun's pid through the rendezvous file.
    pmix_info_t server_info[3];
    PMIX_INFO_CONSTRUCT(&server_info[0]);
    bool tool_support = true;
    PMIX_INFO_LOAD(&server_info[0], PMIX_SERVER_TOOL_SUPPORT, &tool_support, PMIX_BOOL);
    // The library's own monitoring (psensor); pmixrun acts on alerts (monitoring.hpp).
    PMIX_INFO_CONSTRUCT(&server_info[1]);
    PMIX_INFO_LOAD(&server_info[1], PMIX_SERVER_ENABLE_MONITORING, &tool_support, PMIX_BOOL);
    // This node's id, as registered for the jobs (PMIX_MONITOR_TARGET_NODEIDS).
    PMIX_INFO_CONSTRUCT(&server_info[2]);
    const std::uint32_t node_id = 0;
    PMIX_INFO_LOAD(&server_info[2], PMIX_NODEID, &node_id, PMIX_UINT32);
    pmix_status_t rc = PMIx_server_init(&module, server_info, 3);
    PMIX_INFO_DESTRUCT(&server_info[0]);
    PMIX_INFO_DESTRUCT(&server_info[1]);
    PMIX_INFO_DESTRUCT(&server_info[2]);
    if (rc != PMIX_SUCCESS) {
        std::fprintf(stderr, "pmixrun: cannot start the PMIx server: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (pmix_status_t ra = pmixrun::register_tool_attributes(); ra != PMIX_SUCCESS)  // tools.hpp
        std::fprintf(stderr, "pmixrun: cannot register attributes: %s\n", PMIx_Error_string(ra));
    pmixrun::install_termination_signals(g_aborted);  // SIGTERM/INT/HUP (signals.hpp)
    pmixrun::install_child_signal();                  // SIGCHLD wakes the wait loop
    pmixrun::job_control_start();                     // checkpoint completions (job_control.hpp)
    pmixrun::install_monitor_alerts(monitor_kill, [] {
        if (!g_aborted.exchange(true)) g_abort_status = 1;
        pmixrun::wake_main_loop();
    });

    // --- the job, and those it spawns ---
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
    pmixrun::Launcher launcher(std::move(base_env));
    pmixrun::JobSpec job;
    pmixrun::AppSpec app;
    app.program = argv[i];
    app.argv = child_argv;
    app.nprocs = static_cast<uint32_t>(nprocs);
    app.psets = psets;
    job.apps.push_back(std::move(app));
    std::string nspace;
    rc = launcher.launch(job, nspace);
    bool timed_out = false;
    int job_status = 1;
    if (rc == PMIX_SUCCESS) {
        job_status = launcher.wait_all(timeout, g_aborted, timed_out);
    } else {
        std::fprintf(stderr, "pmixrun: cannot start the job: %s\n", PMIx_Error_string(rc));
        // The processes started before the failure wait for peers that never
        // come (a fence of the whole job): terminate them, as for an abort
        // (SIGTERM, then SIGKILL after a grace period), and wait for them.
        const std::atomic<bool> failed{true};
        launcher.wait_all(0, failed, timed_out);
    }
    pmixrun::data_server_shutdown();
    launcher.deregister_all();
    PMIx_server_finalize();
    if (const int sig = pmixrun::termination_signal(); sig != 0) {
        std::fprintf(stderr, "pmixrun: terminated the job on signal %d\n", sig);
        return 128 + sig;
    }
    if (g_aborted) return g_abort_status.load() != 0 ? g_abort_status.load() : 1;
    if (timed_out) return 124;
    return job_status;
}
