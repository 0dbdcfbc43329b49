/* A tool SIGKILLed in a query or an IOF pull (issue 19, deliverable 4;
 * README.md here): the server serves the rest, keeps nothing of the tool's
 * requests, and its clients go on.
 *
 * usage: tool_fault_host STEP   (query | iof)
 *
 * The host embeds the server (tool support on) with two upcalls, query and
 * iof_pull. A tool connects and makes the step's request (a query of
 * PMIX_QUERY_PROC_TABLE, or a pull of the job's stdout); the host's upcall
 * holds it, and the host SIGKILLs the tool while the request is in its hands
 * and reaps it (killed by signal 9: the step reached the upcall; no sleep
 * decides when it dies).
 *
 * Then the job's two ranks start. Rank 0 waits, bounded, until the server has
 * handled the tool's departure (a monitor of the tool is refused: NOT_FOUND).
 * Only then does the host answer the held request, as a slow host does: the
 * server must drop the answer (query: it releases the host's results, its
 * release_fn runs) and register no pull for the dead tool.
 *   query: each rank's own PROC_TABLE query reaches the host and gets its
 *          answer; a fence of both completes.
 *   iof:   the host delivers a line of rank 1's stdout. A pull left for the
 *          dead tool would take it (written to a closed connection); without
 *          one it is cached, and rank 0's pull, made after the delivery, gets
 *          it. A fence of both completes.
 * The host checks every answer it gave was released and prints
 * "tool_fault_host STEP ok". alarm() bounds every wait. */
#define _GNU_SOURCE /* nftw */
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(...) HOST_CHECK("tool_fault_host", __VA_ARGS__)
#define NSPACE "toolfault"
#define TOOL_NSPACE "toolfault.tool"
#define ANSWER "the host's answer"
#define LATE_OUTPUT "output after the tool died\n"
enum { kRanks = 2, kBound = 60 };

static const char *step = "?";

static int is(const char *a, const char *b) {
    return strcmp(a, b) == 0;
}

/* ---- host state, shared by its main thread and the upcalls (progress thread) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int held = 0; /* the tool's request is in the host's hands */
static pmix_info_cbfunc_t held_query;
static pmix_op_cbfunc_t held_pull;
static void *held_cbdata;
static int answers = 0, released = 0, pulls = 0, delivered = 0;

static void bump(int *value);
static void on_delivered(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    if (status == PMIX_SUCCESS) bump(&delivered);
}

static void wait_until(const int *value, int at_least, const char *what) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 20;
    pthread_mutex_lock(&lock);
    int rc = 0;
    while (*value < at_least && rc == 0) rc = pthread_cond_timedwait(&cond, &lock, &deadline);
    const int ok = *value >= at_least;
    const int now = *value;
    pthread_mutex_unlock(&lock);
    CHECK(ok, "%s: %d of %d within 20 s", what, now, at_least);
}

static void bump(int *value) {
    pthread_mutex_lock(&lock);
    ++*value;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void release_answer(void *cbdata) {
    pmix_info_t *info = cbdata;
    PMIX_INFO_FREE(info, 1);
    bump(&released);
}

static void answer_query(pmix_info_cbfunc_t cbfunc, void *cbdata) {
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_QUERY_PROC_TABLE, ANSWER, PMIX_STRING);
    bump(&answers);
    cbfunc(PMIX_SUCCESS, info, 1, cbdata, release_answer, info);
}

static pmix_status_t on_query(pmix_proc_t *proct, pmix_query_t *queries, size_t nqueries,
                              pmix_info_cbfunc_t cbfunc, void *cbdata) {
    (void)queries, (void)nqueries;
    if (proct != NULL && strcmp(proct->nspace, TOOL_NSPACE) == 0) {
        pthread_mutex_lock(&lock);
        held_query = cbfunc;
        held_cbdata = cbdata;
        held = 1;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
        return PMIX_SUCCESS;
    }
    answer_query(cbfunc, cbdata);
    return PMIX_SUCCESS;
}

/* The first pull is the tool's (nothing else pulls before it dies). */
static pmix_status_t on_iof_pull(const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t directives[], size_t ndirs,
                                 pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata) {
    (void)procs, (void)nprocs, (void)directives, (void)ndirs, (void)channels;
    pthread_mutex_lock(&lock);
    const int first = pulls++ == 0;
    if (first) {
        held_pull = cbfunc;
        held_cbdata = cbdata;
        held = 1;
    }
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    return first ? PMIX_SUCCESS : PMIX_OPERATION_SUCCEEDED;
}

static void approve_tool(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                         void *cbdata) {
    (void)info, (void)ninfo;
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, TOOL_NSPACE, 0);
    cbfunc(PMIX_SUCCESS, &proc, cbdata);
}

/* ---- the tool: connect, make the request, wait to be killed ----------- */

static void ignore_output(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source,
                          pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)ref, (void)channel, (void)source, (void)payload, (void)info, (void)ninfo;
}

static void tool_query_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                            pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)status, (void)info, (void)ninfo, (void)cbdata;
    if (release_fn != NULL) release_fn(release_cbdata);
}

static int tool_main(const char *dir) {
    alarm(kBound); /* the host kills us long before */
    pmix_info_t info[2];
    pid_t host = getppid();
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_PIDINFO, &host, PMIX_PID);
    PMIX_INFO_LOAD(&info[1], PMIX_SERVER_TMPDIR, dir, PMIX_STRING);
    pmix_proc_t me;
    CHECK(PMIx_tool_init(&me, info, 2) == PMIX_SUCCESS, "tool init");
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, NSPACE, PMIX_RANK_WILDCARD);
    pmix_status_t rc;
    if (is(step, "query")) {
        static pmix_query_t *q; /* the request outlives this frame: we die waiting */
        PMIX_QUERY_CREATE(q, 1);
        PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_PROC_TABLE);
        PMIX_INFO_CREATE(q[0].qualifiers, 1);
        q[0].nqual = 1;
        PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, NSPACE, PMIX_STRING);
        rc = PMIx_Query_info_nb(q, 1, tool_query_done, NULL);
        CHECK(rc == PMIX_SUCCESS, "tool query: %s", PMIx_Error_string(rc));
    } else {
        /* Blocks until the host answers: the host kills us first. */
        rc = PMIx_IOF_pull(&all, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, ignore_output, NULL, NULL);
        CHECK(0, "the tool's pull returned (%s) before the host killed it", PMIx_Error_string(rc));
    }
    for (;;) pause(); /* until the host kills us */
}

/* ---- the ranks --------------------------------------------------------- */

static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static int got_late = 0;

static void on_output(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source,
                      pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)ref, (void)info, (void)ninfo;
    if (channel == PMIX_FWD_STDOUT_CHANNEL && strcmp(source->nspace, NSPACE) == 0 &&
        source->rank == 1 && payload->size == strlen(LATE_OUTPUT) &&
        memcmp(payload->bytes, LATE_OUTPUT, payload->size) == 0) {
        pthread_mutex_lock(&got_lock);
        got_late = 1;
        pthread_mutex_unlock(&got_lock);
    }
}

static int late_output_arrived(void) {
    pthread_mutex_lock(&got_lock);
    const int got = got_late;
    pthread_mutex_unlock(&got_lock);
    return got;
}

/* Returns once the server has handled the tool's departure: until then a
 * heartbeat monitor of the tool is accepted (and cancelled at once; its
 * window is an hour, so it never alerts), after it the target is refused with
 * NOT_FOUND. Bounded by the alarm. */
static void wait_tool_departed(void) {
    pmix_proc_t tool;
    PMIX_LOAD_PROCID(&tool, TOOL_NSPACE, 0);
    pmix_data_array_t procs = {PMIX_PROC, 1, &tool};
    uint32_t hour = 3600;
    for (;;) {
        pmix_info_t mon, d[3];
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
        PMIX_INFO_LOAD(&d[0], PMIX_MONITOR_HEARTBEAT_TIME, &hour, PMIX_UINT32);
        PMIX_INFO_LOAD(&d[1], PMIX_MONITOR_ID, "probe", PMIX_STRING);
        PMIX_INFO_LOAD(&d[2], "pmix.monitor.tgtproc", &procs, PMIX_DATA_ARRAY);
        pmix_status_t rc =
            PMIx_Process_monitor(&mon, PMIX_EXTERNAL_ERR_BASE - 44, d, 3, NULL, NULL);
        for (size_t i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&d[i]);
        PMIX_INFO_DESTRUCT(&mon);
        if (rc == PMIX_ERR_NOT_FOUND) return;
        CHECK(rc == PMIX_SUCCESS, "probe monitor of the tool: %s", PMIx_Error_string(rc));
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_CANCEL, "probe", PMIX_STRING);
        rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, NULL, 0, NULL, NULL);
        PMIX_INFO_DESTRUCT(&mon);
        /* NOT_FOUND: the departure came in between and ended the probe. */
        if (rc == PMIX_ERR_NOT_FOUND) return;
        CHECK(rc == PMIX_SUCCESS, "cancel the probe: %s", PMIx_Error_string(rc));
        usleep(10000);
    }
}

/* Whether the results hold the host's answer, flat or (4.2's form) inside a
 * PMIX_QUERY_RESULTS array. */
static int holds_answer(const pmix_info_t *results, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const pmix_value_t *v = &results[i].value;
        if (PMIX_CHECK_KEY(&results[i], PMIX_QUERY_PROC_TABLE) && v->type == PMIX_STRING &&
            strcmp(v->data.string, ANSWER) == 0)
            return 1;
        if (PMIX_CHECK_KEY(&results[i], PMIX_QUERY_RESULTS) && v->type == PMIX_DATA_ARRAY &&
            v->data.darray != NULL && v->data.darray->type == PMIX_INFO &&
            holds_answer(v->data.darray->array, v->data.darray->size))
            return 1;
    }
    return 0;
}

static int rank_main(int ready, int go) {
    alarm(kBound);
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "rank init");
    char c = 'r';
    if (me.rank == 0) {
        wait_tool_departed();
        CHECK(write(ready, &c, 1) == 1, "ready");
        CHECK(read(go, &c, 1) == 1, "go");
    }
    if (is(step, "query")) {
        pmix_query_t *q;
        pmix_status_t rc;
        PMIX_QUERY_CREATE(q, 1);
        PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_PROC_TABLE);
        PMIX_INFO_CREATE(q[0].qualifiers, 1);
        q[0].nqual = 1;
        PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, me.nspace, PMIX_STRING);
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Query_info(q, 1, &results, &nresults);
        CHECK(rc == PMIX_SUCCESS, "rank %u query: %s", me.rank, PMIx_Error_string(rc));
        const int answered = holds_answer(results, nresults);
        CHECK(answered, "rank %u query: not the host's answer", me.rank);
        PMIX_INFO_FREE(results, nresults);
        PMIX_QUERY_FREE(q, 1);
    } else if (me.rank == 0) {
        pmix_proc_t one;
        PMIX_LOAD_PROCID(&one, me.nspace, 1);
        pmix_status_t rc =
            PMIx_IOF_pull(&one, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, on_output, NULL, NULL);
        CHECK(rc >= 0, "rank 0 pull: %s", PMIx_Error_string(rc));
        while (!late_output_arrived()) usleep(10000); /* bounded by the alarm */
    }
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "rank %u fence: %s", me.rank, PMIx_Error_string(rc));
    printf("rank %u %s: served\n", me.rank, step);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* ---- the host ---------------------------------------------------------- */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && is(argv[1], "tool")) {
        step = argv[2];
        return tool_main(argv[3]);
    }
    if (argc == 5 && is(argv[1], "rank")) {
        step = argv[2];
        return rank_main(atoi(argv[3]), atoi(argv[4]));
    }
    CHECK(argc == 2 && (is(argv[1], "query") || is(argv[1], "iof")),
          "usage: tool_fault_host query|iof");
    step = argv[1];
    alarm(kBound);
    signal(SIGPIPE, SIG_IGN);
    char dir[] = "/tmp/tool_fault_host.XXXXXX"; /* the tool's rendezvous file */
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");

    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.tool_connected = approve_tool;
    module.query = on_query;
    module.iof_pull = on_iof_pull;
    pmix_info_t sinfo[3];
    bool yes = true;
    PMIX_INFO_LOAD(&sinfo[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&sinfo[1], PMIX_SERVER_TMPDIR, dir, PMIX_STRING);
    /* the ranks' probe of the tool's departure is a monitor */
    PMIX_INFO_LOAD(&sinfo[2], PMIX_SERVER_ENABLE_MONITORING, &yes, PMIX_BOOL);
    CHECK(PMIx_server_init(&module, sinfo, 3) == PMIX_SUCCESS, "server init");
    for (size_t i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&sinfo[i]);
    CHECK(host_register_job(NSPACE, kRanks) == PMIX_SUCCESS, "register the job");

    /* The tool, killed with its request in our hands. */
    pid_t tool = fork();
    CHECK(tool >= 0, "fork");
    if (tool == 0) {
        execl("/proc/self/exe", argv[0], "tool", step, dir, (char *)NULL);
        _exit(127);
    }
    wait_until(&held, 1, "the tool's request reached the host");
    CHECK(kill(tool, SIGKILL) == 0, "kill the tool");
    const int trc = host_reap(tool);
    CHECK(trc == 128 + SIGKILL, "the tool ended with %d before it was killed", trc);
    /* The ranks go on. */
    int ready[2], go[2];
    CHECK(pipe(ready) == 0 && pipe(go) == 0, "pipe");
    pid_t ranks[kRanks];
    for (int r = 0; r < kRanks; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, NSPACE, (pmix_rank_t)r);
        char **env = NULL;
        CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
        ranks[r] = fork();
        CHECK(ranks[r] >= 0, "fork");
        if (ranks[r] == 0) {
            for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
            char in[16], out[16];
            snprintf(out, sizeof out, "%d", ready[1]);
            snprintf(in, sizeof in, "%d", go[0]);
            execl("/proc/self/exe", argv[0], "rank", step, out, in, (char *)NULL);
            _exit(127);
        }
        for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
        free(env);
    }
    char c;
    CHECK(read(ready[0], &c, 1) == 1, "rank 0 did not see the tool's departure");
    /* The answer comes after the server has handled the tool's departure, as
     * a slow host's does. */
    if (is(step, "query")) {
        answer_query(held_query, held_cbdata);
    } else {
        held_pull(PMIX_SUCCESS, held_cbdata);
    }
    if (is(step, "iof")) {
        pmix_proc_t source;
        PMIX_LOAD_PROCID(&source, NSPACE, 1);
        pmix_byte_object_t bo;
        bo.bytes = (char *)LATE_OUTPUT;
        bo.size = strlen(LATE_OUTPUT);
        pmix_status_t rc = PMIx_server_IOF_deliver(&source, PMIX_FWD_STDOUT_CHANNEL, &bo, NULL, 0,
                                                   on_delivered, NULL);
        CHECK(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "IOF_deliver: %s",
              PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS) wait_until(&delivered, 1, "the output delivered");
    }
    CHECK(write(go[1], "g", 1) == 1, "go");
    for (int r = 0; r < kRanks; ++r) {
        const int rc = host_reap(ranks[r]);
        CHECK(rc == 0, "rank %d ended with %d", r, rc);
    }
    pthread_mutex_lock(&lock);
    const int given = answers;
    pthread_mutex_unlock(&lock);
    wait_until(&released, given, "answers released by the server");
    PMIx_server_finalize();
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    printf("tool_fault_host %s ok (%d answers, all released)\n", step, given);
    return 0;
}
