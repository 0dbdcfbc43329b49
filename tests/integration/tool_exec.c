/* PMIX_DEBUG_STOP_ON_EXEC (docs/tools.md, "Debuggers"): a debugger (a tool
 * outside a pmixrun job, started by tool_target.c)
 *
 *   tool_exec PMIXRUN_PID DEBUGGEE
 * finds pmix.dbg.exec in PMIX_QUERY_DEBUG_SUPPORT, spawns 2 DEBUGGEE with
 * PMIX_DEBUG_STOP_ON_EXEC and PMIX_NOTIFY_COMPLETION, reads their pids from
 * the proc table, and sees (bounded, 30 s) each of them stopped ('T' in
 * /proc/<pid>/stat) before its exec (/proc/<pid>/exe is not DEBUGGEE yet);
 * then releases the job with PMIx_Job_control(PMIX_JOB_CTRL_RESUME) and
 * waits (bounded) for its PMIX_EVENT_JOB_END with PMIX_JOB_TERM_STATUS
 * success (both ran DEBUGGEE and exited 0). Then app-level: spawns two
 * apps of one DEBUGGEE each, PMIX_DEBUG_STOP_ON_EXEC in app 0's info only;
 * sees (bounded) app 1's process end while app 0's stays stopped, resumes
 * and gets the job's successful end. Prints "tool_exec ok". */
#include <pmix_tool.h>

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int job_ended = 0;
static pmix_status_t job_status = PMIX_ERROR;

static void fail(const char *what, pmix_status_t rc) {
    printf("tool_exec FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

static void on_end(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    job_ended = 1;
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_TERM_STATUS)) job_status = info[i].value.data.status;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* 'T' once the process stopped; 0 if it is gone. Polled with a bound. */
static char state_of(pid_t pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' ? p[2] : 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3) return 2;
    pmix_info_t info, launch;
    pid_t server = (pid_t)atoi(argv[1]);
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &server, PMIX_PID);
    bool launcher = true; /* it spawns jobs */
    PMIX_INFO_LOAD(&launch, PMIX_LAUNCHER, &launcher, PMIX_BOOL);
    pmix_info_t init_info[2] = {info, launch};
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, init_info, 2);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init", rc);

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
        strstr(a[0].value.data.string, PMIX_DEBUG_STOP_ON_EXEC) == NULL)
        fail("debug support lacks PMIX_DEBUG_STOP_ON_EXEC", PMIX_ERROR);
    PMIX_INFO_FREE(results, nresults);

    pmix_status_t code = PMIX_EVENT_JOB_END;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_end, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);

    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(argv[2]);
    PMIX_ARGV_APPEND(rc, app.argv, argv[2]);
    app.maxprocs = 2;
    bool yes = true;
    pmix_info_t sinfo[2];
    PMIX_INFO_LOAD(&sinfo[0], PMIX_DEBUG_STOP_ON_EXEC, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&sinfo[1], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    pmix_nspace_t child;
    rc = PMIx_Spawn(sinfo, 2, &app, 1, child);
    PMIX_INFO_DESTRUCT(&sinfo[0]);
    PMIX_INFO_DESTRUCT(&sinfo[1]);
    PMIX_APP_DESTRUCT(&app);
    if (rc != PMIX_SUCCESS) fail("PMIx_Spawn stopped on exec", rc);

    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_PROC_TABLE);
    PMIX_INFO_CREATE(q.qualifiers, 1);
    q.nqual = 1;
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, child, PMIX_STRING);
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    PMIX_QUERY_DESTRUCT(&q);
    if (rc != PMIX_SUCCESS) fail("proc table", rc);
    const pmix_data_array_t *d = results[0].value.data.darray;
    const pmix_info_t *answers = (const pmix_info_t *)d->array;
    const pmix_info_t *table = NULL;
    for (size_t i = 0; i < d->size; ++i)
        if (PMIX_CHECK_KEY(&answers[i], PMIX_QUERY_PROC_TABLE)) table = &answers[i];
    if (table == NULL || table->value.data.darray->size != 2) fail("a 2-entry table", PMIX_ERROR);
    const pmix_proc_info_t *t = (const pmix_proc_info_t *)table->value.data.darray->array;
    char *want = realpath(argv[2], NULL);
    for (int i = 0; i < 2; ++i) {
        if (t[i].pid <= 0) fail("a pid in the table", PMIX_ERROR);
        char st = 0;
        for (int tries = 0; tries < 3000 && (st = state_of(t[i].pid)) != 'T'; ++tries)
            usleep(10000); /* bounded: 30 s */
        if (st != 'T') {
            printf("tool_exec FAILED: rank %d (pid %d) state '%c', not stopped\n", i, (int)t[i].pid,
                   st ? st : '?');
            exit(1);
        }
        char exe[64], target[PATH_MAX] = "";
        snprintf(exe, sizeof exe, "/proc/%d/exe", (int)t[i].pid);
        ssize_t n = readlink(exe, target, sizeof target - 1);
        if (n > 0) target[n] = '\0';
        if (want != NULL && strcmp(target, want) == 0) fail("stopped after its exec", PMIX_ERROR);
    }
    free(want);
    PMIX_INFO_FREE(results, nresults);
    printf("tool_exec: both stopped before exec; resuming %s\n", child);

    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, child, PMIX_RANK_WILDCARD);
    pmix_info_t resume;
    PMIX_INFO_LOAD(&resume, PMIX_JOB_CTRL_RESUME, &yes, PMIX_BOOL);
    rc = PMIx_Job_control(&target, 1, &resume, 1, &results, &nresults);
    PMIX_INFO_DESTRUCT(&resume);
    if (rc != PMIX_SUCCESS) fail("PMIx_Job_control RESUME", rc);
    if (results != NULL) PMIX_INFO_FREE(results, nresults);

    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    pthread_mutex_lock(&lock);
    int wrc = 0;
    while (!job_ended && wrc == 0) wrc = pthread_cond_timedwait(&cond, &lock, &deadline);
    const int ended = job_ended;
    const pmix_status_t js = job_status;
    pthread_mutex_unlock(&lock);
    if (!ended) fail("PMIX_EVENT_JOB_END after the release", PMIX_ERR_TIMEOUT);
    if (js != PMIX_SUCCESS) fail("the released job's status", js);

    /* App-level: PMIX_DEBUG_STOP_ON_EXEC in app 0's info stops its process
     * only; app 1's runs DEBUGGEE to its end meanwhile. */
    pthread_mutex_lock(&lock);
    job_ended = 0;
    job_status = PMIX_ERROR;
    pthread_mutex_unlock(&lock);
    pmix_app_t apps[2];
    for (int i = 0; i < 2; ++i) {
        PMIX_APP_CONSTRUCT(&apps[i]);
        apps[i].cmd = strdup(argv[2]);
        PMIX_ARGV_APPEND(rc, apps[i].argv, argv[2]);
        apps[i].maxprocs = 1;
    }
    PMIX_INFO_CREATE(apps[0].info, 1);
    apps[0].ninfo = 1;
    PMIX_INFO_LOAD(&apps[0].info[0], PMIX_DEBUG_STOP_ON_EXEC, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&sinfo[1], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    pmix_nspace_t mixed;
    rc = PMIx_Spawn(&sinfo[1], 1, apps, 2, mixed);
    PMIX_INFO_DESTRUCT(&sinfo[1]);
    PMIX_APP_DESTRUCT(&apps[0]);
    PMIX_APP_DESTRUCT(&apps[1]);
    if (rc != PMIX_SUCCESS) fail("PMIx_Spawn with an app-level PMIX_DEBUG_STOP_ON_EXEC", rc);
    /* Bounded (30 s): rank 1 ends while rank 0 stays stopped. */
    pid_t stopped = 0;
    int rank1_ended = 0;
    for (int tries = 0; tries < 300 && !(rank1_ended && state_of(stopped) == 'T'); ++tries) {
        PMIX_QUERY_CONSTRUCT(&q);
        PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_PROC_TABLE);
        PMIX_INFO_CREATE(q.qualifiers, 1);
        q.nqual = 1;
        PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, mixed, PMIX_STRING);
        rc = PMIx_Query_info(&q, 1, &results, &nresults);
        PMIX_QUERY_DESTRUCT(&q);
        if (rc != PMIX_SUCCESS) fail("proc table of the mixed job", rc);
        d = results[0].value.data.darray;
        answers = (const pmix_info_t *)d->array;
        table = NULL;
        for (size_t i = 0; i < d->size; ++i)
            if (PMIX_CHECK_KEY(&answers[i], PMIX_QUERY_PROC_TABLE)) table = &answers[i];
        if (table == NULL || table->value.data.darray->size != 2)
            fail("a 2-entry table", PMIX_ERROR);
        t = (const pmix_proc_info_t *)table->value.data.darray->array;
        stopped = t[0].pid;
        rank1_ended = t[1].state == PMIX_PROC_STATE_TERMINATED;
        PMIX_INFO_FREE(results, nresults);
        if (!rank1_ended || state_of(stopped) != 'T') usleep(100000);
    }
    if (!rank1_ended) fail("app 1's process ran to its end", PMIX_ERR_TIMEOUT);
    if (state_of(stopped) != 'T') fail("app 0's process stopped before its exec", PMIX_ERROR);
    printf("tool_exec: app 0 of %s stopped, app 1 ended; resuming\n", mixed);
    PMIX_LOAD_PROCID(&target, mixed, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&resume, PMIX_JOB_CTRL_RESUME, &yes, PMIX_BOOL);
    rc = PMIx_Job_control(&target, 1, &resume, 1, &results, &nresults);
    PMIX_INFO_DESTRUCT(&resume);
    if (rc != PMIX_SUCCESS) fail("PMIx_Job_control RESUME of the mixed job", rc);
    if (results != NULL) PMIX_INFO_FREE(results, nresults);
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    wrc = 0;
    pthread_mutex_lock(&lock);
    while (!job_ended && wrc == 0) wrc = pthread_cond_timedwait(&cond, &lock, &deadline);
    const int mixed_ended = job_ended;
    const pmix_status_t ms = job_status;
    pthread_mutex_unlock(&lock);
    if (!mixed_ended) fail("PMIX_EVENT_JOB_END of the mixed job", PMIX_ERR_TIMEOUT);
    if (ms != PMIX_SUCCESS) fail("the mixed job's status", ms);

    PMIx_tool_finalize();
    printf("tool_exec ok\n");
    return 0;
}
