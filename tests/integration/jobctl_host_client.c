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
 *  ckpt_signal, ckpt_event: (2 ranks) rank 1 declares its checkpoint method
 *             (SIGUSR2, or the PMIX_JCTRL_CHECKPOINT event) for itself; rank 0
 *             asks for checkpoint "ck.1" (non-blocking); rank 1 is triggered
 *             by its method ("checkpoint triggered by signal|event"), tells
 *             rank 0 (a job-control SIGUSR1), rank 0 sees its request still
 *             pending ("checkpoint pending until complete") and lets rank 1
 *             go on (SIGUSR1), rank 1 notifies PMIX_JCTRL_CHECKPOINT_COMPLETE
 *             and rank 0's callback fires with success and the checkpoint's
 *             name ("checkpoint completed: ck.1").
 *  preempt:   (2 ranks) rank 1 declares itself preemptible (id "pre1"), rank
 *             0 sends SIGUSR1 to pmixrun (its parent): rank 1 gets
 *             PMIX_JCTRL_PREEMPT_ALERT ("preempt alert received by rank 1");
 *             (declared twice: the second replaces the first), then rank 1
 *             cancels "pre1" and rank 0 declares itself: the
 *             next SIGUSR1 alerts rank 0 only ("... by rank 0"); at the end
 *             each rank got exactly one alert ("preempt count ok"). A
 *             non-bool PREEMPTIBLE is refused ("preempt bad value refused").
 *  alloc:     (1 rank) PMIx_Allocation_request to pmixrun: an EXTEND asking
 *             for nothing answers the current allocation (this host's name,
 *             1 node, the CPUs online here: "alloc ok: current allocation");
 *             NEW, EXTEND with resources, RELEASE, REAQUIRE and a host-range
 *             directive are refused with a reason ("alloc ok: <what>
 *             refused"); the non-blocking form echoes PMIX_ALLOC_REQ_ID.
 *  ckpt_errors: (2 ranks) no method: PMIX_ERR_PROC_CHECKPOINT; bad method
 *             declarations; a timeout; a cancelled checkpoint; a target that
 *             ends without completing: "ckpt ok: <what>".
 * Every wait is bounded (about 30 s); a missed one fails the rank. */
#include <pmix.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t me;
static int failed = 0;
/* Atomic, not volatile sig_atomic_t: the signal may land on the progress thread. */
static _Atomic int got_usr1 = 0, got_term = 0, got_usr2 = 0;

static void on_usr1(int sig) {
    (void)sig;
    got_usr1 = 1;
}
static void on_usr2(int sig) {
    (void)sig;
    got_usr2 = 1;
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

/* ---- checkpoint ---- */

static _Atomic int ckpt_event_seen = 0;
static char ckpt_event_name[64];

static void on_ckpt_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                          pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_CTRL_CHECKPOINT) && info[i].value.type == PMIX_STRING)
            snprintf(ckpt_event_name, sizeof ckpt_event_name, "%s", info[i].value.data.string);
    }
    atomic_store(&ckpt_event_seen, 1);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* A non-blocking request's outcome. */
struct outcome {
    _Atomic int fired;
    pmix_status_t status;
    char checkpoint[64];
};

static void on_outcome(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                       pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    struct outcome *o = cbdata;
    o->status = status;
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_JOB_CTRL_CHECKPOINT) && info[i].value.type == PMIX_STRING)
            snprintf(o->checkpoint, sizeof o->checkpoint, "%s", info[i].value.data.string);
    }
    if (release_fn != NULL) release_fn(release_cbdata);
    atomic_store(&o->fired, 1);
}

static int wait_fired(struct outcome *o) {
    for (int i = 0; i < 30000 && !atomic_load(&o->fired); ++i) nap();
    return atomic_load(&o->fired);
}

/* Declares one method entry (key, value) for ourselves. */
static pmix_status_t declare(const char *key, const void *value, pmix_data_type_t type,
                             size_t nentries, char *why, size_t whylen) {
    pmix_info_t m[1];
    PMIX_INFO_LOAD(&m[0], key, value, type);
    pmix_data_array_t da = {PMIX_INFO, nentries, nentries > 0 ? m : NULL};
    pmix_info_t d;
    PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_CHECKPOINT_METHOD, &da, PMIX_DATA_ARRAY);
    pmix_status_t rc = request(&me, 1, &d, 1, why, whylen);
    PMIX_INFO_DESTRUCT(&d);
    PMIX_INFO_DESTRUCT(&m[0]);
    return rc;
}

static pmix_status_t checkpoint_nb(const pmix_proc_t *target, const char *name, const char *id,
                                   struct outcome *o) {
    pmix_info_t d[2];
    size_t n = 1;
    PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_CHECKPOINT, name, PMIX_STRING);
    if (id != NULL) PMIX_INFO_LOAD(&d[n++], PMIX_JOB_CTRL_ID, id, PMIX_STRING);
    memset(o, 0, sizeof *o);
    pmix_status_t rc = PMIx_Job_control_nb(target, 1, d, n, on_outcome, o);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&d[i]);
    return rc;
}

static pmix_status_t send_signal(pmix_rank_t rank, int sig) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_info_t d;
    PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
    return request(&p, 1, &d, 1, NULL, 0);
}

static void mode_checkpoint(int by_event) {
    signal(SIGUSR1, on_usr1);
    pmix_proc_t one;
    PMIX_LOAD_PROCID(&one, me.nspace, 1);
    if (me.rank == 1) {
        signal(SIGUSR2, on_usr2);
        pmix_status_t rc;
        if (by_event) {
            pmix_status_t code = PMIX_JCTRL_CHECKPOINT;
            rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_ckpt_event, NULL, NULL);
            if (rc < 0) fail("register for PMIX_JCTRL_CHECKPOINT", rc);
            bool yes = true;
            rc = declare(PMIX_JOB_CTRL_CHECKPOINT_EVENT, &yes, PMIX_BOOL, 1, NULL, 0);
        } else {
            int sig = SIGUSR2;
            rc = declare(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig, PMIX_INT, 1, NULL, 0);
        }
        if (rc != PMIX_SUCCESS) fail("declare the checkpoint method", rc);
    }
    PMIx_Fence(NULL, 0, NULL, 0); /* methods and handlers in place */
    if (me.rank == 0) {
        /* Static: fail() returns, and a late answer must not land in a returned frame. */
        static struct outcome o;
        pmix_status_t rc = checkpoint_nb(&one, "ck.1", NULL, &o);
        if (rc != PMIX_SUCCESS) fail("checkpoint request", rc);
        for (int i = 0; i < 30000 && !got_usr1; ++i) nap();
        if (!got_usr1) fail("rank 1 never said it was triggered", PMIX_ERR_TIMEOUT);
        if (!atomic_load(&o.fired))
            printf("checkpoint pending until complete\n");
        else
            fail("the checkpoint request finished before rank 1 completed it", o.status);
        fflush(stdout);
        send_signal(1, SIGUSR1); /* go on */
        if (!wait_fired(&o)) {
            fail("checkpoint request never answered", PMIX_ERR_TIMEOUT);
        } else if (o.status == PMIX_SUCCESS && strcmp(o.checkpoint, "ck.1") == 0) {
            printf("checkpoint completed: %s\n", o.checkpoint);
        } else {
            fprintf(stderr, "checkpoint answered %s, name '%s'\n", PMIx_Error_string(o.status),
                    o.checkpoint);
            failed = 1;
        }
    } else if (me.rank == 1) {
        int triggered = 0;
        for (int i = 0; i < 30000 && !triggered; ++i) {
            triggered = by_event ? atomic_load(&ckpt_event_seen) : got_usr2;
            if (!triggered) nap();
        }
        if (triggered && (!by_event || strcmp(ckpt_event_name, "ck.1") == 0)) {
            printf("checkpoint triggered by %s\n", by_event ? "event" : "signal");
        } else {
            fail("checkpoint method not triggered (or without the name)", PMIX_ERR_TIMEOUT);
        }
        fflush(stdout);
        send_signal(0, SIGUSR1); /* triggered */
        for (int i = 0; i < 30000 && !got_usr1; ++i) nap();
        /* ... the checkpoint is written here ... */
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, PMIX_JOB_CTRL_CHECKPOINT, "ck.1", PMIX_STRING);
        pmix_status_t rc = PMIx_Notify_event(PMIX_JCTRL_CHECKPOINT_COMPLETE, &me, PMIX_RANGE_RM,
                                             &info, 1, NULL, NULL);
        if (rc != PMIX_SUCCESS) fail("notify PMIX_JCTRL_CHECKPOINT_COMPLETE", rc);
        PMIX_INFO_DESTRUCT(&info);
    }
    fflush(stdout);
    PMIx_Fence(NULL, 0, NULL, 0);
}

static void ckpt_step(const char *what, int ok, pmix_status_t rc, const char *why) {
    if (ok)
        printf("ckpt ok: %s (%s%s%s)\n", what, PMIx_Error_string(rc), why ? ": " : "",
               why ? why : "");
    else
        fprintf(stderr, "jobctl_host: ckpt %s: got %s (%s)\n", what, PMIx_Error_string(rc),
                why ? why : "");
    if (!ok) failed = 1;
    fflush(stdout);
}

static void mode_ckpt_errors(void) {
    pmix_proc_t one;
    PMIX_LOAD_PROCID(&one, me.nspace, 1);
    char why[256];
    pmix_status_t rc;
    signal(SIGUSR2, on_usr2);
    signal(SIGTERM, on_term);
    PMIx_Fence(NULL, 0, NULL, 0);
    if (me.rank == 0) {
        pmix_info_t d[2];
        PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_CHECKPOINT, "ck.none", PMIX_STRING);
        rc = request(&one, 1, d, 1, why, sizeof why);
        ckpt_step("no method", rc == PMIX_ERR_PROC_CHECKPOINT && why[0] != '\0', rc, why);
        PMIX_INFO_DESTRUCT(&d[0]);

        int sig = SIGUSR2;
        rc = declare(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig, PMIX_INT, 0, why, sizeof why);
        ckpt_step("empty method array", rc == PMIX_ERR_BAD_PARAM, rc, why);
        sig = SIGKILL;
        rc = declare(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig, PMIX_INT, 1, why, sizeof why);
        ckpt_step("uncatchable signal", rc == PMIX_ERR_BAD_PARAM, rc, why);
        rc = declare("pmix.jctrl.ckpt.magic", "x", PMIX_STRING, 1, why, sizeof why);
        ckpt_step("no supported method", rc == PMIX_ERR_NOT_SUPPORTED, rc, why);
        bool yes = true;
        PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_CHECKPOINT_EVENT, &yes, PMIX_BOOL);
        rc = request(&me, 1, d, 1, why, sizeof why);
        ckpt_step("method outside the method array", rc == PMIX_ERR_BAD_PARAM, rc, why);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
    if (me.rank == 1) {
        int sig = SIGUSR2; /* it never completes a checkpoint */
        rc = declare(PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &sig, PMIX_INT, 1, NULL, 0);
        if (rc != PMIX_SUCCESS) fail("declare", rc);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
    if (me.rank == 0) {
        pmix_info_t d[2];
        int seconds = 1;
        PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_CHECKPOINT, "ck.slow", PMIX_STRING);
        PMIX_INFO_LOAD(&d[1], PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT, &seconds, PMIX_INT);
        rc = request(&one, 1, d, 2, why, sizeof why);
        ckpt_step("timeout", rc == PMIX_ERR_TIMEOUT, rc, why);
        PMIX_INFO_DESTRUCT(&d[0]);
        PMIX_INFO_DESTRUCT(&d[1]);

        /* Static, and one per request: an answer that came after its wait gave up
         * lands in storage that still exists and is no other request's. */
        static struct outcome o, orphan;
        rc = checkpoint_nb(&one, "ck.c1", "c1", &o);
        pmix_status_t crc = cancel("c1");
        int fired = rc == PMIX_SUCCESS && wait_fired(&o);
        ckpt_step("cancelled", crc == PMIX_SUCCESS && fired && o.status == PMIX_ERR_JOB_CANCELED,
                  fired ? o.status : crc, NULL);

        rc = checkpoint_nb(&one, "ck.orphan", NULL, &orphan);
        PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_TERMINATE, NULL, PMIX_BOOL);
        pmix_status_t trc = request(&one, 1, d, 1, NULL, 0);
        fired = rc == PMIX_SUCCESS && trc == PMIX_SUCCESS && wait_fired(&orphan);
        ckpt_step("target ended", fired && orphan.status == PMIX_ERR_PROC_CHECKPOINT,
                  fired ? orphan.status : trc, NULL);
    } else if (me.rank == 1) {
        for (int i = 0; i < 30000 && !got_term; ++i) nap();
        ckpt_step("rank 1 left without completing", got_term, PMIX_SUCCESS, NULL);
    }
}

/* ---- preemption ---- */

static _Atomic int preempt_alerts = 0;

static void on_preempt(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    atomic_fetch_add(&preempt_alerts, 1);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static pmix_status_t preemptible(const char *id, bool yes) {
    pmix_info_t d[2];
    size_t n = 1;
    PMIX_INFO_LOAD(&d[0], PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
    if (id != NULL) PMIX_INFO_LOAD(&d[n++], PMIX_JOB_CTRL_ID, id, PMIX_STRING);
    pmix_status_t rc = request(NULL, 0, d, n, NULL, 0);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&d[i]);
    return rc;
}

static int wait_alerts(int n) {
    for (int i = 0; i < 30000 && atomic_load(&preempt_alerts) < n; ++i) nap();
    return atomic_load(&preempt_alerts) >= n;
}

static void mode_preempt(void) {
    pmix_status_t code = PMIX_JCTRL_PREEMPT_ALERT;
    pmix_status_t rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_preempt, NULL, NULL);
    if (rc < 0) fail("register for PMIX_JCTRL_PREEMPT_ALERT", rc);
    if (me.rank == 1) {
        rc = preemptible("pre1", true);
        if (rc != PMIX_SUCCESS) fail("declare preemptible", rc);
        /* Declared again with the same id: replaces it (one alert, not two). */
        rc = preemptible("pre1", true);
        if (rc != PMIX_SUCCESS) fail("declare preemptible again", rc);
    } else {
        pmix_info_t d;
        PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_PREEMPTIBLE, "yes", PMIX_STRING);
        rc = request(NULL, 0, &d, 1, NULL, 0);
        PMIX_INFO_DESTRUCT(&d);
        if (rc == PMIX_ERR_BAD_PARAM)
            printf("preempt bad value refused\n");
        else
            fail("a string PREEMPTIBLE", rc);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
    if (me.rank == 0) kill(getppid(), SIGUSR1); /* pmixrun */
    if (me.rank == 1) {
        if (wait_alerts(1))
            printf("preempt alert received by rank 1\n");
        else
            fail("no preemption alert", PMIX_ERR_TIMEOUT);
        fflush(stdout);
        rc = cancel("pre1");
        if (rc != PMIX_SUCCESS) fail("cancel pre1", rc);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
    if (me.rank == 0) {
        rc = preemptible(NULL, true);
        if (rc != PMIX_SUCCESS) fail("declare preemptible", rc);
        kill(getppid(), SIGUSR1);
        if (wait_alerts(1))
            printf("preempt alert received by rank 0\n");
        else
            fail("no preemption alert", PMIX_ERR_TIMEOUT);
    }
    fflush(stdout);
    PMIx_Fence(NULL, 0, NULL, 0);
    if (atomic_load(&preempt_alerts) == 1)
        printf("preempt count ok\n");
    else
        fail("wrong number of preemption alerts", PMIX_ERROR);
}

/* ---- allocation ---- */

static const char *text_of(const pmix_info_t *info, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i) {
        if (PMIX_CHECK_KEY(&info[i], key) && info[i].value.type == PMIX_STRING)
            return info[i].value.data.string;
    }
    return NULL;
}

static uint64_t u64_of(const pmix_info_t *info, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i) {
        if (PMIX_CHECK_KEY(&info[i], key) && info[i].value.type == PMIX_UINT64)
            return info[i].value.data.uint64;
    }
    return 0;
}

/* The results describe this node as the client sees it. */
static int is_this_node(const pmix_info_t *r, size_t n) {
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    const char *list = text_of(r, n, PMIX_ALLOC_NODE_LIST);
    const char *id = text_of(r, n, PMIX_ALLOC_ID);
    return list != NULL && strcmp(list, host) == 0 && id != NULL && *id != '\0' &&
           u64_of(r, n, PMIX_ALLOC_NUM_NODES) == 1 &&
           u64_of(r, n, PMIX_ALLOC_NUM_CPUS) == (uint64_t)sysconf(_SC_NPROCESSORS_ONLN);
}

static void alloc_refused(const char *what, pmix_alloc_directive_t directive, pmix_info_t *info,
                          size_t ninfo) {
    pmix_info_t *r = NULL;
    size_t n = 0;
    pmix_status_t rc = PMIx_Allocation_request(directive, info, ninfo, &r, &n);
    const char *why = text_of(r, n, PMIX_EVENT_TEXT_MESSAGE);
    if (rc == PMIX_ERR_NOT_SUPPORTED && why != NULL && is_this_node(r, n)) {
        printf("alloc ok: %s refused (%s)\n", what, why);
    } else {
        fprintf(stderr, "jobctl_host: allocation %s: %s, reason '%s'\n", what,
                PMIx_Error_string(rc), why ? why : "");
        failed = 1;
    }
    if (r != NULL) PMIX_INFO_FREE(r, n);
}

static _Atomic int alloc_fired = 0;
static pmix_status_t alloc_status;
static char alloc_req_id[64];

static void on_alloc(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)cbdata;
    alloc_status = status;
    const char *id = text_of(info, ninfo, PMIX_ALLOC_REQ_ID);
    snprintf(alloc_req_id, sizeof alloc_req_id, "%s", id ? id : "");
    if (!is_this_node(info, ninfo)) alloc_status = PMIX_ERR_BAD_PARAM;
    if (release_fn != NULL) release_fn(release_cbdata);
    atomic_store(&alloc_fired, 1);
}

static void mode_alloc(void) {
    pmix_info_t *r = NULL;
    size_t n = 0;
    pmix_status_t rc = PMIx_Allocation_request(PMIX_ALLOC_EXTEND, NULL, 0, &r, &n);
    if (rc == PMIX_SUCCESS && is_this_node(r, n)) {
        printf("alloc ok: current allocation %s, %llu cpus\n", text_of(r, n, PMIX_ALLOC_NODE_LIST),
               (unsigned long long)u64_of(r, n, PMIX_ALLOC_NUM_CPUS));
    } else {
        fail("query the current allocation", rc);
    }
    if (r != NULL) PMIX_INFO_FREE(r, n);

    pmix_info_t info;
    uint64_t nodes = 2;
    PMIX_INFO_LOAD(&info, PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    alloc_refused("new", PMIX_ALLOC_NEW, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    uint32_t seconds = 60;
    PMIX_INFO_LOAD(&info, PMIX_ALLOC_TIME, &seconds, PMIX_UINT32);
    alloc_refused("extend", PMIX_ALLOC_EXTEND, &info, 1);
    alloc_refused("release", PMIX_ALLOC_RELEASE, &info, 1);
    alloc_refused("reacquire", PMIX_ALLOC_REAQUIRE, &info, 1);
    alloc_refused("host-range directive", PMIX_ALLOC_EXTERNAL + 1, NULL, 0);
    PMIX_INFO_DESTRUCT(&info);

    PMIX_INFO_LOAD(&info, PMIX_ALLOC_REQ_ID, "req.7", PMIX_STRING);
    rc = PMIx_Allocation_request_nb(PMIX_ALLOC_EXTEND, &info, 1, on_alloc, NULL);
    PMIX_INFO_DESTRUCT(&info);
    for (int i = 0; rc == PMIX_SUCCESS && i < 30000 && !atomic_load(&alloc_fired); ++i) nap();
    if (rc == PMIX_SUCCESS && atomic_load(&alloc_fired) && alloc_status == PMIX_SUCCESS &&
        strcmp(alloc_req_id, "req.7") == 0)
        printf("alloc ok: non-blocking, request id %s\n", alloc_req_id);
    else
        fail("non-blocking allocation request", rc != PMIX_SUCCESS ? rc : alloc_status);
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
    } else if (strcmp(mode, "ckpt_signal") == 0) {
        mode_checkpoint(0);
    } else if (strcmp(mode, "ckpt_event") == 0) {
        mode_checkpoint(1);
    } else if (strcmp(mode, "alloc") == 0) {
        mode_alloc();
    } else if (strcmp(mode, "preempt") == 0) {
        mode_preempt();
    } else if (strcmp(mode, "ckpt_errors") == 0) {
        mode_ckpt_errors();
    } else {
        fprintf(stderr, "jobctl_host_client: unknown mode %s\n", mode);
        failed = 1;
    }
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return failed ? 1 : 0;
}
