/* A debugger (a tool outside a pmixrun job, started by tool_target.c) that
 * launches jobs stopped at an application-defined point, and app-level
 * debugger attributes (docs/tools.md, "Debuggers"):
 *
 *   tool_stopapp PMIXRUN_PID APPSTOP DEBUGGEE
 * 1. PMIX_QUERY_DEBUG_SUPPORT lists PMIX_DEBUG_STOP_IN_APP.
 * 2. Spawns 3 APPSTOP (tool_appstop.c) with PMIX_DEBUG_STOP_IN_APP = the
 *    array of procs {rank 0, rank 2}: waits (bounded, 30 s) for the one
 *    PMIX_READY_FOR_DEBUG pmixrun raises once both are there (affected procs
 *    exactly ranks 0 and 2, PMIX_NSPACE the job, PMIX_BREAKPOINT
 *    "appstop-here"); the proc table shows both running; releases the job
 *    (PMIX_DEBUGGER_RELEASE to its namespace) and waits (bounded) for its
 *    successful PMIX_EVENT_JOB_END. No process's own READY_FOR_DEBUG (range
 *    RM) reaches the tool: it got exactly one for the job.
 * 3. App-level: spawns app 0 = 1 DEBUGGEE with PMIX_DEBUG_STOP_IN_INIT in its
 *    pmix_app_t info, app 1 = 2 APPSTOP with PMIX_DEBUG_STOP_IN_APP true in
 *    its info: gets rank 0's READY_FOR_DEBUG (breakpoint "pmix-init"),
 *    pmixrun's for rank 0 in init and pmixrun's for ranks 1 and 2 in the
 *    app (which therefore did not stop in init);
 *    releases the job and waits for its successful end.
 * 4. Bad values: PMIX_DEBUG_STOP_IN_APP as a string, or naming rank 5 of a
 *    2-process job: PMIx_Spawn fails with PMIX_ERR_BAD_PARAM.
 * Prints "tool_stopapp ok". */
#include <pmix_tool.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One PMIX_READY_FOR_DEBUG seen by the tool. */
struct ready {
    pmix_proc_t source;
    char nspace[PMIX_MAX_NSLEN + 1]; /* PMIX_NSPACE: the launcher's event only */
    char breakpoint[64];
    pmix_rank_t affected[8];
    size_t naffected;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct ready ready[16];
static int nready = 0;
static char ended_ns[8][PMIX_MAX_NSLEN + 1];
static pmix_status_t ended_status[8];
static int nended = 0;

static void fail(const char *what, pmix_status_t rc) {
    printf("tool_stopapp FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    if (status == PMIX_READY_FOR_DEBUG && nready < 16) {
        struct ready *r = &ready[nready++];
        memset(r, 0, sizeof *r);
        if (source != NULL) r->source = *source;
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_NSPACE) && info[i].value.type == PMIX_STRING)
                snprintf(r->nspace, sizeof r->nspace, "%s", info[i].value.data.string);
            if (PMIX_CHECK_KEY(&info[i], PMIX_BREAKPOINT) && info[i].value.type == PMIX_STRING)
                snprintf(r->breakpoint, sizeof r->breakpoint, "%s", info[i].value.data.string);
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS) &&
                info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray != NULL &&
                info[i].value.data.darray->type == PMIX_PROC) {
                const pmix_proc_t *p = (const pmix_proc_t *)info[i].value.data.darray->array;
                for (size_t k = 0; k < info[i].value.data.darray->size && r->naffected < 8; ++k)
                    r->affected[r->naffected++] = p[k].rank;
            }
        }
    } else if (status == PMIX_EVENT_JOB_END && nended < 8) {
        ended_ns[nended][0] = '\0';
        ended_status[nended] = PMIX_ERROR;
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_NSPACE) && info[i].value.type == PMIX_STRING)
                snprintf(ended_ns[nended], PMIX_MAX_NSLEN + 1, "%s", info[i].value.data.string);
            if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS))
                ended_status[nended] = info[i].value.data.status;
        }
        nended++;
    }
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* The launcher's READY_FOR_DEBUG for job `ns` (PMIX_NSPACE set) at `bp`;
 * caller holds the lock. */
static const struct ready *launcher_ready(const char *ns, const char *bp, int *count) {
    const struct ready *found = NULL;
    *count = 0;
    for (int i = 0; i < nready; ++i) {
        if (strcmp(ready[i].nspace, ns) == 0 && strcmp(ready[i].breakpoint, bp) == 0) {
            found = &ready[i];
            ++*count;
        }
    }
    return found;
}

/* A process's own READY_FOR_DEBUG (source: the process of `ns`); caller holds the lock. */
static int own_ready(const char *ns) {
    int c = 0;
    for (int i = 0; i < nready; ++i)
        c += ready[i].nspace[0] == '\0' && strcmp(ready[i].source.nspace, ns) == 0;
    return c;
}

/* Waits (at most 30 s) until pred(ns) holds; returns it. */
static bool wait_for(bool (*pred)(const char *), const char *ns) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    int rc = 0;
    bool ok;
    pthread_mutex_lock(&lock);
    while (!(ok = pred(ns)) && rc == 0) rc = pthread_cond_timedwait(&cond, &lock, &deadline);
    pthread_mutex_unlock(&lock);
    return ok;
}

static bool has_launcher_ready(const char *ns) {
    int n;
    return launcher_ready(ns, "appstop-here", &n) != NULL;
}

static bool has_all_ready(const char *ns) {
    int n, m;
    return launcher_ready(ns, "appstop-here", &n) != NULL &&
           launcher_ready(ns, "pmix-init", &m) != NULL && own_ready(ns) >= 1;
}

static bool has_ended(const char *ns) {
    for (int i = 0; i < nended; ++i)
        if (strcmp(ended_ns[i], ns) == 0) return true;
    return false;
}

static pmix_status_t end_status(const char *ns) {
    pmix_status_t st = PMIX_ERROR;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nended; ++i)
        if (strcmp(ended_ns[i], ns) == 0) st = ended_status[i];
    pthread_mutex_unlock(&lock);
    return st;
}

/* Checks the launcher's events for `ns` at `bp`: one, with the `want` affected ranks. */
static void check_launcher_ready(const char *ns, const char *bp, const pmix_rank_t *want,
                                 size_t nwant) {
    pthread_mutex_lock(&lock);
    int count;
    const struct ready *r = launcher_ready(ns, bp, &count);
    if (count != 1) fail("exactly one launcher READY_FOR_DEBUG at the breakpoint", PMIX_ERROR);
    if (r->naffected != nwant) fail("the affected procs' count", PMIX_ERROR);
    for (size_t i = 0; i < nwant; ++i)
        if (r->affected[i] != want[i]) fail("the affected ranks", PMIX_ERROR);
    /* From the launcher (the SMS: no namespace), not a process of the job. */
    if (strncmp(r->source.nspace, ns, PMIX_MAX_NSLEN) == 0)
        fail("the launcher as the source", PMIX_ERROR);
    pthread_mutex_unlock(&lock);
}

static void release(const char *ns) {
    pmix_info_t range;
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, ns, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&range, PMIX_EVENT_CUSTOM_RANGE, &all, PMIX_PROC);
    pmix_status_t rc =
        PMIx_Notify_event(PMIX_DEBUGGER_RELEASE, NULL, PMIX_RANGE_CUSTOM, &range, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&range);
    if (rc != PMIX_SUCCESS) fail("PMIX_DEBUGGER_RELEASE", rc);
    if (!wait_for(has_ended, ns)) fail("PMIX_EVENT_JOB_END after the release", PMIX_ERR_TIMEOUT);
    if (end_status(ns) != PMIX_SUCCESS) fail("the released job's status", end_status(ns));
}

static void app_of(pmix_app_t *app, const char *cmd, int n) {
    pmix_status_t rc;
    PMIX_APP_CONSTRUCT(app);
    app->cmd = strdup(cmd);
    PMIX_ARGV_APPEND(rc, app->argv, cmd);
    (void)rc;
    app->maxprocs = n;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 4) return 2;
    pmix_info_t info[2];
    pid_t pid = (pid_t)atoi(argv[1]);
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    PMIX_INFO_LOAD(&info[1], PMIX_LAUNCHER, &yes, PMIX_BOOL);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init", rc);

    /* 1. The host says it stops in the app. */
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
        strstr(a[0].value.data.string, PMIX_DEBUG_STOP_IN_APP) == NULL)
        fail("debug support lacks PMIX_DEBUG_STOP_IN_APP", PMIX_ERROR);
    PMIX_INFO_FREE(results, nresults);

    pmix_status_t codes[2] = {PMIX_READY_FOR_DEBUG, PMIX_EVENT_JOB_END};
    rc = PMIx_Register_event_handler(codes, 2, NULL, 0, on_event, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);

    /* 2. Ranks 0 and 2 of 3 stop in the app. */
    pmix_app_t app;
    app_of(&app, argv[2], 3);
    pmix_proc_t targets[2];
    PMIX_LOAD_PROCID(&targets[0], "", 0);
    PMIX_LOAD_PROCID(&targets[1], "", 2);
    pmix_data_array_t darray = {PMIX_PROC, 2, targets};
    pmix_info_t sinfo[2];
    PMIX_INFO_LOAD(&sinfo[0], PMIX_DEBUG_STOP_IN_APP, &darray, PMIX_DATA_ARRAY);
    PMIX_INFO_LOAD(&sinfo[1], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    pmix_nspace_t child;
    rc = PMIx_Spawn(sinfo, 2, &app, 1, child);
    PMIX_INFO_DESTRUCT(&sinfo[0]);
    PMIX_INFO_DESTRUCT(&sinfo[1]);
    PMIX_APP_DESTRUCT(&app);
    if (rc != PMIX_SUCCESS) fail("PMIx_Spawn stopped in the app", rc);
    if (!wait_for(has_launcher_ready, child))
        fail("the launcher's PMIX_READY_FOR_DEBUG", PMIX_ERR_TIMEOUT);
    const pmix_rank_t want02[2] = {0, 2};
    check_launcher_ready(child, "appstop-here", want02, 2);

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
    if (table == NULL || table->value.data.darray->size != 3) fail("a 3-entry table", PMIX_ERROR);
    const pmix_proc_info_t *t = (const pmix_proc_info_t *)table->value.data.darray->array;
    for (int i = 0; i < 3; i += 2)
        if (t[i].proc.rank != (pmix_rank_t)i || t[i].state != PMIX_PROC_STATE_RUNNING)
            fail("a stopped process not running", PMIX_ERROR);
    PMIX_INFO_FREE(results, nresults);
    printf("tool_stopapp: ranks 0 and 2 of %s stopped in the app; releasing\n", child);
    release(child);
    pthread_mutex_lock(&lock);
    if (own_ready(child) != 0) fail("a process's own READY_FOR_DEBUG reached the tool", PMIX_ERROR);
    int in_init;
    if (launcher_ready(child, "pmix-init", &in_init) != NULL)
        fail("nobody stopped in init", PMIX_ERROR);
    pthread_mutex_unlock(&lock);
    check_launcher_ready(child, "appstop-here", want02, 2);

    /* 3. App-level attributes: app 0 stops in init, app 1 in the app. */
    pmix_app_t apps[2];
    app_of(&apps[0], argv[3], 1);
    app_of(&apps[1], argv[2], 2);
    PMIX_INFO_CREATE(apps[0].info, 1);
    apps[0].ninfo = 1;
    PMIX_INFO_LOAD(&apps[0].info[0], PMIX_DEBUG_STOP_IN_INIT, &yes, PMIX_BOOL);
    PMIX_INFO_CREATE(apps[1].info, 1);
    apps[1].ninfo = 1;
    PMIX_INFO_LOAD(&apps[1].info[0], PMIX_DEBUG_STOP_IN_APP, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&sinfo[0], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    pmix_nspace_t mixed;
    rc = PMIx_Spawn(sinfo, 1, apps, 2, mixed);
    PMIX_INFO_DESTRUCT(&sinfo[0]);
    PMIX_APP_DESTRUCT(&apps[0]);
    PMIX_APP_DESTRUCT(&apps[1]);
    if (rc != PMIX_SUCCESS) fail("PMIx_Spawn with app-level attributes", rc);
    if (!wait_for(has_all_ready, mixed))
        fail("READY_FOR_DEBUG from app 0 in init and app 1 in the app", PMIX_ERR_TIMEOUT);
    const pmix_rank_t want12[2] = {1, 2}, want0[1] = {0};
    check_launcher_ready(mixed, "appstop-here", want12, 2);
    check_launcher_ready(mixed, "pmix-init", want0, 1);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nready; ++i) {
        if (ready[i].nspace[0] != '\0' || strcmp(ready[i].source.nspace, mixed) != 0) continue;
        if (ready[i].source.rank != 0 || strcmp(ready[i].breakpoint, "pmix-init") != 0)
            fail("only app 0 stops in init", PMIX_ERROR);
    }
    pthread_mutex_unlock(&lock);
    printf("tool_stopapp: app 0 of %s stopped in init, app 1 in the app; releasing\n", mixed);
    release(mixed);

    /* 4. Values pmixrun refuses. */
    app_of(&app, argv[2], 2);
    PMIX_INFO_LOAD(&sinfo[0], PMIX_DEBUG_STOP_IN_APP, "all", PMIX_STRING);
    pmix_nspace_t none;
    rc = PMIx_Spawn(sinfo, 1, &app, 1, none);
    PMIX_INFO_DESTRUCT(&sinfo[0]);
    if (rc != PMIX_ERR_BAD_PARAM) fail("PMIX_DEBUG_STOP_IN_APP as a string", rc);
    pmix_rank_t five = 5;
    PMIX_INFO_LOAD(&sinfo[0], PMIX_DEBUG_STOP_IN_APP, &five, PMIX_PROC_RANK);
    rc = PMIx_Spawn(sinfo, 1, &app, 1, none);
    PMIX_INFO_DESTRUCT(&sinfo[0]);
    PMIX_APP_DESTRUCT(&app);
    if (rc != PMIX_ERR_BAD_PARAM) fail("PMIX_DEBUG_STOP_IN_APP rank 5 of 2", rc);

    PMIx_tool_finalize();
    printf("tool_stopapp ok\n");
    return 0;
}
