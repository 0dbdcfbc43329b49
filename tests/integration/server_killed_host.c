/* A server killed between two shared-memory fences (issue 19 items 3 and 6):
 * the ranks must agree that the second fence failed, and PMIx_Commit after
 * the loss must fail.
 *
 * The driver (main) forks the server host, which registers a 3-rank job
 * (all on this node: its fences meet in the shared-memory barrier) and
 * starts the ranks. All three fence once. Ranks 0 and 1 then enter a second
 * fence; the driver SIGKILLs the server; both must return an error. Only
 * then is rank 2 let into the same fence: its arrival must not complete the
 * barrier with the two departed arrivals (before the fix it returned
 * SUCCESS, so ranks disagreed about one fence). Rank 0 waits for its
 * LOST_CONNECTION event and calls PMIx_Commit: an error, not SUCCESS.
 * Prints "server_killed fence ok" and "server_killed commit ok". */
#include <pmix.h>
#include <pmix_server.h>

#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(cond, ...)                                    \
    do {                                                    \
        if (!(cond)) {                                      \
            fprintf(stderr, "server_killed: " __VA_ARGS__); \
            fprintf(stderr, "\n");                          \
            exit(1);                                        \
        }                                                   \
    } while (0)

static _Atomic int lost = 0; /* set on the progress thread */

static void on_lost(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    lost = 1;
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void say(int fd, const char *fmt, int a, int b) {
    char line[128];
    int n = snprintf(line, sizeof line, fmt, a, b);
    CHECK(write(fd, line, (size_t)n) == n, "write");
}

static int rank_main(int out, int go) {
    alarm(60);
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "PMIx_Init");
    pmix_status_t code = PMIX_ERR_LOST_CONNECTION;
    PMIx_Register_event_handler(&code, 1, NULL, 0, on_lost, NULL, NULL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "rank %u: first fence: %s", me.rank, PMIx_Error_string(rc));
    if (me.rank == 2) {
        char c;
        CHECK(read(go, &c, 1) == 1, "rank 2: no go");
    } else {
        say(out, "entering %d %d\n", (int)me.rank, 0);
    }
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    say(out, "fence2 %d %d\n", (int)me.rank, rc);
    if (me.rank == 0) {
        while (!lost) usleep(1000); /* bounded by alarm() */
        PMIx_Put(PMIX_LOCAL, "after.loss", &(pmix_value_t){.type = PMIX_INT, .data.integer = 1});
        say(out, "commit %d %d\n", 0, PMIx_Commit());
    }
    _exit(0); /* no finalize: the server is gone */
}

static void server_main(const char *self, int out, int go) {
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    CHECK(host_register_job("killed", 3) == PMIX_SUCCESS, "register");
    for (int r = 0; r < 3; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, "killed", (pmix_rank_t)r);
        char **env = NULL;
        CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
        if (fork() == 0) {
            for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
            char o[16], g[16];
            snprintf(o, sizeof o, "%d", out);
            snprintf(g, sizeof g, "%d", go);
            execl("/proc/self/exe", self, "rank", o, g, (char *)NULL);
            _exit(127);
        }
    }
    for (;;) pause();
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "rank") == 0) return rank_main(atoi(argv[2]), atoi(argv[3]));
    alarm(100);
    int out[2], go[2];
    CHECK(pipe(out) == 0 && pipe(go) == 0, "pipe");
    pid_t server = fork();
    if (server == 0) {
        close(out[0]);
        close(go[1]);
        server_main(argv[0], out[1], go[0]);
    }
    close(out[1]);
    close(go[0]);
    FILE *in = fdopen(out[0], "r");
    char line[128];
    int entering = 0, fence2[3] = {1, 1, 1}, got[3] = {0, 0, 0}, commit = PMIX_SUCCESS,
        have_commit = 0;
    int go_sent = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        int a = 0, b = 0;
        if (sscanf(line, "entering %d %d", &a, &b) == 2 && ++entering == 2) {
            kill(server, SIGKILL);
            waitpid(server, NULL, 0);
        } else if (sscanf(line, "fence2 %d %d", &a, &b) == 2 && a >= 0 && a < 3) {
            fence2[a] = b;
            got[a] = 1;
        } else if (sscanf(line, "commit %d %d", &a, &b) == 2) {
            commit = b;
            have_commit = 1;
        }
        if (!go_sent && got[0] && got[1]) {
            CHECK(write(go[1], "g", 1) == 1, "go");
            go_sent = 1;
        }
    }
    /* The killed server's segment (what pmixrun or the next server removes). */
    char pattern[64];
    snprintf(pattern, sizeof pattern, "/dev/shm/pmixpp.fence.%d.*", (int)server);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) unlink(g.gl_pathv[i]);
        globfree(&g);
    }
    CHECK(got[0] && got[1] && got[2], "a rank did not report its second fence");
    for (int r = 0; r < 3; ++r) {
        printf("rank %d: second fence %s\n", r, PMIx_Error_string(fence2[r]));
        CHECK(fence2[r] != PMIX_SUCCESS, "rank %d's fence succeeded after the server died", r);
    }
    printf("server_killed fence ok\n");
    CHECK(have_commit, "rank 0 did not report its commit");
    CHECK(commit != PMIX_SUCCESS, "PMIx_Commit succeeded after the server died");
    printf("server_killed commit ok\n");
    return 0;
}
