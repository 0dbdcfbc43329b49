/* A client whose server dies gets PMIX_ERR_LOST_CONNECTION in every call
 * waiting on it (client/README.md; Client::lost_ for the shared-memory
 * fence, server_killed_host.c).
 *
 * The driver (main) forks the server host, which registers a 6-rank job and
 * starts the ranks; its query, spawn and lookup upcalls never answer. Each
 * rank reports "entering", then waits in one call the server cannot finish:
 *   rank 0  PMIx_Get of rank 1's "never.put" (rank 1 never commits)
 *   rank 1  PMIx_Fence over {1, 0} with PMIX_COLLECT_DATA (rank 0 never fences)
 *   rank 2  PMIx_Group_construct over {2, 0} (rank 0 never joins)
 *   rank 3  PMIx_Query_info of a key the host's query upcall holds
 *   rank 4  PMIx_Spawn (the host's spawn upcall holds it)
 *   rank 5  PMIx_Lookup with PMIX_WAIT (the host's lookup upcall holds it)
 * Once all six entered and the host saw its three upcalls, the driver
 * SIGKILLs the server. Every rank must return PMIX_ERR_LOST_CONNECTION
 * (bounded: each rank's alarm, 30 s); a call that failed before the kill
 * would report another status. Prints "server_lost <what> ok" per rank and
 * "server_lost all ok". */
#include <pmix.h>
#include <pmix_server.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(...) HOST_CHECK("server_lost", __VA_ARGS__)
#define NRANKS 6

static const char *const what[NRANKS] = {"get", "fence", "group", "query", "spawn", "lookup"};

static void say(int fd, const char *fmt, int a, int b) {
    char line[128];
    int n = snprintf(line, sizeof line, fmt, a, b);
    CHECK(write(fd, line, (size_t)n) == n, "write");
}

static int rank_main(int out) {
    alarm(30);
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "PMIx_Init");
    pmix_proc_t r0, r1;
    PMIX_LOAD_PROCID(&r0, me.nspace, 0);
    PMIX_LOAD_PROCID(&r1, me.nspace, 1);
    say(out, "entering %d %d\n", (int)me.rank, 0);
    pmix_status_t rc = PMIX_ERROR;
    if (me.rank == 0) {
        pmix_value_t *v = NULL;
        rc = PMIx_Get(&r1, "never.put", NULL, 0, &v);
    } else if (me.rank == 1) {
        pmix_proc_t procs[2] = {r1, r0};
        pmix_info_t collect;
        bool yes = true;
        PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        rc = PMIx_Fence(procs, 2, &collect, 1);
    } else if (me.rank == 2) {
        pmix_proc_t procs[2] = {me, r0};
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Group_construct("server.lost", procs, 2, NULL, 0, &results, &nresults);
    } else if (me.rank == 3) {
        pmix_query_t q;
        PMIX_QUERY_CONSTRUCT(&q);
        PMIX_ARGV_APPEND(rc, q.keys, "pmixpp.test.held");
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Query_info(&q, 1, &results, &nresults);
    } else if (me.rank == 4) {
        pmix_app_t app;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup("/bin/true");
        app.maxprocs = 1;
        pmix_nspace_t child;
        rc = PMIx_Spawn(NULL, 0, &app, 1, child);
    } else {
        pmix_pdata_t pd;
        PMIX_PDATA_CONSTRUCT(&pd);
        PMIX_LOAD_KEY(pd.key, "pmixpp.test.never.published");
        pmix_info_t wait;
        bool yes = true;
        PMIX_INFO_LOAD(&wait, PMIX_WAIT, &yes, PMIX_BOOL);
        rc = PMIx_Lookup(&pd, 1, &wait, 1);
    }
    say(out, "done %d %d\n", (int)me.rank, rc);
    _exit(0); /* no finalize: the server is gone */
}

/* The upcalls that never answer; each tells the driver it was reached. */
static int upcall_fd = -1;

static void reached(int which) {
    say(upcall_fd, "upcall %d %d\n", which, 0);
}

static pmix_status_t on_query(pmix_proc_t *proct, pmix_query_t *queries, size_t nqueries,
                              pmix_info_cbfunc_t cbfunc, void *cbdata) {
    (void)proct, (void)queries, (void)nqueries, (void)cbfunc, (void)cbdata;
    reached(3);
    return PMIX_SUCCESS; /* held: never called back */
}

static pmix_status_t on_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                              void *cbdata) {
    (void)proc, (void)job_info, (void)ninfo, (void)apps, (void)napps, (void)cbfunc, (void)cbdata;
    reached(4);
    return PMIX_SUCCESS;
}

static pmix_status_t on_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                               size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata) {
    (void)proc, (void)keys, (void)info, (void)ninfo, (void)cbfunc, (void)cbdata;
    reached(5);
    return PMIX_SUCCESS;
}

static void server_main(const char *self, int out) {
    upcall_fd = out;
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.query = on_query;
    module.spawn = on_spawn;
    module.lookup = on_lookup;
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    CHECK(host_register_job("lostw", NRANKS) == PMIX_SUCCESS, "register");
    for (int r = 0; r < NRANKS; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, "lostw", (pmix_rank_t)r);
        char **env = NULL;
        CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
        if (fork() == 0) {
            for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
            char o[16];
            snprintf(o, sizeof o, "%d", out);
            execl("/proc/self/exe", self, "rank", o, (char *)NULL);
            _exit(127);
        }
    }
    for (;;) pause();
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "rank") == 0) return rank_main(atoi(argv[2]));
    alarm(100);
    signal(SIGPIPE, SIG_IGN);
    int out[2];
    CHECK(pipe(out) == 0, "pipe");
    pid_t server = fork();
    if (server == 0) {
        close(out[0]);
        server_main(argv[0], out[1]);
    }
    close(out[1]);
    FILE *in = fdopen(out[0], "r");
    char line[128];
    int entering = 0, upcalls = 0, killed = 0, got[NRANKS] = {0};
    pmix_status_t status[NRANKS];
    while (fgets(line, sizeof line, in) != NULL) {
        int a = 0, b = 0;
        if (sscanf(line, "entering %d %d", &a, &b) == 2) {
            ++entering;
        } else if (sscanf(line, "upcall %d %d", &a, &b) == 2) {
            ++upcalls;
        } else if (sscanf(line, "done %d %d", &a, &b) == 2 && a >= 0 && a < NRANKS) {
            CHECK(killed, "rank %d (%s) returned %s before the server was killed", a, what[a],
                  PMIx_Error_string(b));
            status[a] = b;
            got[a] = 1;
        }
        if (!killed && entering == NRANKS && upcalls == 3) {
            /* Every call is on its way; the held upcalls are in the host. */
            kill(server, SIGKILL);
            waitpid(server, NULL, 0);
            killed = 1;
        }
    }
    CHECK(killed, "the ranks never all entered (%d) or the upcalls were not reached (%d)", entering,
          upcalls);
    for (int r = 0; r < NRANKS; ++r) {
        CHECK(got[r], "rank %d (%s) did not report", r, what[r]);
        CHECK(status[r] == PMIX_ERR_LOST_CONNECTION,
              "rank %d: %s returned %s (want LOST_CONNECTION)", r, what[r],
              PMIx_Error_string(status[r]));
        printf("server_lost %s ok\n", what[r]);
    }
    printf("server_lost all ok\n");
    return 0;
}
