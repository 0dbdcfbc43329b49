/* The server half of the fault matrix (issue 19, deliverable 4): a server
 * SIGKILLed at one protocol step, with every client in that step.
 *
 * usage: fault_host STEP   (handshake fence get connect spawn group query iof
 *                           finalize)
 *
 * The driver (main) forks a host that embeds the server. The host registers a
 * job of 4 ranks of which 3 are its own (rank 3 is on "another node": it is
 * never registered as a local client, so a fence, connect or group of the
 * whole job, and a Get of rank 3's data, reach the host), starts ranks 0-2
 * and gives the server a module with ONE upcall, the step's, which SIGKILLs
 * the host: the server dies with that step's request in its hands, which no
 * sleep decides. Each rank runs the step as a blocking call, reports its
 * status and then waits for its PMIX_ERR_LOST_CONNECTION event (for
 * `handshake`, the failed PMIx_Init is all there is). alarm() bounds every
 * wait: a rank that hangs reports "HUNG".
 *
 * The driver checks that the host died by SIGKILL (so the step's upcall was
 * reached), that every rank reported an error from the step and its event,
 * and prints "fault_host STEP ok".
 *
 * `finalize`: the step is PMIx_Finalize, and the host dies in the third
 * client_finalized upcall (the first two never call back), so that every
 * rank's request is in the server's hands: each Finalize must return an error
 * (the server never answered), not hang, and no event follows (the process
 * has finalized). */
#define _GNU_SOURCE /* nftw */
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include <ftw.h>

#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_common.h"

enum { kLocal = 3, kSize = 4, kRankBound = 30, kDriverBound = 90 };
#define NSPACE "faults"

static const char *g_step = "?";
static int g_out = -1;
static pmix_rank_t g_rank = 0;

static void say(const char *fmt, const char *a, const char *b) {
    char line[160];
    int n = snprintf(line, sizeof line, fmt, (unsigned)g_rank, g_step, a, b);
    if (write(g_out, line, (size_t)n) != n) _exit(3);
}

/* ---- the ranks ---------------------------------------------------------- */

/* Set by the event handler on the progress thread, read by the main thread and
 * by the SIGALRM handler (which the kernel may run on any thread): atomics, not
 * volatile, which orders nothing between threads. */
static _Atomic int lost = 0;
static _Atomic(const char *) g_phase = "in PMIx_Init";

static void on_lost(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    lost = 1;
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void rank_hung(int sig) {
    (void)sig;
    say("rank %u %s: HUNG %s%s\n", (const char *)g_phase,
        lost ? " (after the event)" : " (no event)");
    _exit(2);
}

static void ignore_iof(size_t id, pmix_iof_channel_t channel, pmix_proc_t *source,
                       pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)id, (void)channel, (void)source, (void)payload, (void)info, (void)ninfo;
}

static pmix_status_t run_step(const pmix_proc_t *me) {
    pmix_proc_t all, remote;
    PMIX_LOAD_PROCID(&all, me->nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&remote, me->nspace, kSize - 1);
    if (strcmp(g_step, "fence") == 0) {
        pmix_info_t collect;
        bool yes = true;
        PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        return PMIx_Fence(&all, 1, &collect, 1);
    }
    if (strcmp(g_step, "get") == 0) {
        pmix_value_t *v = NULL;
        pmix_status_t rc = PMIx_Get(&remote, "fault.remote.key", NULL, 0, &v);
        if (v != NULL) PMIX_VALUE_RELEASE(v);
        return rc;
    }
    if (strcmp(g_step, "connect") == 0) return PMIx_Connect(&all, 1, NULL, 0);
    if (strcmp(g_step, "group") == 0) {
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        pmix_status_t rc =
            PMIx_Group_construct("fault.group", &all, 1, NULL, 0, &results, &nresults);
        if (results != NULL) PMIX_INFO_FREE(results, nresults);
        return rc;
    }
    if (strcmp(g_step, "spawn") == 0) {
        pmix_app_t app;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup("/bin/true");
        app.maxprocs = 1;
        char ns[PMIX_MAX_NSLEN + 1];
        pmix_status_t rc = PMIx_Spawn(NULL, 0, &app, 1, ns);
        PMIX_APP_DESTRUCT(&app);
        return rc;
    }
    if (strcmp(g_step, "query") == 0) {
        pmix_query_t *q;
        pmix_status_t rc;
        PMIX_QUERY_CREATE(q, 1);
        PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_PROC_TABLE);
        PMIX_INFO_CREATE(q[0].qualifiers, 1);
        q[0].nqual = 1;
        PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, me->nspace, PMIX_STRING);
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Query_info(q, 1, &results, &nresults);
        if (results != NULL) PMIX_INFO_FREE(results, nresults);
        PMIX_QUERY_FREE(q, 1);
        return rc;
    }
    if (strcmp(g_step, "iof") == 0) {
        return PMIx_IOF_pull(&all, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, ignore_iof, NULL, NULL);
    }
    if (strcmp(g_step, "finalize") == 0) return PMIx_Finalize(NULL, 0);
    return PMIX_ERR_BAD_PARAM;
}

static int rank_main(int go) {
    g_rank = (pmix_rank_t)atoi(getenv("PMIX_RANK"));
    signal(SIGALRM, rank_hung);
    alarm(kRankBound);
    g_phase = "waiting for the host to start every rank";
    char c;
    if (read(go, &c, 1) != 1) {
        say("rank %u %s: no go from the host%s%s\n", "", "");
        _exit(1);
    }
    close(go);
    g_phase = "in PMIx_Init";
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (strcmp(g_step, "handshake") == 0) {
        say("rank %u %s: init %s%s\n", PMIx_Error_string(rc), "");
        _exit(0);
    }
    if (rc != PMIX_SUCCESS) {
        say("rank %u %s: init failed: %s%s\n", PMIx_Error_string(rc), "");
        _exit(1);
    }
    pmix_status_t code = PMIX_ERR_LOST_CONNECTION;
    PMIx_Register_event_handler(&code, 1, NULL, 0, on_lost, NULL, NULL);
    /* Every rank connected before any enters the step (the local ranks'
     * fence completes in this server without the host). */
    g_phase = "in the start-up fence";
    pmix_proc_t local[kLocal];
    for (int r = 0; r < kLocal; ++r) PMIX_LOAD_PROCID(&local[r], me.nspace, (pmix_rank_t)r);
    rc = PMIx_Fence(local, kLocal, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        say("rank %u %s: start-up fence failed: %s%s\n", PMIx_Error_string(rc), "");
        _exit(1);
    }
    g_phase = "in the step";
    rc = run_step(&me);
    if (strcmp(g_step, "finalize") == 0) {
        say("rank %u %s: step %s%s, returned\n", PMIx_Error_string(rc), "");
        _exit(0);
    }
    g_phase = "waiting for the event";
    while (!lost) usleep(1000); /* bounded by alarm() */
    say("rank %u %s: step %s%s, then the event\n", PMIx_Error_string(rc), "");
    _exit(0); /* no finalize: the server is gone */
}

/* A tool (tool_query, tool_iof) instead of the ranks: PMIx_tool_init to the
 * host's server by its pid in the test's directory, then the step. */
static int tool_main(int go, const char *dir) {
    signal(SIGALRM, rank_hung);
    alarm(kRankBound);
    char c;
    if (read(go, &c, 1) != 1) _exit(1);
    close(go);
    g_phase = "in PMIx_tool_init";
    pmix_info_t info[2];
    pid_t host = getppid();
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_PIDINFO, &host, PMIX_PID);
    PMIX_INFO_LOAD(&info[1], PMIX_SERVER_TMPDIR, dir, PMIX_STRING);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, info, 2);
    if (rc != PMIX_SUCCESS) {
        say("tool %u %s: tool_init failed: %s%s\n", PMIx_Error_string(rc), "");
        _exit(1);
    }
    pmix_status_t code = PMIX_ERR_LOST_CONNECTION;
    PMIx_Register_event_handler(&code, 1, NULL, 0, on_lost, NULL, NULL);
    g_phase = "in the step";
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, NSPACE, 0);
    g_step += strlen("tool_"); /* the client form of the step, from a tool */
    rc = run_step(&job);
    g_step -= strlen("tool_");
    g_phase = "waiting for the event";
    while (!lost) usleep(1000); /* bounded by alarm() */
    say("tool %u %s: step %s%s, then the event\n", PMIx_Error_string(rc), "");
    _exit(0);
}

static void approve_tool(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                         void *cbdata) {
    (void)info, (void)ninfo;
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, "faults.tool", 0);
    cbfunc(PMIX_SUCCESS, &proc, cbdata);
}

/* ---- the host: one upcall, the step's, which kills it ------------------ */

static void die(void) {
    raise(SIGKILL);
}

static pmix_status_t kill_connected(const pmix_proc_t *p, void *o, pmix_info_t i[], size_t n,
                                    pmix_op_cbfunc_t cb, void *cbd) {
    (void)p, (void)o, (void)i, (void)n, (void)cb, (void)cbd;
    die();
    return PMIX_ERROR;
}

static pmix_status_t kill_fence(const pmix_proc_t p[], size_t np, const pmix_info_t i[], size_t n,
                                char *data, size_t nd, pmix_modex_cbfunc_t cb, void *cbd) {
    (void)p, (void)np, (void)i, (void)n, (void)data, (void)nd, (void)cb, (void)cbd;
    die();
    return PMIX_ERROR;
}

static pmix_status_t kill_dmodex(const pmix_proc_t *p, const pmix_info_t i[], size_t n,
                                 pmix_modex_cbfunc_t cb, void *cbd) {
    (void)p, (void)i, (void)n, (void)cb, (void)cbd;
    die();
    return PMIX_ERROR;
}

static pmix_status_t kill_connect(const pmix_proc_t p[], size_t np, const pmix_info_t i[], size_t n,
                                  pmix_op_cbfunc_t cb, void *cbd) {
    (void)p, (void)np, (void)i, (void)n, (void)cb, (void)cbd;
    die();
    return PMIX_ERROR;
}

static pmix_status_t kill_spawn(const pmix_proc_t *p, const pmix_info_t i[], size_t n,
                                const pmix_app_t a[], size_t na, pmix_spawn_cbfunc_t cb,
                                void *cbd) {
    (void)p, (void)i, (void)n, (void)a, (void)na, (void)cb, (void)cbd;
    die();
    return PMIX_ERROR;
}

static pmix_status_t kill_group(pmix_group_operation_t op, char grp[], const pmix_proc_t p[],
                                size_t np, const pmix_info_t d[], size_t nd, pmix_info_cbfunc_t cb,
                                void *cbd) {
    (void)op, (void)grp, (void)p, (void)np, (void)d, (void)nd, (void)cb, (void)cbd;
    die();
    return PMIX_ERROR;
}

static pmix_status_t kill_query(pmix_proc_t *p, pmix_query_t *q, size_t nq, pmix_info_cbfunc_t cb,
                                void *cbd) {
    (void)p, (void)q, (void)nq, (void)cb, (void)cbd;
    die();
    return PMIX_ERROR;
}

static pmix_status_t kill_iof(const pmix_proc_t p[], size_t np, const pmix_info_t d[], size_t nd,
                              pmix_iof_channel_t ch, pmix_op_cbfunc_t cb, void *cbd) {
    (void)p, (void)np, (void)d, (void)nd, (void)ch, (void)cb, (void)cbd;
    die();
    return PMIX_ERROR;
}

static pmix_status_t kill_finalized(const pmix_proc_t *p, void *o, pmix_op_cbfunc_t cb, void *cbd) {
    (void)p, (void)o, (void)cb, (void)cbd;
    static int calls = 0;
    if (++calls == kLocal) die();
    return PMIX_SUCCESS; /* and never call back */
}

static void host_main(const char *self, const char *dir) {
    /* The ranks start PMIx_Init together once all are forked (a server
     * killed in the first handshake must not keep the others from starting). */
    int go[2];
    HOST_CHECK("fault_host", pipe(go) == 0, "pipe");
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    if (strcmp(g_step, "handshake") == 0) module.client_connected2 = kill_connected;
    if (strcmp(g_step, "fence") == 0) module.fence_nb = kill_fence;
    if (strcmp(g_step, "get") == 0) module.direct_modex = kill_dmodex;
    if (strcmp(g_step, "connect") == 0) module.connect = kill_connect;
    if (strcmp(g_step, "spawn") == 0) module.spawn = kill_spawn;
    if (strcmp(g_step, "group") == 0) module.group = kill_group;
    if (strcmp(g_step, "query") == 0) module.query = kill_query;
    if (strcmp(g_step, "iof") == 0) module.iof_pull = kill_iof;
    if (strcmp(g_step, "finalize") == 0) module.client_finalized = kill_finalized;
    const int tool = strncmp(g_step, "tool_", 5) == 0;
    if (strcmp(g_step, "tool_query") == 0) module.query = kill_query;
    if (strcmp(g_step, "tool_iof") == 0) module.iof_pull = kill_iof;
    pmix_info_t sinfo[2];
    bool yes = true;
    PMIX_INFO_LOAD(&sinfo[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&sinfo[1], PMIX_SERVER_TMPDIR, dir, PMIX_STRING);
    if (tool) module.tool_connected = approve_tool;
    HOST_CHECK("fault_host", PMIx_server_init(&module, sinfo, tool ? 2 : 0) == PMIX_SUCCESS,
               "server init");
    /* kSize ranks in the job, kLocal of them this host's */
    for (int r = 0; r < kLocal; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, NSPACE, (pmix_rank_t)r);
        HOST_CHECK(
            "fault_host",
            host_registered(PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL)),
            "register rank %d", r);
    }
    pmix_info_t info;
    uint32_t n = kSize;
    PMIX_INFO_LOAD(&info, PMIX_JOB_SIZE, &n, PMIX_UINT32);
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, NSPACE);
    HOST_CHECK("fault_host",
               host_registered(PMIx_server_register_nspace(ns, kLocal, &info, 1, NULL, NULL)),
               "register nspace");
    if (tool) {
        if (fork() == 0) {
            close(go[1]);
            char out[16], in[16];
            snprintf(out, sizeof out, "%d", g_out);
            snprintf(in, sizeof in, "%d", go[0]);
            execl("/proc/self/exe", self, "tool", g_step, out, in, dir, (char *)NULL);
            _exit(127);
        }
        close(go[0]);
        HOST_CHECK("fault_host", write(go[1], "g", 1) == 1, "go");
        for (;;) pause();
    }
    for (int r = 0; r < kLocal; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, NSPACE, (pmix_rank_t)r);
        char **env = NULL;
        HOST_CHECK("fault_host", PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
        if (fork() == 0) {
            for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
            close(go[1]);
            char out[16], in[16];
            snprintf(out, sizeof out, "%d", g_out);
            snprintf(in, sizeof in, "%d", go[0]);
            execl("/proc/self/exe", self, "rank", g_step, out, in, (char *)NULL);
            _exit(127);
        }
    }
    close(go[0]);
    HOST_CHECK("fault_host", write(go[1], "ggg", kLocal) == kLocal, "go");
    for (;;) pause(); /* until the step's upcall kills us */
}

/* ---- the driver -------------------------------------------------------- */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "rank") == 0) {
        g_step = argv[2];
        g_out = atoi(argv[3]);
        return rank_main(atoi(argv[4]));
    }
    if (argc == 6 && strcmp(argv[1], "tool") == 0) {
        g_step = argv[2];
        g_out = atoi(argv[3]);
        return tool_main(atoi(argv[4]), argv[5]);
    }
    if (argc != 2) {
        fprintf(stderr, "usage: fault_host STEP\n");
        return 64;
    }
    g_step = argv[1];
    const int expected = strncmp(g_step, "tool_", 5) == 0 ? 1 : kLocal;
    alarm(kDriverBound);
    char dir[] = "/tmp/fault_host.XXXXXX"; /* the tools' rendezvous files */
    HOST_CHECK("fault_host", mkdtemp(dir) != NULL, "mkdtemp");
    /* the ranks outlive their host: they become our children, and how each
     * one ended (a crash is a failure too) is ours to see */
    HOST_CHECK("fault_host", prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "subreaper");
    int out[2];
    HOST_CHECK("fault_host", pipe(out) == 0, "pipe");
    pid_t host = fork();
    if (host == 0) {
        close(out[0]);
        g_out = out[1];
        host_main(argv[0], dir);
    }
    close(out[1]);
    /* Every rank holds the pipe: EOF means all of them are gone. */
    FILE *in = fdopen(out[0], "r");
    char line[256];
    int reported = 0, good = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        fputs(line, stdout);
        ++reported;
        if (strstr(line, "HUNG") != NULL) continue;
        if (strcmp(g_step, "handshake") == 0) {
            if (strstr(line, ": init SUCCESS") == NULL) ++good;
        } else if (strcmp(g_step, "finalize") == 0) {
            if (strstr(line, ": step ") != NULL && strstr(line, ": step SUCCESS") == NULL &&
                strstr(line, ", returned") != NULL)
                ++good;
        } else if (strstr(line, ": step ") != NULL && strstr(line, ": step SUCCESS") == NULL &&
                   strstr(line, "then the event") != NULL) {
            ++good;
        }
    }
    int status = 0;
    HOST_CHECK("fault_host", waitpid(host, &status, 0) == host, "wait for the host");
    char pattern[64];
    snprintf(pattern, sizeof pattern, "/dev/shm/pmixpp.fence.%d.*", (int)host);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) unlink(g.gl_pathv[i]);
        globfree(&g);
    }
    const int host_status = status;
    int crashed = 0;
    for (pid_t pid; (pid = wait(&status)) > 0;) {
        if (WIFSIGNALED(status) || WEXITSTATUS(status) != 0) {
            printf("a rank (pid %d) ended with %s %d\n", (int)pid,
                   WIFSIGNALED(status) ? "signal" : "status",
                   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
            ++crashed;
        }
    }
    HOST_CHECK("fault_host", crashed == 0, "%d ranks did not end well", crashed);
    HOST_CHECK("fault_host", WIFSIGNALED(host_status) && WTERMSIG(host_status) == SIGKILL,
               "the host was not killed in its %s upcall (status %d): the step never reached it",
               g_step, host_status);
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    HOST_CHECK("fault_host", reported == expected, "%d of %d processes reported", reported,
               expected);
    HOST_CHECK("fault_host", good == expected, "%d of %d processes got an error and the event",
               good, expected);
    printf("fault_host %s ok\n", g_step);
    return 0;
}
