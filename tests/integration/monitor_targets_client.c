/* Monitors of other processes and of nodes under pmixrun (docs/monitoring.md,
 * "Targets"). usage: monitor_targets_client MODE
 *  other    (3 ranks) rank 0 asks for a heartbeat monitor of rank 1
 *           (PMIX_MONITOR_TARGET_PROCS, range PMIX_RANGE_PROC_LOCAL). Rank 1
 *           asked for nothing itself, yet its PMIx_Heartbeat() calls now reach
 *           the server: no alert while it beats. It stops: the alert (source
 *           rank 1, our code, id "watch1") reaches rank 1 (the range) and
 *           rank 0 (the requestor, outside the range), not rank 2:
 *           "targets other ok" x3
 *  nodes    (2 ranks) rank 0 watches its node (PMIX_MONITOR_TARGET_NODES =
 *           this host): both beat, then rank 1 stops: one alert, for rank 1
 *           only: "targets nodes ok" x2
 *  refuse   (2 ranks, rank 0 asks) a process pmixrun does not know
 *           (NOT_FOUND), another node (NOT_SUPPORTED), TARGET_PROCS on a
 *           file monitor (BAD_PARAM), TARGET_PIDS (NOT_SUPPORTED); with
 *           PMIX_MONITOR_LOCAL_ONLY the local part is watched; node id 0 and
 *           this host are this node; a wildcard rank: "targets refuse ok"
 *  departs  (2 ranks) rank 0 watches rank 1, which beats once after a fence
 *           and exits without finalizing; once the server has handled its
 *           departure (a probe monitor of it is refused), the monitor, left
 *           watching nothing, is gone (cancel: NOT_FOUND) and no alert comes
 *           in 4 windows: "targets departs ok"
 * Every wait is bounded by alarm(); a missing alert kills the rank. */
#include <pmix.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OUR_CODE (PMIX_EXTERNAL_ERR_BASE - 43)
/* The standard's (v5, provisional); not in PMIx 4.2's headers. */
#define TARGET_PROCS "pmix.monitor.tgtproc"
#define TARGET_PIDS "pmix.monitor.tgtpid"
#define TARGET_NODES "pmix.monitor.tgtnode"
#define TARGET_NODEIDS "pmix.monitor.tgtndids"
#define LOCAL_ONLY "pmix.monitor.local"
#define MAX_ALERTS 64

#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "monitor_targets_client rank %u FAILED: ", me.rank); \
            fprintf(stderr, __VA_ARGS__);                                        \
            fprintf(stderr, "\n");                                               \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

static pmix_proc_t me;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct alert {
    pmix_status_t status;
    pmix_proc_t source;
    char id[64];
} alerts[MAX_ALERTS];
static int nalerts = 0;

static void on_alert(size_t ref, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)ref, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    if (nalerts < MAX_ALERTS) {
        struct alert *a = &alerts[nalerts++];
        memset(a, 0, sizeof *a);
        a->status = status;
        if (source != NULL) a->source = *source;
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_MONITOR_ID) && info[i].value.type == PMIX_STRING)
                snprintf(a->id, sizeof a->id, "%s", info[i].value.data.string);
        }
    }
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static int count_alerts(void) {
    pthread_mutex_lock(&lock);
    int n = nalerts;
    pthread_mutex_unlock(&lock);
    return n;
}

static void nap_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void wait_alerts(int n) {
    while (count_alerts() < n) nap_ms(10);
}

static void beat_for(double seconds) {
    const double end = now() + seconds;
    while (now() < end) {
        PMIx_Heartbeat();
        nap_ms(20);
    }
}

static void register_handler(void) {
    pmix_status_t code = OUR_CODE;
    int rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_alert, NULL, NULL);
    CHECK(rc >= 0, "register handler: %s", PMIx_Error_string(rc));
}

static void fence(void) {
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "fence: %s", PMIx_Error_string(rc));
}

static pmix_proc_t peer(pmix_rank_t rank) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    return p;
}

/* A monitor request: `kind` is PMIX_MONITOR_HEARTBEAT (1 s, no drops) or
 * PMIX_MONITOR_FILE (this program's own binary, as a file that exists);
 * `extra` directives follow. */
static pmix_status_t ask(const char *kind, const char *id, const pmix_info_t *extra, size_t nextra,
                         pmix_data_range_t range) {
    pmix_info_t mon;
    PMIX_INFO_CONSTRUCT(&mon);
    if (strcmp(kind, PMIX_MONITOR_FILE) == 0) {
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_FILE, "/proc/self/exe", PMIX_STRING);
    } else {
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    }
    pmix_info_t d[12];
    size_t n = 0;
    uint32_t one = 1;
    bool t = true;
    PMIX_INFO_LOAD(&d[n], PMIX_MONITOR_HEARTBEAT_TIME, &one, PMIX_UINT32);
    ++n;
    PMIX_INFO_LOAD(&d[n], PMIX_MONITOR_ID, id, PMIX_STRING);
    ++n;
    PMIX_INFO_LOAD(&d[n], PMIX_MONITOR_APP_CONTROL, &t, PMIX_BOOL);
    ++n;
    PMIX_INFO_LOAD(&d[n], PMIX_RANGE, &range, PMIX_DATA_RANGE);
    ++n;
    for (size_t i = 0; i < nextra && n < 12; ++i, ++n) PMIX_INFO_XFER(&d[n], &extra[i]);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Process_monitor(&mon, OUR_CODE, d, n, &results, &nresults);
    if (results != NULL) PMIX_INFO_FREE(results, nresults);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&d[i]);
    PMIX_INFO_DESTRUCT(&mon);
    return rc;
}

static pmix_status_t cancel(const char *id) {
    pmix_info_t mon;
    PMIX_INFO_CONSTRUCT(&mon);
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_CANCEL, id, PMIX_STRING);
    pmix_status_t rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, NULL, 0, NULL, NULL);
    PMIX_INFO_DESTRUCT(&mon);
    return rc;
}

/* PMIX_MONITOR_TARGET_PROCS = the given processes. */
static void load_procs(pmix_info_t *info, const pmix_proc_t *procs, size_t n) {
    pmix_data_array_t a;
    a.type = PMIX_PROC;
    a.size = n;
    a.array = (void *)procs;
    PMIX_INFO_LOAD(info, TARGET_PROCS, &a, PMIX_DATA_ARRAY);
}

static void load_strings(pmix_info_t *info, const char *key, char **names, size_t n) {
    pmix_data_array_t a;
    a.type = PMIX_STRING;
    a.size = n;
    a.array = names;
    PMIX_INFO_LOAD(info, key, &a, PMIX_DATA_ARRAY);
}

static int other(void) {
    register_handler();
    fence(); /* every handler is in place */
    if (me.rank == 0) {
        pmix_info_t target;
        const pmix_proc_t one = peer(1);
        load_procs(&target, &one, 1);
        pmix_status_t rc = ask(PMIX_MONITOR_HEARTBEAT, "watch1", &target, 1, PMIX_RANGE_PROC_LOCAL);
        PMIX_INFO_DESTRUCT(&target);
        CHECK(rc == PMIX_SUCCESS, "monitor of rank 1: %s", PMIx_Error_string(rc));
    }
    fence(); /* the monitor runs */
    if (me.rank == 1) {
        beat_for(3.0);
        /* Its last beat was 20 ms ago: an alert now means beats were lost. */
        CHECK(count_alerts() == 0, "%d alert(s) while beating", count_alerts());
    }
    if (me.rank != 2) {
        wait_alerts(1); /* rank 1 stopped beating */
        CHECK(alerts[0].status == OUR_CODE, "status %d", alerts[0].status);
        const pmix_proc_t one = peer(1);
        CHECK(PMIX_CHECK_PROCID(&alerts[0].source, &one), "source %s:%u", alerts[0].source.nspace,
              alerts[0].source.rank);
        CHECK(strcmp(alerts[0].id, "watch1") == 0, "id '%s'", alerts[0].id);
    }
    if (me.rank == 0) {
        pmix_status_t rc = cancel("watch1");
        CHECK(rc == PMIX_SUCCESS, "cancel: %s", PMIx_Error_string(rc));
    }
    /* Every alert was sent before the cancel's answer, so before this fence. */
    fence();
    const int n = count_alerts();
    CHECK(n == (me.rank == 2 ? 0 : 1), "%d alert(s)", n);
    printf("targets other ok\n");
    return 0;
}

static int nodes(void) {
    register_handler();
    fence();
    if (me.rank == 0) {
        char host[256] = {0};
        CHECK(gethostname(host, sizeof host - 1) == 0, "gethostname");
        char *names[1] = {host};
        pmix_info_t target;
        load_strings(&target, TARGET_NODES, names, 1);
        pmix_status_t rc = ask(PMIX_MONITOR_HEARTBEAT, "node", &target, 1, PMIX_RANGE_NAMESPACE);
        PMIX_INFO_DESTRUCT(&target);
        CHECK(rc == PMIX_SUCCESS, "monitor of this node: %s", PMIx_Error_string(rc));
    }
    fence();
    beat_for(2.0);
    if (me.rank == 0) {
        /* Rank 1 stopped: one alert, for it; rank 0 beats on meanwhile. */
        const double end = now() + 30.0;
        while (count_alerts() < 1 && now() < end) beat_for(0.1);
        const pmix_proc_t one = peer(1);
        CHECK(count_alerts() == 1 && PMIX_CHECK_PROCID(&alerts[0].source, &one),
              "%d alert(s), first from %s:%u", count_alerts(), alerts[0].source.nspace,
              alerts[0].source.rank);
        CHECK(cancel("node") == PMIX_SUCCESS, "cancel");
    } else {
        CHECK(count_alerts() == 0, "%d alert(s) while beating", count_alerts());
        wait_alerts(1);
        CHECK(PMIX_CHECK_PROCID(&alerts[0].source, &me), "alert about %s:%u",
              alerts[0].source.nspace, alerts[0].source.rank);
    }
    fence();
    CHECK(count_alerts() == 1, "%d alert(s)", count_alerts());
    printf("targets nodes ok\n");
    return 0;
}

static int refuse(void) {
    if (me.rank == 0) {
        pmix_info_t d[2];
        pmix_status_t rc;
        /* A process pmixrun does not know. */
        pmix_proc_t procs[2];
        PMIX_LOAD_PROCID(&procs[0], "no.such.job", 0);
        procs[1] = peer(1);
        load_procs(&d[0], procs, 2);
        rc = ask(PMIX_MONITOR_HEARTBEAT, "x1", d, 1, PMIX_RANGE_NAMESPACE);
        CHECK(rc == PMIX_ERR_NOT_FOUND, "unknown process: %s", PMIx_Error_string(rc));
        /* ... but with PMIX_MONITOR_LOCAL_ONLY rank 1 is watched. */
        bool t = true;
        PMIX_INFO_LOAD(&d[1], LOCAL_ONLY, &t, PMIX_BOOL);
        rc = ask(PMIX_MONITOR_HEARTBEAT, "x1", d, 2, PMIX_RANGE_NAMESPACE);
        CHECK(rc == PMIX_SUCCESS, "local only: %s", PMIx_Error_string(rc));
        CHECK(cancel("x1") == PMIX_SUCCESS, "cancel x1");
        /* TARGET_PROCS does not apply to a file monitor. */
        rc = ask(PMIX_MONITOR_FILE, "x2", d, 1, PMIX_RANGE_NAMESPACE);
        CHECK(rc == PMIX_ERR_BAD_PARAM, "file with procs: %s", PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&d[0]);
        PMIX_INFO_DESTRUCT(&d[1]);

        /* Another node: no host upcall to reach it. */
        char *away[1] = {"no-such-node.invalid"};
        load_strings(&d[0], TARGET_NODES, away, 1);
        rc = ask(PMIX_MONITOR_HEARTBEAT, "x3", d, 1, PMIX_RANGE_NAMESPACE);
        CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "other node: %s", PMIx_Error_string(rc));
        rc = ask(PMIX_MONITOR_FILE, "x3", d, 1, PMIX_RANGE_NAMESPACE);
        CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "file on another node: %s", PMIx_Error_string(rc));
        PMIX_INFO_LOAD(&d[1], LOCAL_ONLY, &t, PMIX_BOOL);
        rc = ask(PMIX_MONITOR_FILE, "x3", d, 2, PMIX_RANGE_NAMESPACE);
        CHECK(rc == PMIX_SUCCESS, "file, local only: %s", PMIx_Error_string(rc));
        CHECK(cancel("x3") == PMIX_SUCCESS, "cancel x3");
        PMIX_INFO_DESTRUCT(&d[0]);
        PMIX_INFO_DESTRUCT(&d[1]);

        /* Node ids: pmixrun's node is 0. */
        uint32_t ids[1] = {5};
        pmix_data_array_t a = {PMIX_UINT32, 1, ids};
        PMIX_INFO_LOAD(&d[0], TARGET_NODEIDS, &a, PMIX_DATA_ARRAY);
        rc = ask(PMIX_MONITOR_FILE, "x4", d, 1, PMIX_RANGE_NAMESPACE);
        CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "node id 5: %s", PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&d[0]);
        ids[0] = 0;
        PMIX_INFO_LOAD(&d[0], TARGET_NODEIDS, &a, PMIX_DATA_ARRAY);
        rc = ask(PMIX_MONITOR_FILE, "x4", d, 1, PMIX_RANGE_NAMESPACE);
        CHECK(rc == PMIX_SUCCESS, "node id 0: %s", PMIx_Error_string(rc));
        CHECK(cancel("x4") == PMIX_SUCCESS, "cancel x4");
        PMIX_INFO_DESTRUCT(&d[0]);

        /* PIDs are a resource-usage target. */
        uint32_t pid = (uint32_t)getpid();
        PMIX_INFO_LOAD(&d[0], TARGET_PIDS, &pid, PMIX_UINT32);
        rc = ask(PMIX_MONITOR_HEARTBEAT, "x5", d, 1, PMIX_RANGE_NAMESPACE);
        CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "pids: %s", PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&d[0]);

        /* A wildcard rank: the namespace's processes. */
        pmix_proc_t all = peer(PMIX_RANK_WILDCARD);
        load_procs(&d[0], &all, 1);
        rc = ask(PMIX_MONITOR_HEARTBEAT, "x6", d, 1, PMIX_RANGE_NAMESPACE);
        CHECK(rc == PMIX_SUCCESS, "wildcard: %s", PMIx_Error_string(rc));
        CHECK(cancel("x6") == PMIX_SUCCESS, "cancel x6");
        PMIX_INFO_DESTRUCT(&d[0]);
        printf("targets refuse ok\n");
    }
    fence();
    return 0;
}

/* Returns once the server has handled `rank`'s departure: until then a
 * heartbeat monitor of it is accepted (and cancelled at once: its code is not
 * ours and its window an hour, so it never alerts), after it the target is
 * refused with NOT_FOUND. The server answers in order on our connection, so an
 * alert it sent before the departure has reached on_alert by then. Bounded by
 * the alarm. */
static void wait_departed(pmix_rank_t rank) {
    const pmix_proc_t target = peer(rank);
    uint32_t hour = 3600;
    pmix_data_range_t local = PMIX_RANGE_PROC_LOCAL;
    for (;;) {
        pmix_info_t mon, d[4];
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
        PMIX_INFO_LOAD(&d[0], PMIX_MONITOR_HEARTBEAT_TIME, &hour, PMIX_UINT32);
        PMIX_INFO_LOAD(&d[1], PMIX_MONITOR_ID, "probe", PMIX_STRING);
        load_procs(&d[2], &target, 1);
        PMIX_INFO_LOAD(&d[3], PMIX_RANGE, &local, PMIX_DATA_RANGE);
        pmix_status_t rc = PMIx_Process_monitor(&mon, OUR_CODE - 1, d, 4, NULL, NULL);
        for (size_t i = 0; i < 4; ++i) PMIX_INFO_DESTRUCT(&d[i]);
        PMIX_INFO_DESTRUCT(&mon);
        if (rc == PMIX_ERR_NOT_FOUND) return;
        CHECK(rc == PMIX_SUCCESS, "probe monitor of rank %u: %s", rank, PMIx_Error_string(rc));
        /* NOT_FOUND: the departure came in between and ended the probe,
         * which then watched nothing. */
        rc = cancel("probe");
        if (rc == PMIX_ERR_NOT_FOUND) return;
        CHECK(rc == PMIX_SUCCESS, "cancel probe: %s", PMIx_Error_string(rc));
        nap_ms(20);
    }
}

/* An alert while rank 1 lives is allowed (a loaded machine can hold it longer
 * than a window between its last beat and its end); what is checked follows
 * the server's handling of its departure. Rank 1 makes sure it is wanted to
 * beat (a round trip after rank 0's request), beats and ends: a beat re-arms
 * a monitor that already alerted, so a monitor still watching it would alert
 * again within 2 windows. */
static int departs(void) {
    register_handler();
    if (me.rank == 0) {
        pmix_info_t target;
        const pmix_proc_t one = peer(1);
        load_procs(&target, &one, 1);
        pmix_status_t rc = ask(PMIX_MONITOR_HEARTBEAT, "w", &target, 1, PMIX_RANGE_NAMESPACE);
        PMIX_INFO_DESTRUCT(&target);
        CHECK(rc == PMIX_SUCCESS, "monitor of rank 1: %s", PMIx_Error_string(rc));
    }
    fence();
    if (me.rank == 1) {
        /* Round trips (a cancel of an id never used): the first reads the
         * server's heartbeat_wanted, sent before rank 0's reply; the second
         * returns once the beat posted before it has reached the server. */
        CHECK(cancel("never-used") == PMIX_ERR_NOT_FOUND, "round trip");
        PMIx_Heartbeat();
        CHECK(cancel("never-used") == PMIX_ERR_NOT_FOUND, "round trip");
        _exit(0); /* no finalize: lost */
    }
    wait_departed(1);
    const int before = count_alerts();
    pmix_status_t rc = cancel("w");
    CHECK(rc == PMIX_ERR_NOT_FOUND, "cancel of the monitor left watching nothing: %s",
          PMIx_Error_string(rc));
    nap_ms(4000); /* 4 windows in which no alert may come */
    CHECK(count_alerts() == before, "%d alert(s) for a process that is gone",
          count_alerts() - before);
    printf("targets departs ok (%d alert(s) while it lived)\n", before);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    alarm(60);
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    const char *mode = argv[1];
    int rc = 2;
    if (strcmp(mode, "other") == 0) rc = other();
    if (strcmp(mode, "nodes") == 0) rc = nodes();
    if (strcmp(mode, "refuse") == 0) rc = refuse();
    if (strcmp(mode, "departs") == 0) rc = departs();
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return rc;
}
