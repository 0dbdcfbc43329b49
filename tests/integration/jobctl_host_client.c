/* pmixrun as the job-control host (tools/pmixrun/job_control.hpp,
 * docs/job_control.md). usage: jobctl_host_client MODE
 *  pause:     (2 ranks) rank 0 pauses rank 1 and sees it stopped in
 *             /proc/<pid>/stat (state T), resumes it and sees it run; then
 *             cancels a pause by its PMIX_JOB_CTRL_ID and all of its pauses
 *             (no id), each time seeing rank 1 run again; a duplicate id is
 *             refused (PMIX_ERR_EXISTS), cancelling an unknown id is
 *             PMIX_ERR_NOT_FOUND. Prints "pause ok: <step>" per step.
 *  terminate: (2 ranks) rank 0 pauses rank 1, then terminates it: rank 1's
 *             SIGTERM handler runs (a paused process is continued):
 *             "terminate ok".
 *  wildcard:  (3 ranks) rank 0 signals nspace:WILDCARD with SIGUSR1; every
 *             rank's handler sees it: "wildcard ok".
 *  refuse:    (1 rank) each refused request gets its own status and a
 *             PMIX_EVENT_TEXT_MESSAGE result: "refuse ok: <what>".
 * Every wait is bounded (about 30 s); a missed one fails the rank. */
#include <pmix.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static int failed = 0;
static volatile sig_atomic_t got_usr1 = 0, got_term = 0;

static void on_usr1(int sig) {
    (void)sig;
    got_usr1 = 1;
}
static void on_term(int sig) {
    (void)sig;
    got_term = 1;
}

static void nap(void) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

static void fail(const char *what, pmix_status_t rc) {
    fprintf(stderr, "jobctl_host rank %u: %s: %s\n", me.rank, what, PMIx_Error_string(rc));
    failed = 1;
}

/* The scheduler state letter of a process (man 5 proc: after the last ')'). */
static char proc_state(pid_t pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    return (p != NULL && p[1] == ' ') ? p[2] : '?';
}

/* Waits (bounded) until `pid` is stopped (want_stopped) or not. */
static int wait_state(pid_t pid, int want_stopped) {
    for (int i = 0; i < 30000; ++i) {
        char s = proc_state(pid);
        int stopped = (s == 'T' || s == 't');
        if (stopped == want_stopped) return 1;
        nap();
    }
    return 0;
}

/* One blocking request with up to two directives; the results' text message
 * is copied to `why` (empty when none). */
static pmix_status_t request(const pmix_proc_t *targets, size_t ntargets, pmix_info_t *dirs,
                             size_t ndirs, char *why, size_t whylen) {
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Job_control(targets, ntargets, dirs, ndirs, &results, &nresults);
    if (why != NULL) why[0] = '\0';
    for (size_t i = 0; i < nresults; ++i) {
        if (PMIX_CHECK_KEY(&results[i], PMIX_EVENT_TEXT_MESSAGE) &&
            results[i].value.type == PMIX_STRING && why != NULL)
            snprintf(why, whylen, "%s", results[i].value.data.string);
    }
    if (results != NULL) PMIX_INFO_FREE(results, nresults);
    return rc;
}

static pmix_status_t pause_with_id(const pmix_proc_t *target, const char *id) {
    pmix_info_t d[2];
    PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_PAUSE, NULL, PMIX_BOOL);
    size_t n = 1;
    if (id != NULL) {
        PMIX_INFO_LOAD(&d[1], PMIX_JOB_CTRL_ID, id, PMIX_STRING);
        n = 2;
    }
    pmix_status_t rc = request(target, 1, d, n, NULL, 0);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&d[i]);
    return rc;
}

static pmix_status_t cancel(const char *id) {
    pmix_info_t d;
    PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_CANCEL, id, PMIX_STRING);
    pmix_status_t rc = request(NULL, 0, &d, 1, NULL, 0);
    PMIX_INFO_DESTRUCT(&d);
    return rc;
}

static void step(const char *what, int ok) {
    if (ok) {
        printf("pause ok: %s\n", what);
        fflush(stdout);
    } else {
        fail(what, PMIX_ERROR);
    }
}

/* Rank 1 publishes its pid; every rank learns rank 1's. */
static pid_t peer_pid(void) {
    pmix_value_t v;
    if (me.rank == 1) {
        PMIX_VALUE_LOAD(&v, &(uint32_t){(uint32_t)getpid()}, PMIX_UINT32);
        PMIx_Put(PMIX_GLOBAL, "jobctl.pid", &v);
        PMIx_Commit();
    }
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    PMIx_Fence(NULL, 0, &collect, 1);
    pmix_proc_t one;
    PMIX_LOAD_PROCID(&one, me.nspace, 1);
    pmix_value_t *got = NULL;
    pmix_status_t rc = PMIx_Get(&one, "jobctl.pid", NULL, 0, &got);
    if (rc != PMIX_SUCCESS || got == NULL) {
        fail("get rank 1's pid", rc);
        return -1;
    }
    pid_t pid = (pid_t)got->data.uint32;
    PMIX_VALUE_RELEASE(got);
    return pid;
}

static void mode_pause(void) {
    pid_t pid = peer_pid();
    pmix_proc_t one;
    PMIX_LOAD_PROCID(&one, me.nspace, 1);
    if (me.rank == 0 && pid > 0) {
        pmix_status_t rc = pause_with_id(&one, "p1");
        if (rc != PMIX_SUCCESS) fail("pause", rc);
        step("paused rank is stopped", rc == PMIX_SUCCESS && wait_state(pid, 1));
        pmix_info_t d;
        PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_RESUME, NULL, PMIX_BOOL);
        rc = request(&one, 1, &d, 1, NULL, 0);
        if (rc != PMIX_SUCCESS) fail("resume", rc);
        step("resumed rank runs", rc == PMIX_SUCCESS && wait_state(pid, 0));
        /* p1 was ended by the resume: its id is free again, and unknown. */
        rc = cancel("p1");
        step("a resumed pause is no longer outstanding", rc == PMIX_ERR_NOT_FOUND);

        rc = pause_with_id(&one, "p2");
        step("paused again", rc == PMIX_SUCCESS && wait_state(pid, 1));
        rc = pause_with_id(&one, "p2");
        step("duplicate id refused", rc == PMIX_ERR_EXISTS);
        rc = cancel("p2");
        step("cancel by id continues the process", rc == PMIX_SUCCESS && wait_state(pid, 0));

        pause_with_id(&one, "p3");
        rc = pause_with_id(&one, NULL);
        step("two pauses", rc == PMIX_SUCCESS && wait_state(pid, 1));
        rc = cancel(NULL);
        step("cancel all continues the process", rc == PMIX_SUCCESS && wait_state(pid, 0));
        rc = cancel("p3");
        step("cancelled ids are gone", rc == PMIX_ERR_NOT_FOUND);
        rc = cancel("never-used");
        step("unknown id not found", rc == PMIX_ERR_NOT_FOUND);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
}

static void mode_terminate(void) {
    signal(SIGTERM, on_term);
    pid_t pid = peer_pid(); /* also: the handler is in place */
    pmix_proc_t one;
    PMIX_LOAD_PROCID(&one, me.nspace, 1);
    if (me.rank == 0 && pid > 0) {
        pmix_status_t rc = pause_with_id(&one, NULL);
        if (rc != PMIX_SUCCESS || !wait_state(pid, 1)) fail("pause before terminate", rc);
        pmix_info_t d;
        PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_TERMINATE, NULL, PMIX_BOOL);
        rc = request(&one, 1, &d, 1, NULL, 0);
        if (rc != PMIX_SUCCESS) fail("terminate", rc);
    } else if (me.rank == 1) {
        for (int i = 0; i < 30000 && !got_term; ++i) nap();
        if (got_term) {
            printf("terminate ok\n");
            fflush(stdout);
        } else {
            fail("no SIGTERM seen", PMIX_ERR_TIMEOUT);
        }
    }
    PMIx_Fence(NULL, 0, NULL, 0);
}

static void mode_wildcard(void) {
    signal(SIGUSR1, on_usr1);
    PMIx_Fence(NULL, 0, NULL, 0); /* every handler is in place */
    if (me.rank == 0) {
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        pmix_info_t d;
        int sig = SIGUSR1;
        PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
        pmix_status_t rc = request(&all, 1, &d, 1, NULL, 0);
        if (rc != PMIX_SUCCESS) fail("signal wildcard", rc);
    }
    for (int i = 0; i < 30000 && !got_usr1; ++i) nap();
    if (got_usr1) {
        printf("wildcard ok\n");
        fflush(stdout);
    } else {
        fail("no SIGUSR1 seen", PMIX_ERR_TIMEOUT);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
}

static void refuse(const char *what, pmix_status_t want, const pmix_proc_t *targets,
                   size_t ntargets, pmix_info_t *dirs, size_t ndirs) {
    char why[256];
    pmix_status_t rc = request(targets, ntargets, dirs, ndirs, why, sizeof why);
    if (rc == want && why[0] != '\0') {
        printf("refuse ok: %s (%s: %s)\n", what, PMIx_Error_string(rc), why);
    } else {
        fprintf(stderr, "jobctl_host: %s: got %s, reason '%s'; wanted %s with a reason\n", what,
                PMIx_Error_string(rc), why, PMIx_Error_string(want));
        failed = 1;
    }
    fflush(stdout);
}

static void mode_refuse(void) {
    pmix_info_t d[2];
    int sig;
    PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_PROVISION, "node[1-4]", PMIX_STRING);
    refuse("provision", PMIX_ERR_NOT_SUPPORTED, NULL, 0, d, 1);
    PMIX_INFO_DESTRUCT(&d[0]);
    PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_RESTART, "ckpt.1", PMIX_STRING);
    refuse("restart", PMIX_ERR_NOT_SUPPORTED, NULL, 0, d, 1);
    PMIX_INFO_DESTRUCT(&d[0]);
    PMIX_INFO_LOAD(&d[0], "pmix.jctrl.bogus", NULL, PMIX_BOOL);
    refuse("unknown directive", PMIX_ERR_NOT_SUPPORTED, NULL, 0, d, 1);
    PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_KILL, NULL, PMIX_BOOL);
    sig = SIGUSR1;
    PMIX_INFO_LOAD(&d[1], PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
    refuse("two actions", PMIX_ERR_BAD_PARAM, NULL, 0, d, 2);
    sig = 0;
    PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
    refuse("signal 0", PMIX_ERR_BAD_PARAM, NULL, 0, d, 1);
    bool no = false;
    PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_PAUSE, &no, PMIX_BOOL);
    refuse("no action", PMIX_ERR_BAD_PARAM, NULL, 0, d, 1);
    pmix_proc_t bad;
    PMIX_LOAD_PROCID(&bad, me.nspace, 99);
    PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_KILL, NULL, PMIX_BOOL);
    refuse("rank 99", PMIX_ERR_NOT_FOUND, &bad, 1, d, 1);
    PMIX_LOAD_PROCID(&bad, "no-such-nspace", PMIX_RANK_WILDCARD);
    refuse("unknown nspace", PMIX_ERR_NOT_FOUND, &bad, 1, d, 1);
    /* A refused kill killed nothing: we are still here to say so. */
    printf("refuse ok: still alive\n");
}

int main(int argc, char **argv) {
    if (argc != 2 || PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    const char *mode = argv[1];
    if (strcmp(mode, "pause") == 0) {
        mode_pause();
    } else if (strcmp(mode, "terminate") == 0) {
        mode_terminate();
    } else if (strcmp(mode, "wildcard") == 0) {
        mode_wildcard();
    } else if (strcmp(mode, "refuse") == 0) {
        mode_refuse();
    } else {
        fprintf(stderr, "jobctl_host_client: unknown mode %s\n", mode);
        failed = 1;
    }
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return failed ? 1 : 0;
}
