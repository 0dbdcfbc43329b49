/* A debugger (a tool outside a pmixrun job, started by tool_target.c) that
 * launches an application stopped in PMIx_Init and releases it
 * (docs/tools.md, "Debuggers"):
 *
 *   tool_debug PMIXRUN_PID JOB_NSPACE DEBUGGEE DAEMON
 * Asks PMIX_QUERY_DEBUG_SUPPORT; spawns 2 DEBUGGEE with
 * PMIX_DEBUG_STOP_IN_INIT, PMIX_NOTIFY_COMPLETION and
 * PMIX_NOTIFY_PROC_TERMINATION; waits (bounded) for
 * PMIX_READY_FOR_DEBUG from both; checks in the proc table that both still
 * run; spawns 2 DAEMON (PMIX_DEBUG_TARGET the job, PMIX_DEBUG_DAEMONS_PER_NODE
 * 2), which print the target's proc table size, and waits for their job end;
 * then 1 DAEMON with PMIX_DEBUG_DAEMONS_PER_PROC 1 (pmixrun starts one per
 * target process: 2) and waits for that job's end;
 * prints "tool_debug releasing"; sends PMIX_DEBUGGER_RELEASE to the job
 * (custom range: its namespace); waits (bounded) for PMIX_EVENT_JOB_END of
 * the job and (bounded) PMIX_EVENT_PROC_TERMINATED of both its processes;
 * the job ends carry the PMIX_EVENT_RETURN_OBJECT the handler was
 * registered with. Prints "tool_debug ok". */
#include <pmix_tool.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pmix_proc_t ready[16];
static pmix_proc_t terminated[16];
static int nready = 0, nended = 0, returned = 0, nterminated = 0;
static char ended_ns[8][PMIX_MAX_NSLEN + 1];
static int marker; /* PMIX_EVENT_RETURN_OBJECT of the job-end handler */

static void fail(const char *what, pmix_status_t rc) {
    printf("tool_debug FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    if (status == PMIX_READY_FOR_DEBUG && source != NULL && nready < 16) {
        ready[nready++] = *source;
    } else if (status == PMIX_EVENT_PROC_TERMINATED && nterminated < 16) {
        /* From the launcher: the ended process is the affected one. */
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
                info[i].value.type == PMIX_PROC)
                terminated[nterminated++] = *info[i].value.data.proc;
        }
    } else if (status == PMIX_EVENT_JOB_END && nended < 8) {
        char *ns = ended_ns[nended++];
        ns[0] = '\0';
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
                info[i].value.type == PMIX_PROC)
                snprintf(ns, PMIX_MAX_NSLEN + 1, "%s", info[i].value.data.proc->nspace);
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT) &&
                info[i].value.data.ptr == &marker)
                returned++;
        }
        if (ns[0] == '\0' && source != NULL) snprintf(ns, PMIX_MAX_NSLEN + 1, "%s", source->nspace);
    }
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Waits (at most 30 s) until the ready events from `ns` reach `n`. */
static int count_ready(const char *ns) {
    int c = 0;
    for (int i = 0; i < nready; ++i) c += strcmp(ready[i].nspace, ns) == 0;
    return c;
}

static int wait_until(int (*cond_fn)(const char *), const char *ns, int want) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    int rc = 0, ok;
    pthread_mutex_lock(&lock);
    while (!(ok = cond_fn(ns) >= want) && rc == 0)
        rc = pthread_cond_timedwait(&cond, &lock, &deadline);
    pthread_mutex_unlock(&lock);
    return ok;
}

static int count_terminated(const char *ns) {
    int c = 0;
    for (int i = 0; i < nterminated; ++i) c += strcmp(terminated[i].nspace, ns) == 0;
    return c;
}

static int ended(const char *ns) {
    int c = 0;
    for (int i = 0; i < nended; ++i) c += strcmp(ended_ns[i], ns) == 0;
    return c;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 5) return 2;
    pmix_info_t info[2];
    PMIX_INFO_CONSTRUCT(&info[0]);
    pid_t pid = (pid_t)atoi(argv[1]);
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    bool launcher = true; /* it spawns jobs */
    PMIX_INFO_LOAD(&info[1], PMIX_LAUNCHER, &launcher, PMIX_BOOL);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init", rc);

    /* What the server's host supports for debuggers. */
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_DEBUG_SUPPORT);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    PMIX_QUERY_DESTRUCT(&q);
    if (rc != PMIX_SUCCESS) fail("PMIX_QUERY_DEBUG_SUPPORT", rc);
    const pmix_info_t *a = (const pmix_info_t *)results[0].value.data.darray->array;
    if (a[0].value.type != PMIX_STRING ||
        strstr(a[0].value.data.string, PMIX_DEBUG_STOP_IN_INIT) == NULL)
        fail("debug support lacks PMIX_DEBUG_STOP_IN_INIT", PMIX_ERROR);
    PMIX_INFO_FREE(results, nresults);

    pmix_status_t code = PMIX_READY_FOR_DEBUG;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);
    code = PMIX_EVENT_PROC_TERMINATED;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler PROC_TERMINATED", rc);
    code = PMIX_EVENT_JOB_END;
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_RETURN_OBJECT, &marker, PMIX_POINTER);
    rc = PMIx_Register_event_handler(&code, 1, info, 1, on_event, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    if (rc < 0) fail("PMIx_Register_event_handler JOB_END", rc);

    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(argv[3]);
    PMIX_ARGV_APPEND(rc, app.argv, argv[3]);
    app.maxprocs = 2;
    bool yes = true;
    pmix_info_t sinfo[3];
    for (int i = 0; i < 3; ++i) PMIX_INFO_CONSTRUCT(&sinfo[i]);
    PMIX_INFO_LOAD(&sinfo[0], PMIX_DEBUG_STOP_IN_INIT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&sinfo[1], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&sinfo[2], PMIX_NOTIFY_PROC_TERMINATION, &yes, PMIX_BOOL);
    pmix_nspace_t child;
    rc = PMIx_Spawn(sinfo, 3, &app, 1, child);
    for (int i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&sinfo[i]);
    PMIX_APP_DESTRUCT(&app);
    if (rc != PMIX_SUCCESS) fail("PMIx_Spawn stopped in init", rc);

    if (!wait_until(count_ready, child, 2))
        fail("PMIX_READY_FOR_DEBUG from both", PMIX_ERR_TIMEOUT);
    /* Stopped: both processes run, none has ended. */
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_PROC_TABLE);
    PMIX_INFO_CREATE(q.qualifiers, 1);
    q.nqual = 1;
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, child, PMIX_STRING);
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    PMIX_QUERY_DESTRUCT(&q);
    if (rc != PMIX_SUCCESS) fail("proc table of the stopped job", rc);
    const pmix_data_array_t *d = results[0].value.data.darray;
    const pmix_info_t *answers = (const pmix_info_t *)d->array;
    const pmix_info_t *table = NULL;
    for (size_t i = 0; i < d->size; ++i)
        if (PMIX_CHECK_KEY(&answers[i], PMIX_QUERY_PROC_TABLE)) table = &answers[i];
    if (table == NULL || table->value.data.darray->size != 2) fail("proc table", PMIX_ERROR);
    const pmix_proc_info_t *t = (const pmix_proc_info_t *)table->value.data.darray->array;
    for (int i = 0; i < 2; ++i)
        if (t[i].state != PMIX_PROC_STATE_RUNNING || t[i].pid <= 0)
            fail("a stopped process ended", PMIX_ERROR);
    PMIX_INFO_FREE(results, nresults);

    /* Two debugger daemons next to the stopped job (PMIX_DEBUG_TARGET). */
    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, child, PMIX_RANK_WILDCARD);
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(argv[4]);
    PMIX_ARGV_APPEND(rc, app.argv, argv[4]);
    app.maxprocs = 1;
    uint16_t per_node = 2;
    pmix_info_t dinfo[3];
    for (int i = 0; i < 3; ++i) PMIX_INFO_CONSTRUCT(&dinfo[i]);
    PMIX_INFO_LOAD(&dinfo[0], PMIX_DEBUG_TARGET, &target, PMIX_PROC);
    PMIX_INFO_LOAD(&dinfo[1], PMIX_DEBUG_DAEMONS_PER_NODE, &per_node, PMIX_UINT16);
    PMIX_INFO_LOAD(&dinfo[2], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    pmix_nspace_t daemons;
    rc = PMIx_Spawn(dinfo, 3, &app, 1, daemons);
    for (int i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&dinfo[i]);
    PMIX_APP_DESTRUCT(&app);
    if (rc != PMIX_SUCCESS) fail("PMIx_Spawn of the daemons", rc);
    if (!wait_until(ended, daemons, 1)) fail("the daemons' PMIX_EVENT_JOB_END", PMIX_ERR_TIMEOUT);

    /* One daemon per target process (PMIX_DEBUG_DAEMONS_PER_PROC). */
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(argv[4]);
    PMIX_ARGV_APPEND(rc, app.argv, argv[4]);
    app.maxprocs = 1;
    uint16_t per_proc = 1;
    for (int i = 0; i < 3; ++i) PMIX_INFO_CONSTRUCT(&dinfo[i]);
    PMIX_INFO_LOAD(&dinfo[0], PMIX_DEBUG_TARGET, &target, PMIX_PROC);
    PMIX_INFO_LOAD(&dinfo[1], PMIX_DEBUG_DAEMONS_PER_PROC, &per_proc, PMIX_UINT16);
    PMIX_INFO_LOAD(&dinfo[2], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    pmix_nspace_t per_proc_daemons;
    rc = PMIx_Spawn(dinfo, 3, &app, 1, per_proc_daemons);
    for (int i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&dinfo[i]);
    PMIX_APP_DESTRUCT(&app);
    if (rc != PMIX_SUCCESS) fail("PMIx_Spawn of the per-process daemons", rc);
    if (!wait_until(ended, per_proc_daemons, 1))
        fail("the per-process daemons' PMIX_EVENT_JOB_END", PMIX_ERR_TIMEOUT);

    printf("tool_debug releasing %s\n", child);
    pmix_data_array_t range = {PMIX_PROC, 1, &target};
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_CUSTOM_RANGE, &range, PMIX_DATA_ARRAY);
    rc = PMIx_Notify_event(PMIX_DEBUGGER_RELEASE, &me, PMIX_RANGE_CUSTOM, info, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    if (rc != PMIX_SUCCESS) fail("PMIx_Notify_event PMIX_DEBUGGER_RELEASE", rc);
    if (!wait_until(ended, child, 1))
        fail("PMIX_EVENT_JOB_END of the released job", PMIX_ERR_TIMEOUT);
    if (!wait_until(count_terminated, child, 2))
        fail("PMIX_EVENT_PROC_TERMINATED of both processes", PMIX_ERR_TIMEOUT);
    pthread_mutex_lock(&lock);
    const int got_returned = returned;
    pthread_mutex_unlock(&lock);
    if (got_returned != 3) fail("PMIX_EVENT_RETURN_OBJECT with the three job ends", PMIX_ERROR);
    PMIx_tool_finalize();
    printf("tool_debug ok\n");
    return 0;
}
