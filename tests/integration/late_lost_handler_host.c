/* A PMIX_ERR_LOST_CONNECTION handler registered after the server is gone
 * (docs/events.md, "A handler registered after the loss").
 *
 * The driver (main) forks the server host, which registers a 1-rank job and
 * starts the rank. The rank registers handler A for LOST_CONNECTION and says
 * "ready"; the driver SIGKILLs the server. Once A has fired, the rank
 * registers, after the loss:
 *   B  for LOST_CONNECTION, blocking: an id >= 0, and B is called once with
 *      LOST_CONNECTION from the same source as A (before the fix: the
 *      registration succeeded and B was never called);
 *   C  for LOST_CONNECTION, non-blocking: its registration callback reports
 *      SUCCESS before C is called;
 *   D  a default handler (no codes): it hears of the loss too;
 *   E  for another code: registered, not called with the loss; a PROC_LOCAL
 *      PMIx_Notify_event of that code still reaches it (the process's own
 *      events), while one for the job's range fails with LOST_CONNECTION.
 * That local event, posted after every registration, is the barrier after
 * which A and B must each have been called exactly once. Every wait is
 * bounded by alarm(). Prints "late_lost <what> ok" per step and
 * "late_lost all ok". */
#include <pmix.h>
#include <pmix_server.h>

#include <glob.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(cond, ...) HOST_CHECK("late_lost", cond, __VA_ARGS__)

/* Handlers run on the progress thread; main reads these. */
enum { A, B, C, D, E, NHANDLERS };
static _Atomic int calls[NHANDLERS];
static _Atomic int lost_calls[NHANDLERS];
static _Atomic int order = 0;           /* a counter: who came first */
static _Atomic int c_called_at = 0;     /* order when C was first called */
static _Atomic int c_registered_at = 0; /* order when C's registration callback ran */
static _Atomic int c_reg_status = 1;    /* 1: not yet */
static pmix_proc_t sources[NHANDLERS];  /* written before calls[] is incremented */

#define TEST_CODE (PMIX_EXTERNAL_ERR_BASE - 42)

static void handler(int which, pmix_status_t status, const pmix_proc_t *source,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    if (status == PMIX_ERR_LOST_CONNECTION) {
        if (source != NULL) sources[which] = *source;
        ++lost_calls[which];
    }
    if (which == C && c_called_at == 0) c_called_at = ++order;
    ++calls[which];
    if (cbfunc != NULL) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

#define HANDLER(name, which)                                                                   \
    static void name(size_t id, pmix_status_t status, const pmix_proc_t *source,               \
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults, \
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {               \
        (void)id, (void)info, (void)ninfo, (void)results, (void)nresults;                      \
        handler(which, status, source, cbfunc, cbdata);                                        \
    }
HANDLER(on_a, A)
HANDLER(on_b, B)
HANDLER(on_c, C)
HANDLER(on_d, D)
HANDLER(on_e, E)

static void c_registered(pmix_status_t status, size_t ref, void *cbdata) {
    (void)ref, (void)cbdata;
    c_registered_at = ++order;
    c_reg_status = status;
}

static void wait_until(_Atomic int *v, int at_least) {
    while (*v < at_least) usleep(1000); /* bounded by alarm() */
}

static void say(int fd, const char *what) {
    char line[128];
    int n = snprintf(line, sizeof line, "%s\n", what);
    if (write(fd, line, (size_t)n) != n) _exit(2);
}

static int rank_main(int out) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* what passed is seen even if alarm() ends us */
    alarm(60);
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "PMIx_Init");
    pmix_status_t lost = PMIX_ERR_LOST_CONNECTION;
    int rc = PMIx_Register_event_handler(&lost, 1, NULL, 0, on_a, NULL, NULL);
    CHECK(rc >= 0, "register A: %s", PMIx_Error_string(rc));
    say(out, "ready");
    wait_until(&lost_calls[A], 1); /* the server is gone, and this process knows it */
    printf("late_lost first handler ok\n");

    rc = PMIx_Register_event_handler(&lost, 1, NULL, 0, on_b, NULL, NULL);
    CHECK(rc >= 0, "register B after the loss: %s", PMIx_Error_string(rc));
    wait_until(&lost_calls[B], 1);
    CHECK(strncmp(sources[B].nspace, sources[A].nspace, PMIX_MAX_NSLEN) == 0 &&
              sources[B].rank == sources[A].rank,
          "B's source %s:%u is not A's %s:%u", sources[B].nspace, sources[B].rank,
          sources[A].nspace, sources[A].rank);
    printf("late_lost blocking registration ok\n");

    rc = PMIx_Register_event_handler(&lost, 1, NULL, 0, on_c, c_registered, NULL);
    CHECK(rc == PMIX_SUCCESS, "register C: %s", PMIx_Error_string(rc));
    wait_until(&lost_calls[C], 1);
    CHECK(c_reg_status == PMIX_SUCCESS, "C's registration callback: %s",
          PMIx_Error_string(c_reg_status));
    CHECK(c_registered_at != 0 && c_registered_at < c_called_at,
          "C was called before its registration callback ran");
    printf("late_lost non-blocking registration ok\n");

    rc = PMIx_Register_event_handler(NULL, 0, NULL, 0, on_d, NULL, NULL);
    CHECK(rc >= 0, "register D: %s", PMIx_Error_string(rc));
    wait_until(&lost_calls[D], 1);
    printf("late_lost default handler ok\n");

    pmix_status_t code = TEST_CODE;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_e, NULL, NULL);
    CHECK(rc >= 0, "register E: %s", PMIx_Error_string(rc));
    rc = PMIx_Notify_event(code, NULL, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_ERR_LOST_CONNECTION, "notify to the job after the loss: %s",
          PMIx_Error_string(rc));
    rc = PMIx_Notify_event(code, NULL, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "local notify after the loss: %s", PMIx_Error_string(rc));
    wait_until(&calls[E], 1);
    CHECK(lost_calls[E] == 0, "E (another code) was called with the loss");
    printf("late_lost local events ok\n");

    /* The local event was posted after every registration's replay. */
    CHECK(lost_calls[A] == 1 && lost_calls[B] == 1 && lost_calls[C] == 1 && lost_calls[D] == 1,
          "the loss reached A %d, B %d, C %d, D %d times (once each expected)", lost_calls[A],
          lost_calls[B], lost_calls[C], lost_calls[D]);
    rc = PMIx_Finalize(NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "finalize after the loss: %s", PMIx_Error_string(rc));
    printf("late_lost all ok\n");
    fflush(stdout);
    return 0;
}

static void server_main(const char *self, int out) {
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    CHECK(host_register_job("latelost", 1) == PMIX_SUCCESS, "register");
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "latelost", 0);
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
    fflush(stdout);
    if (fork() == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        char o[16];
        snprintf(o, sizeof o, "%d", out);
        execl("/proc/self/exe", self, "rank", o, (char *)NULL);
        _exit(127);
    }
    for (;;) pause();
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "rank") == 0) return rank_main(atoi(argv[2]));
    alarm(100);
    int out[2];
    CHECK(pipe(out) == 0, "pipe");
    fflush(stdout);
    pid_t server = fork();
    if (server == 0) {
        close(out[0]);
        server_main(argv[0], out[1]);
    }
    close(out[1]);
    char c[6];
    CHECK(read(out[0], c, sizeof c) == (ssize_t)sizeof c && memcmp(c, "ready\n", 6) == 0,
          "the rank did not get ready");
    kill(server, SIGKILL);
    CHECK(host_reap(server) == 128 + SIGKILL, "the server did not die of SIGKILL");
    /* EOF: the rank (the server's orphan) exited. */
    while (read(out[0], c, 1) > 0) {
    }
    char pattern[64];
    snprintf(pattern, sizeof pattern, "/dev/shm/pmixpp.fence.%d.*", (int)server);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) unlink(g.gl_pathv[i]);
        globfree(&g);
    }
    return 0;
}
