/* A host embedding the server API, sibling of departure_host.c: every way a
 * process departs releases what the tool, IOF and event services hold for
 * it, every waiter on it is answered with an error within a bound, and the
 * server goes on serving the others (framework/server/README.md,
 * "Departures").
 *
 * usage: departure_services_host KIND WAITER    (forks itself as the processes)
 *   KIND   finalized          the departer calls PMIx_Finalize / PMIx_tool_finalize
 *          lost               it exits without finalizing
 *          deregister_client  the host deregisters it (PMIx_server_deregister_client)
 *          deregister_nspace  the host deregisters its namespace
 *   WAITER tool    the departer is a tool connected to this server (named
 *                  dsT:0 by the host's tool_connected). After its
 *                  departure a new tool is given the same name and connects.
 *          iof     the departer holds an IOF pull of the waiter's stdout.
 *                  After its departure the same identity connects again
 *                  (registered again by the host when it was deregistered)
 *                  without a pull; output the host then delivers for that
 *                  source is kept (no one pulls it any more: the old pull
 *                  went with the departure) and reaches the waiter's own
 *                  later pull.
 *          events  the departer registered a handler for an event code the
 *                  host was asked for (register_events). Its departure
 *                  releases it: the host's deregister_events gets that code.
 * In each case the waiter W (a client of its own job) is blocked in
 * PMIx_Get(departer, "never.put") without PMIX_TIMEOUT when the departure
 * happens; it must get PMIX_ERR_NOT_FOUND within 10 s, then a fence over
 * itself must succeed. W is killed by SIGALRM after 20 s, the host after
 * 60 s (a hang fails). Prints "departure services host KIND WAITER ok" and
 * "departure services waiter KIND WAITER ok". */
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(...) HOST_CHECK("departure_services_host", __VA_ARGS__)

/* The event code only the departer registers for. */
#define CODE_DEPARTER (PMIX_EXTERNAL_ERR_BASE - 61)
#define LATE_OUTPUT "late output\n"

static const char *kind, *waiter;

static int is(const char *a, const char *b) {
    return strcmp(a, b) == 0;
}

static pmix_proc_t departer_proc(void) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, is(waiter, "tool") ? "dsT" : "dsD", 0);
    return p;
}

static int env_fd(const char *name) {
    const char *v = getenv(name);
    CHECK(v != NULL, "no %s", name);
    return atoi(v);
}

static void signal_fd(const char *name) {
    CHECK(write(env_fd(name), "x", 1) == 1, "%s", name);
}

static void wait_fd(const char *name) {
    char c = 0;
    CHECK(read(env_fd(name), &c, 1) == 1, "%s", name);
}

/* Waits at most `seconds` until *flag is set under `lock`. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int wait_flag(_Atomic int *flag, int seconds) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += seconds;
    int rc = 0;
    pthread_mutex_lock(&lock);
    while (*flag == 0 && rc == 0) rc = pthread_cond_timedwait(&cond, &lock, &deadline);
    const int ok = *flag != 0;
    pthread_mutex_unlock(&lock);
    return ok;
}
static void set_flag(_Atomic int *flag) {
    pthread_mutex_lock(&lock);
    *flag = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- departer */
static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void ignore_output(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source,
                          pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)ref, (void)channel, (void)source, (void)info, (void)ninfo;
    PMIX_BYTE_OBJECT_DESTRUCT(payload);
}

static int departer_main(void) {
    alarm(30); /* never outlives a failed host */
    pmix_proc_t me;
    pmix_status_t rc;
    if (is(waiter, "tool")) {
        rc = PMIx_tool_init(&me, NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "tool init: %s", PMIx_Error_string(rc));
        CHECK(strcmp(me.nspace, "dsT") == 0 && me.rank == 0, "tool named %s:%u", me.nspace,
              me.rank);
    } else {
        rc = PMIx_Init(&me, NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "departer init: %s", PMIx_Error_string(rc));
    }
    if (is(waiter, "iof")) {
        pmix_proc_t w;
        PMIX_LOAD_PROCID(&w, "dsW", 0);
        rc = PMIx_IOF_pull(&w, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, ignore_output, NULL, NULL);
        CHECK(rc >= 0, "departer's IOF pull: %s", PMIx_Error_string(rc));
    } else if (is(waiter, "events")) {
        pmix_status_t code = CODE_DEPARTER;
        rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
        CHECK(rc >= 0, "departer's event registration: %s", PMIx_Error_string(rc));
    }
    signal_fd("DEPARTURE_READY_FD");
    wait_fd("DEPARTURE_GO_FD");
    if (is(kind, "finalized")) {
        rc = is(waiter, "tool") ? PMIx_tool_finalize() : PMIx_Finalize(NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "departer finalize: %s", PMIx_Error_string(rc));
    }
    /* lost: gone without a word; deregistered: the server closed us. */
    _exit(0);
}

/* The departer's identity back after its departure, pulling nothing. */
static int back_main(void) {
    alarm(30);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "the departer's identity back: init: %s", PMIx_Error_string(rc));
    signal_fd("DEPARTURE_READY_FD");
    wait_fd("DEPARTURE_GO_FD");
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* A second tool after the first departed: the host names it dsT:0 again. */
static int again_main(void) {
    alarm(30);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "second tool init: %s", PMIx_Error_string(rc));
    CHECK(strcmp(me.nspace, "dsT") == 0 && me.rank == 0, "second tool named %s:%u", me.nspace,
          me.rank);
    rc = PMIx_tool_finalize();
    CHECK(rc == PMIX_SUCCESS, "second tool finalize: %s", PMIx_Error_string(rc));
    printf("departure services tool again ok\n");
    fflush(stdout);
    return 0;
}

/* ------------------------------------------------------------------ waiter */
static _Atomic int got_late = 0;
static void on_output(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source,
                      pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)ref, (void)info, (void)ninfo;
    if (channel == PMIX_FWD_STDOUT_CHANNEL && strcmp(source->nspace, "dsW") == 0 &&
        payload->size == strlen(LATE_OUTPUT) &&
        memcmp(payload->bytes, LATE_OUTPUT, payload->size) == 0) {
        set_flag(&got_late);
    }
    PMIX_BYTE_OBJECT_DESTRUCT(payload);
}

static int waiter_main(void) {
    alarm(20);
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "waiter init");
    const pmix_proc_t d = departer_proc();
    signal_fd("DEPARTURE_READY_FD");
    const double start = host_now();
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&d, "never.put", NULL, 0, &val);
    if (val != NULL) PMIX_VALUE_RELEASE(val);
    const double took = host_now() - start;
    CHECK(rc == PMIX_ERR_NOT_FOUND, "get after %s of the %s departer: %s after %.1f s", kind,
          waiter, PMIx_Error_string(rc), took);
    CHECK(took < 10, "get after %s of the %s departer answered after %.1f s", kind, waiter, took);
    if (is(waiter, "iof")) {
        /* The departure is done (the get was answered): the host delivers
         * output of this process, then this process pulls it. */
        signal_fd("DEPARTURE_SEEN_FD");
        wait_fd("DEPARTURE_DELIVERED_FD");
        rc = PMIx_IOF_pull(&me, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, on_output, NULL, NULL);
        CHECK(rc >= 0, "waiter's IOF pull: %s", PMIx_Error_string(rc));
        CHECK(wait_flag(&got_late, 10),
              "the output delivered after the puller's %s did not reach a later pull", kind);
    }
    rc = PMIx_Fence(&me, 1, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "fence over itself after the departure: %s", PMIx_Error_string(rc));
    printf("departure services waiter %s %s ok\n", kind, waiter);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* -------------------------------------------------------------------- host */
static _Atomic int registered_code = 0, deregistered_code = 0;

static pmix_status_t on_register_events(pmix_status_t *codes, size_t ncodes,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)info, (void)ninfo, (void)cbfunc, (void)cbdata;
    for (size_t i = 0; i < ncodes; ++i)
        if (codes[i] == CODE_DEPARTER) set_flag(&registered_code);
    return PMIX_OPERATION_SUCCEEDED;
}

static pmix_status_t on_deregister_events(pmix_status_t *codes, size_t ncodes,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)cbfunc, (void)cbdata;
    for (size_t i = 0; i < ncodes; ++i)
        if (codes[i] == CODE_DEPARTER) set_flag(&deregistered_code);
    return PMIX_OPERATION_SUCCEEDED;
}

static void on_tool(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                    void *cbdata) {
    (void)info, (void)ninfo;
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, "dsT", 0);
    cbfunc(PMIX_SUCCESS, &proc, cbdata);
}

static void register_job(const char *nspace) {
    pmix_status_t rc = host_register_job(nspace, 1);
    CHECK(rc == PMIX_SUCCESS, "register job %s: %s", nspace, PMIx_Error_string(rc));
}

static void set_fd(const char *name, int fd) {
    char v[16];
    snprintf(v, sizeof v, "%d", fd);
    setenv(name, v, 1);
}

/* Starts this program as `role`: a client of `nspace` (the environment of
 * PMIx_server_setup_fork), or a tool (only the server's URI from it). */
static pid_t start(const char *self, const char *nspace, const char *role, const int fds[4]) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, 0);
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork %s", nspace);
    const int tool = strcmp(role, "waiter") != 0 && is(waiter, "tool");
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) {
            if (!tool || strncmp(*e, "PMIX_SERVER_URI41=", 18) == 0) putenv(*e);
        }
        set_fd("DEPARTURE_READY_FD", fds[0]);
        set_fd("DEPARTURE_GO_FD", fds[1]);
        set_fd("DEPARTURE_SEEN_FD", fds[2]);
        set_fd("DEPARTURE_DELIVERED_FD", fds[3]);
        execl("/proc/self/exe", self, kind, waiter, role, (char *)NULL);
        _exit(127);
    }
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    return pid;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    CHECK(argc >= 3, "usage: departure_services_host KIND WAITER");
    kind = argv[1];
    waiter = argv[2];
    if (argc > 3 && is(argv[3], "departer")) return departer_main();
    if (argc > 3 && is(argv[3], "waiter")) return waiter_main();
    if (argc > 3 && is(argv[3], "again")) return again_main();
    if (argc > 3 && is(argv[3], "back")) return back_main();
    CHECK(is(kind, "finalized") || is(kind, "lost") || is(kind, "deregister_client") ||
              is(kind, "deregister_nspace"),
          "unknown departure %s", kind);
    CHECK(is(waiter, "tool") || is(waiter, "iof") || is(waiter, "events"), "unknown waiter %s",
          waiter);
    unsetenv("PMIX_TIMEOUT");
    alarm(60); /* a hang is a failure, not a stuck test */
    signal(SIGPIPE, SIG_IGN);

    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.tool_connected = on_tool;
    module.register_events = on_register_events;
    module.deregister_events = on_deregister_events;
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    CHECK(PMIx_server_init(&module, &info, 1) == PMIX_SUCCESS, "server init");
    PMIX_INFO_DESTRUCT(&info);
    register_job("dsW");
    register_job("dsD");

    int ready[2], go[2], seen[2], delivered[2];
    CHECK(pipe(ready) == 0 && pipe(go) == 0 && pipe(seen) == 0 && pipe(delivered) == 0, "pipe");
    const int fds[4] = {ready[1], go[0], seen[1], delivered[0]};
    char c;
    pid_t d = start(argv[0], "dsD", "departer", fds);
    CHECK(read(ready[0], &c, 1) == 1, "the departer did not start");
    if (is(waiter, "events")) {
        CHECK(wait_flag(&registered_code, 10),
              "the departer's registration did not reach register_events");
    }
    pid_t w = start(argv[0], "dsW", "waiter", fds);
    CHECK(read(ready[0], &c, 1) == 1, "the waiter did not start");
    usleep(500000); /* its get reaches the server */

    const pmix_proc_t dp = departer_proc();
    if (is(kind, "deregister_client")) {
        PMIx_server_deregister_client(&dp, NULL, NULL);
    } else if (is(kind, "deregister_nspace")) {
        pmix_nspace_t ns;
        PMIX_LOAD_NSPACE(ns, dp.nspace);
        PMIx_server_deregister_nspace(ns, NULL, NULL);
    }
    CHECK(write(go[1], "g", 1) == 1, "go");
    const int drc = host_reap(d);
    CHECK(drc == 0, "the departer exited with %d", drc);

    if (is(waiter, "iof")) {
        CHECK(read(seen[0], &c, 1) == 1, "the waiter did not see the departure");
        if (is(kind, "deregister_client")) {
            pmix_status_t rc =
                PMIx_server_register_client(&dp, getuid(), getgid(), NULL, NULL, NULL);
            CHECK(host_registered(rc), "register the departer again: %s", PMIx_Error_string(rc));
        } else if (is(kind, "deregister_nspace")) {
            register_job("dsD");
        }
        pid_t back = start(argv[0], "dsD", "back", fds);
        CHECK(read(ready[0], &c, 1) == 1, "the departer's identity did not come back");
        pmix_proc_t source;
        PMIX_LOAD_PROCID(&source, "dsW", 0);
        pmix_byte_object_t bo;
        bo.bytes = (char *)LATE_OUTPUT;
        bo.size = strlen(LATE_OUTPUT);
        pmix_status_t rc =
            PMIx_server_IOF_deliver(&source, PMIX_FWD_STDOUT_CHANNEL, &bo, NULL, 0, NULL, NULL);
        CHECK(host_registered(rc), "IOF_deliver: %s", PMIx_Error_string(rc));
        CHECK(write(delivered[1], "d", 1) == 1, "delivered");
        const int wrc = host_reap(w);
        CHECK(wrc == 0, "the waiter exited with %d", wrc);
        CHECK(write(go[1], "g", 1) == 1, "go back");
        const int brc = host_reap(back);
        CHECK(brc == 0, "the departer's identity back exited with %d", brc);
    } else {
        const int wrc = host_reap(w);
        CHECK(wrc == 0, "the waiter exited with %d", wrc);
    }

    if (is(waiter, "events")) {
        CHECK(wait_flag(&deregistered_code, 10),
              "the departer's %s did not release its registration within 10 s (no "
              "deregister_events)",
              kind);
    }
    if (is(waiter, "tool")) {
        pid_t again = start(argv[0], "dsW", "again", fds);
        const int arc = host_reap(again);
        CHECK(arc == 0, "the second tool exited with %d", arc);
    }
    PMIx_server_finalize();
    printf("departure services host %s %s ok\n", kind, waiter);
    return 0;
}
