/* Event notification under pmixrun, second program (event_client.c has the
 * first): cached job events for handlers a client registers later, and the
 * termination events a spawner asks for in PMIx_Spawn's job info. Prints
 * "<mode> ok" lines that run_case.py counts, or "<mode> FAILED: why" and
 * exits 1. Every wait is bounded (wait_for: 30 s); nothing asserts on time.
 * usage: event_followup_client MODE */
#include <pmix.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CODE_A (PMIX_EXTERNAL_ERR_BASE - 1)
#define CODE_J (PMIX_EXTERNAL_ERR_BASE - 10)
#define MAXEV 16

static pmix_proc_t me;
static const char *mode;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static size_t trace[64]; /* handler ids, in calling order */
static int calls;

/* What the termination handler saw, one entry per call. */
struct seen {
    pmix_status_t status;
    char affected_nspace[PMIX_MAX_NSLEN + 1];
    pmix_rank_t affected_rank;
    int exit_code; /* -1: none */
    pmix_status_t term_status;
    int has_term_status;
    char nspace[PMIX_MAX_NSLEN + 1];
    int has_procid;
    pmix_rank_t procid_rank;
    int has_timestamp;
};
static struct seen seen[MAXEV];

static void fail(const char *why, int rc) {
    printf("%s FAILED: rank %u: %s (%d: %s)\n", mode, me.rank, why, rc, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

/* Waits until `calls` reaches n (30 s at most). */
static int wait_for(int n) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    pthread_mutex_lock(&lock);
    int rc = 0;
    while (calls < n && rc == 0) rc = pthread_cond_timedwait(&cond, &lock, &deadline);
    int ok = calls >= n;
    pthread_mutex_unlock(&lock);
    return ok;
}

static int count(void) {
    pthread_mutex_lock(&lock);
    int n = calls;
    pthread_mutex_unlock(&lock);
    return n;
}

static void fence(void) {
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("fence", rc);
}

#define MAXH 32
static char names[MAXH][32];

static void named(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                  size_t ninfo, pmix_info_t results[], size_t nresults,
                  pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    /* ids, not names: a replayed event can run a handler before
     * PMIx_Register_event_handler returned its id to the caller */
    if (calls < 64) trace[calls] = id;
    ++calls;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_NO_ACTION_TAKEN, NULL, 0, NULL, NULL, cbdata);
}

static pmix_status_t reg(pmix_status_t *codes, size_t n, const char *name) {
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_EVENT_HDLR_NAME, name, PMIX_STRING);
    pmix_status_t id = PMIx_Register_event_handler(codes, n, &info, 1, named, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info);
    if (id < 0) fail("register", id);
    if (id < MAXH) snprintf(names[id], sizeof names[id], "%s", name);
    return id;
}

static void expect_trace(const char *want) {
    char got[1024] = "";
    pthread_mutex_lock(&lock);
    for (int i = 0; i < calls && i < 64; ++i) {
        strncat(got, trace[i] < MAXH ? names[trace[i]] : "?", sizeof got - strlen(got) - 1);
        strncat(got, " ", sizeof got - strlen(got) - 1);
    }
    pthread_mutex_unlock(&lock);
    if (strcmp(got, want) != 0) {
        printf("%s FAILED: rank %u: handlers ran as '%s', expected '%s'\n", mode, me.rank, got,
               want);
        fflush(stdout);
        exit(1);
    }
}

/* --- later: a job event one handler of this client had is replayed to the
 * handlers it registers afterwards (Chap_API_Event: the server caches every
 * event and delivers it to registering clients) --- */
static void mode_later(void) {
    pmix_status_t j = CODE_J;
    reg(&j, 1, "first");
    fence();
    if (me.rank == 0) {
        pmix_status_t rc =
            PMIx_Notify_event(CODE_J, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
        if (rc != PMIX_SUCCESS) fail("notify", rc);
    }
    if (!wait_for(1)) fail("live event missing", PMIX_ERR_TIMEOUT);
    fence(); /* every client had it through "first" */
    reg(&j, 1, "second");
    if (!wait_for(2)) fail("cached job event not replayed to a later handler", PMIX_ERR_TIMEOUT);
    pmix_status_t two[2] = {CODE_A, CODE_J};
    reg(two, 2, "third");
    if (!wait_for(3)) fail("cached job event not replayed to a later handler", PMIX_ERR_TIMEOUT);
    fence();
    /* Each handler had it once: the replay is for the new registration only. */
    expect_trace("first second third ");
    printf("later ok: rank %u\n", me.rank);
}

/* --- spawn*: PMIX_NOTIFY_PROC_TERMINATION / _ABNORMAL_TERMINATION /
 * PMIX_NOTIFY_COMPLETION in PMIx_Spawn's job info: pmixrun tells the spawner
 * (another namespace) --- */
static void term_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                         pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    if (calls < MAXEV) {
        struct seen *s = &seen[calls];
        memset(s, 0, sizeof *s);
        s->status = status;
        s->exit_code = -1;
        s->affected_rank = PMIX_RANK_UNDEF;
        for (size_t i = 0; i < ninfo; ++i) {
            const pmix_info_t *x = &info[i];
            if (PMIX_CHECK_KEY(x, PMIX_EVENT_AFFECTED_PROC) && x->value.type == PMIX_PROC) {
                memcpy(s->affected_nspace, x->value.data.proc->nspace, PMIX_MAX_NSLEN);
                s->affected_rank = x->value.data.proc->rank;
            } else if (PMIX_CHECK_KEY(x, PMIX_EXIT_CODE) && x->value.type == PMIX_INT) {
                s->exit_code = x->value.data.integer;
            } else if (PMIX_CHECK_KEY(x, PMIX_JOB_TERM_STATUS) && x->value.type == PMIX_STATUS) {
                s->term_status = x->value.data.status;
                s->has_term_status = 1;
            } else if (PMIX_CHECK_KEY(x, PMIX_NSPACE) && x->value.type == PMIX_STRING) {
                snprintf(s->nspace, sizeof s->nspace, "%s", x->value.data.string);
            } else if (PMIX_CHECK_KEY(x, PMIX_PROCID) && x->value.type == PMIX_PROC) {
                s->has_procid = 1;
                s->procid_rank = x->value.data.proc->rank;
            } else if (PMIX_CHECK_KEY(x, PMIX_EVENT_TIMESTAMP) && x->value.type == PMIX_TIME) {
                s->has_timestamp = 1;
            }
        }
    }
    ++calls;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void reg_term(pmix_status_t code) {
    pmix_status_t c = code;
    pmix_status_t id = PMIx_Register_event_handler(&c, 1, NULL, 0, term_handler, NULL, NULL);
    if (id < 0) fail("register", id);
}

static void spawn_children(const char *program, const char *role, const char *notify_key,
                           pmix_nspace_t child) {
    pmix_app_t app;
    char *argv[] = {(char *)program, (char *)role, NULL};
    char cwd[4096];
    memset(&app, 0, sizeof app);
    app.cmd = (char *)program;
    app.argv = argv;
    app.maxprocs = 2;
    if (getcwd(cwd, sizeof cwd) != NULL) app.cwd = cwd;
    pmix_info_t info[2];
    bool t = true;
    PMIX_INFO_LOAD(&info[0], notify_key, &t, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_NOTIFY_COMPLETION, &t, PMIX_BOOL);
    pmix_status_t rc = PMIx_Spawn(info, 2, &app, 1, child);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc != PMIX_SUCCESS) fail("spawn", rc);
}

static void expect_job_end(const struct seen *s, const char *child, pmix_status_t status) {
    if (s->status != PMIX_EVENT_JOB_END) fail("expected PMIX_EVENT_JOB_END", s->status);
    if (strcmp(s->nspace, child) != 0) fail("JOB_END without the job's PMIX_NSPACE", 0);
    if (strcmp(s->affected_nspace, child) != 0 || s->affected_rank != PMIX_RANK_WILDCARD)
        fail("JOB_END affects the wrong proc", (int)s->affected_rank);
    if (!s->has_term_status || s->term_status != status)
        fail("wrong PMIX_JOB_TERM_STATUS", s->term_status);
    if (!s->has_timestamp) fail("JOB_END without PMIX_EVENT_TIMESTAMP", 0);
}

static void expect_terminated(const struct seen *s, const char *child, pmix_rank_t rank, int code) {
    if (s->status != PMIX_EVENT_PROC_TERMINATED) fail("expected PROC_TERMINATED", s->status);
    if (strcmp(s->affected_nspace, child) != 0) fail("PROC_TERMINATED of another job", 0);
    if (s->affected_rank != rank) fail("PROC_TERMINATED of the wrong rank", (int)s->affected_rank);
    if (s->exit_code != code) fail("wrong PMIX_EXIT_CODE", s->exit_code);
}

/* Every end, reported live (JOB_END) and from the cache to a handler
 * registered after the children ended (PROC_TERMINATED). */
static void mode_spawnterm(const char *program) {
    reg_term(PMIX_EVENT_JOB_END);
    pmix_nspace_t child;
    spawn_children(program, "child", PMIX_NOTIFY_PROC_TERMINATION, child);
    if (!wait_for(1)) fail("no JOB_END", PMIX_ERR_TIMEOUT);
    expect_job_end(&seen[0], child, PMIX_SUCCESS);
    if (seen[0].has_procid) fail("JOB_END names a failed proc though none failed", 0);
    reg_term(PMIX_EVENT_PROC_TERMINATED);
    if (!wait_for(3)) fail("PROC_TERMINATED not delivered for every end", PMIX_ERR_TIMEOUT);
    /* replayed in arrival order: the ranks may end in either order */
    pmix_rank_t first = seen[1].affected_rank;
    if (first > 1) fail("PROC_TERMINATED of the wrong rank", (int)first);
    expect_terminated(&seen[1], child, first, 0);
    expect_terminated(&seen[2], child, 1 - first, 0);
    printf("spawnterm ok: rank %u\n", me.rank);
}

/* Abnormal ends only; JOB_END names the first failed proc. */
static void mode_spawnabnormal(const char *program) {
    reg_term(PMIX_EVENT_JOB_END);
    reg_term(PMIX_EVENT_PROC_TERMINATED);
    pmix_nspace_t child;
    spawn_children(program, "child_fail", PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION, child);
    if (!wait_for(2)) fail("events missing", PMIX_ERR_TIMEOUT);
    /* JOB_END comes after every PROC_TERMINATED pmixrun raised */
    expect_terminated(&seen[0], child, 1, 3);
    expect_job_end(&seen[1], child, PMIX_ERR_JOB_NON_ZERO_TERM);
    if (!seen[1].has_procid || seen[1].procid_rank != 1 || seen[1].exit_code != 3)
        fail("JOB_END does not name the failed proc and its exit code", seen[1].exit_code);
    if (count() != 2) fail("a normal end was reported", count());
    printf("spawnabnormal ok: rank %u\n", me.rank);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    mode = argv[1];
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("init", rc);
    int exit_code = 0;
    if (strcmp(mode, "later") == 0) {
        mode_later();
    } else if (strcmp(mode, "spawnterm") == 0) {
        mode_spawnterm(argv[0]);
    } else if (strcmp(mode, "spawnabnormal") == 0) {
        mode_spawnabnormal(argv[0]);
    } else if (strcmp(mode, "child") == 0) {
        /* nothing: a normal end */
    } else if (strcmp(mode, "child_fail") == 0) {
        if (me.rank == 1) exit_code = 3;
    } else {
        fail("unknown mode", PMIX_ERR_BAD_PARAM);
    }
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return exit_code;
}
