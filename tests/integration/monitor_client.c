/* Process monitoring under pmixrun (docs/monitoring.md). usage: monitor_client MODE
 *  badargs    bad requests fail at once with PMIX_ERR_BAD_PARAM (no monitor,
 *             heartbeat without PMIX_MONITOR_HEARTBEAT_TIME, file monitor
 *             without a file, an unknown kind); PMIx_Heartbeat() with nothing
 *             monitoring us is a no-op: "monitor badargs ok"
 *  heartbeat  a heartbeat monitor (id "hb.<rank>", our own status code, time
 *             1 s, 2 drops) of a beating process: no alert while it beats; it
 *             stops: one alert with our code, source = us, PMIX_MONITOR_ID;
 *             no second alert for the same stall; beats resume and stop
 *             again: a second alert (re-armed): "monitor heartbeat ok"
 *  file       a file monitor (4.2 form with PMIX_MONITOR_FILE_SIZE, or with
 *             argument "standard" PMIX_MONITOR_FILE_CHANGES +
 *             PMIX_MONITOR_TARGET_FILES) of a file we append to: no alert
 *             while it grows; it stops growing: one alert naming the file:
 *             "monitor file ok"
 *  cancel     cancel by id, an unknown id (NOT_FOUND), a duplicate id
 *             (PMIX_ERR_EXISTS), cancel all: no alert follows: "monitor cancel ok"
 *  appctrl    with PMIX_MONITOR_APP_CONTROL the alert says so, and pmixrun
 *             (--monitor-kill) leaves the job alone: "monitor appctrl ok"
 *  noappctrl  without it: pmixrun --monitor-kill kills the job after the
 *             alert; the rank never prints "monitor noappctrl survived"
 *  dies       rank 1 asks for a heartbeat monitor, beats once after a fence
 *             and exits without finalizing; once the server has handled its
 *             departure (a probe monitor of it is refused), rank 0 sees no
 *             alert for it in 4 windows: "monitor dies ok"
 *  many       64 heartbeat monitors of one process: one alert for each id
 *             when it stops beating: "monitor many ok"
 *  range      (2 ranks) rank 1 asks for two monitors and never beats: "ns"
 *             (default range, PMIX_RANGE_NAMESPACE) and "self"
 *             (PMIX_RANGE_PROC_LOCAL): rank 1 gets both alerts, rank 0 only
 *             "ns": "monitor range ok"
 *  tool       the same as a tool (PMIx_tool_init, server found by the
 *             environment pmixrun gives): a heartbeat monitor of the tool
 *             alerts it when it does not beat: "monitor tool ok"
 * Every wait is bounded by alarm(); a missing alert kills the rank. */
#include <pmix.h>
#include <pmix_tool.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OUR_CODE (PMIX_EXTERNAL_ERR_BASE - 42)
#define MONITOR_FILE_CHANGES "pmix.monitor.fchg" /* the standard's; not in PMIx 4.2's headers */
#define MONITOR_TARGET_FILES "pmix.monitor.fmon"
#define MAX_ALERTS 256

#define CHECK(cond, ...)                                                 \
    do {                                                                 \
        if (!(cond)) {                                                   \
            fprintf(stderr, "monitor_client rank %u FAILED: ", me.rank); \
            fprintf(stderr, __VA_ARGS__);                                \
            fprintf(stderr, "\n");                                       \
            exit(1);                                                     \
        }                                                                \
    } while (0)

static pmix_proc_t me;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct alert {
    pmix_status_t status;
    pmix_proc_t source;
    char id[64];
    char file[512];
    int app_control; /* -1: absent */
} alerts[MAX_ALERTS];
static int nalerts = 0;
static int only_mine = 1; /* ignore alerts about other processes */

static void on_alert(size_t ref, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)ref, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    const int mine = source != NULL && PMIX_CHECK_PROCID(source, &me);
    if (nalerts < MAX_ALERTS && (mine || !only_mine)) {
        struct alert *a = &alerts[nalerts++];
        memset(a, 0, sizeof *a);
        a->status = status;
        if (source != NULL) a->source = *source;
        a->app_control = -1;
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_MONITOR_ID) && info[i].value.type == PMIX_STRING)
                snprintf(a->id, sizeof a->id, "%s", info[i].value.data.string);
            if (PMIX_CHECK_KEY(&info[i], PMIX_MONITOR_FILE) && info[i].value.type == PMIX_STRING)
                snprintf(a->file, sizeof a->file, "%s", info[i].value.data.string);
            if (PMIX_CHECK_KEY(&info[i], PMIX_MONITOR_APP_CONTROL) &&
                info[i].value.type == PMIX_BOOL)
                a->app_control = info[i].value.data.flag ? 1 : 0;
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

/* Waits (bounded by the alarm) until `n` alerts arrived. */
static void wait_alerts(int n) {
    while (count_alerts() < n) nap_ms(10);
}

/* Beats every 20 ms for `seconds`. */
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

static pmix_status_t heartbeat_monitor(const char *id, uint32_t seconds, uint32_t drops,
                                       int app_control) {
    pmix_info_t mon;
    PMIX_INFO_CONSTRUCT(&mon);
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    pmix_info_t d[4];
    size_t n = 0;
    PMIX_INFO_LOAD(&d[n], PMIX_MONITOR_HEARTBEAT_TIME, &seconds, PMIX_UINT32);
    ++n;
    PMIX_INFO_LOAD(&d[n], PMIX_MONITOR_HEARTBEAT_DROPS, &drops, PMIX_UINT32);
    ++n;
    if (id != NULL) {
        PMIX_INFO_LOAD(&d[n], PMIX_MONITOR_ID, id, PMIX_STRING);
        ++n;
    }
    if (app_control) {
        bool t = true;
        PMIX_INFO_LOAD(&d[n], PMIX_MONITOR_APP_CONTROL, &t, PMIX_BOOL);
        ++n;
    }
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
    if (id != NULL) {
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_CANCEL, id, PMIX_STRING);
    } else {
        PMIX_LOAD_KEY(mon.key, PMIX_MONITOR_CANCEL);
    }
    pmix_status_t rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, NULL, 0, NULL, NULL);
    PMIX_INFO_DESTRUCT(&mon);
    return rc;
}

static int badargs(void) {
    pmix_info_t mon;
    pmix_status_t rc = PMIx_Process_monitor(NULL, OUR_CODE, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "NULL monitor: %s", PMIx_Error_string(rc));
    PMIX_INFO_CONSTRUCT(&mon);
    rc = PMIx_Process_monitor(&mon, OUR_CODE, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "empty monitor: %s", PMIx_Error_string(rc));
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    rc = PMIx_Process_monitor(&mon, OUR_CODE, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "heartbeat without time: %s", PMIx_Error_string(rc));
    rc = PMIx_Process_monitor_nb(&mon, OUR_CODE, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "heartbeat without time (nb): %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&mon);
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_FILE, "", PMIX_STRING);
    rc = PMIx_Process_monitor(&mon, OUR_CODE, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "file monitor without a file: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&mon);
    PMIX_INFO_CONSTRUCT(&mon);
    PMIX_LOAD_KEY(mon.key, MONITOR_FILE_CHANGES);
    rc = PMIx_Process_monitor(&mon, OUR_CODE, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "file changes without target files: %s", PMIx_Error_string(rc));
    PMIX_INFO_LOAD(&mon, "pmix.monitor.nosuchkind", NULL, PMIX_POINTER);
    rc = PMIx_Process_monitor(&mon, OUR_CODE, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "unknown kind: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&mon);
    /* Nothing monitors us: heartbeats are no-ops, and the server keeps serving. */
    for (int i = 0; i < 100000; ++i) PMIx_Heartbeat();
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "fence after heartbeats: %s", PMIx_Error_string(rc));
    printf("monitor badargs ok\n");
    return 0;
}

static int heartbeat(void) {
    char id[32];
    snprintf(id, sizeof id, "hb.%u", me.rank);
    register_handler();
    pmix_status_t rc = heartbeat_monitor(id, 1, 2, 1);
    CHECK(rc == PMIX_SUCCESS, "monitor: %s", PMIx_Error_string(rc));
    beat_for(4.0); /* 4 windows: 2 drops tolerated, beats every 20 ms */
    CHECK(count_alerts() == 0, "an alert while beating");
    wait_alerts(1); /* stopped beating */
    CHECK(alerts[0].status == OUR_CODE, "alert status %d, asked for %d", alerts[0].status,
          OUR_CODE);
    CHECK(PMIX_CHECK_PROCID(&alerts[0].source, &me), "alert source %s:%u", alerts[0].source.nspace,
          alerts[0].source.rank);
    CHECK(strcmp(alerts[0].id, id) == 0, "alert id '%s'", alerts[0].id);
    CHECK(alerts[0].app_control == 1, "PMIX_MONITOR_APP_CONTROL %d", alerts[0].app_control);
    nap_ms(4500); /* 4 more empty windows: the same stall */
    CHECK(count_alerts() == 1, "%d alerts for one stall", count_alerts());
    beat_for(2.0); /* resumed: re-armed */
    wait_alerts(2);
    CHECK(strcmp(alerts[1].id, id) == 0, "second alert id '%s'", alerts[1].id);
    CHECK(cancel(NULL) == PMIX_SUCCESS, "cancel all");
    printf("monitor heartbeat ok\n");
    return 0;
}

static int file(const char *form) {
    char path[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/pmixpp-monitor-%s-%u-%d",
             tmp != NULL && *tmp != '\0' ? tmp : "/tmp", me.nspace, me.rank, (int)getpid());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "create %s", path);
    register_handler();
    pmix_info_t mon, d[3];
    size_t n = 0;
    uint32_t one = 1;
    bool t = true;
    PMIX_INFO_CONSTRUCT(&mon);
    pmix_info_t crit;
    pmix_data_array_t carr;
    char *names[1] = {path};
    pmix_data_array_t farr = {PMIX_STRING, 1, names};
    if (form != NULL && strcmp(form, "standard") == 0) {
        PMIX_INFO_LOAD(&crit, PMIX_MONITOR_FILE_SIZE, &t, PMIX_BOOL);
        carr.type = PMIX_INFO;
        carr.size = 1;
        carr.array = &crit;
        PMIX_INFO_LOAD(&mon, MONITOR_FILE_CHANGES, &carr, PMIX_DATA_ARRAY);
        PMIX_INFO_LOAD(&d[n], MONITOR_TARGET_FILES, &farr, PMIX_DATA_ARRAY);
        ++n;
    } else {
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_FILE, path, PMIX_STRING);
        PMIX_INFO_LOAD(&d[n], PMIX_MONITOR_FILE_SIZE, &t, PMIX_BOOL);
        ++n;
    }
    PMIX_INFO_LOAD(&d[n], PMIX_MONITOR_FILE_CHECK_TIME, &one, PMIX_UINT32);
    ++n;
    uint32_t drops = 1;
    PMIX_INFO_LOAD(&d[n], PMIX_MONITOR_FILE_DROPS, &drops, PMIX_UINT32);
    ++n;
    pmix_status_t rc = PMIx_Process_monitor(&mon, OUR_CODE, d, n, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "file monitor: %s", PMIx_Error_string(rc));
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&d[i]);
    PMIX_INFO_DESTRUCT(&mon);
    if (form != NULL && strcmp(form, "standard") == 0) PMIX_INFO_DESTRUCT(&crit);
    const double end = now() + 5.0;
    while (now() < end) { /* grows every 50 ms */
        fputs("progress\n", f);
        fflush(f);
        nap_ms(50);
    }
    CHECK(count_alerts() == 0, "an alert while the file grew");
    wait_alerts(1);
    CHECK(alerts[0].status == OUR_CODE, "alert status %d", alerts[0].status);
    CHECK(strcmp(alerts[0].file, path) == 0, "alert file '%s', watched %s", alerts[0].file, path);
    CHECK(PMIX_CHECK_PROCID(&alerts[0].source, &me), "alert source");
    fclose(f);
    unlink(path);
    CHECK(cancel(NULL) == PMIX_SUCCESS, "cancel all");
    printf("monitor file ok\n");
    return 0;
}

static int cancels(void) {
    register_handler();
    CHECK(heartbeat_monitor("a", 1, 0, 1) == PMIX_SUCCESS, "monitor a");
    CHECK(heartbeat_monitor("b", 1, 0, 1) == PMIX_SUCCESS, "monitor b");
    CHECK(heartbeat_monitor(NULL, 1, 0, 1) == PMIX_SUCCESS, "monitor without id");
    pmix_status_t rc = heartbeat_monitor("b", 1, 0, 1);
    CHECK(rc == PMIX_ERR_EXISTS, "duplicate id b: %s", PMIx_Error_string(rc));
    rc = cancel("a");
    CHECK(rc == PMIX_SUCCESS, "cancel a: %s", PMIx_Error_string(rc));
    rc = cancel("a");
    CHECK(rc == PMIX_ERR_NOT_FOUND, "cancel a again: %s", PMIx_Error_string(rc));
    rc = cancel("zzz");
    CHECK(rc == PMIX_ERR_NOT_FOUND, "cancel unknown: %s", PMIx_Error_string(rc));
    wait_alerts(2); /* b and the one without id stall; a was cancelled */
    nap_ms(1500);
    CHECK(count_alerts() == 2, "%d alerts, expected 2 (b and the unnamed)", count_alerts());
    for (int i = 0; i < 2; ++i) CHECK(strcmp(alerts[i].id, "a") != 0, "cancelled a alerted");
    rc = cancel(NULL);
    CHECK(rc == PMIX_SUCCESS, "cancel all: %s", PMIx_Error_string(rc));
    PMIx_Heartbeat(); /* would re-arm b: it is gone */
    nap_ms(3000);
    CHECK(count_alerts() == 2, "an alert after cancel all");
    CHECK(heartbeat_monitor("b", 1, 0, 1) == PMIX_SUCCESS, "id b is free again");
    CHECK(cancel("b") == PMIX_SUCCESS, "cancel b");
    printf("monitor cancel ok\n");
    return 0;
}

static int appctrl(int app_control) {
    register_handler();
    CHECK(heartbeat_monitor("ctl", 1, 0, app_control) == PMIX_SUCCESS, "monitor");
    wait_alerts(1);
    CHECK(alerts[0].app_control == app_control, "PMIX_MONITOR_APP_CONTROL %d",
          alerts[0].app_control);
    if (!app_control) {
        nap_ms(20000); /* pmixrun --monitor-kill ends us first */
        printf("monitor noappctrl survived\n");
        return 0;
    }
    nap_ms(1000); /* pmixrun would have acted by now: it did not */
    CHECK(cancel(NULL) == PMIX_SUCCESS, "cancel all");
    printf("monitor appctrl ok\n");
    return 0;
}

/* A PMIx_Process_monitor round trip to the server that changes nothing: a
 * cancel of an id we never used. Everything this process posted before it
 * (a heartbeat) has reached the server when it returns, and every message
 * the server sent us before its reply has been read. */
static void server_round_trip(void) {
    pmix_status_t rc = cancel("never-used");
    CHECK(rc == PMIX_ERR_NOT_FOUND, "cancel of an unknown id: %s", PMIx_Error_string(rc));
}

/* Returns once the server has handled `rank`'s departure: until then a
 * heartbeat monitor of it is accepted (and cancelled at once: its code is not
 * ours and its window an hour, so it never alerts), after it the target is
 * refused with NOT_FOUND. The server answers in order on our connection, so an
 * alert it sent before the departure has reached on_alert by then. Bounded by
 * the alarm. */
static void wait_departed(pmix_rank_t rank) {
    pmix_proc_t target;
    PMIX_LOAD_PROCID(&target, me.nspace, rank);
    pmix_data_array_t procs = {PMIX_PROC, 1, &target};
    uint32_t hour = 3600;
    pmix_data_range_t local = PMIX_RANGE_PROC_LOCAL;
    for (;;) {
        pmix_info_t mon, d[4];
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
        PMIX_INFO_LOAD(&d[0], PMIX_MONITOR_HEARTBEAT_TIME, &hour, PMIX_UINT32);
        PMIX_INFO_LOAD(&d[1], PMIX_MONITOR_ID, "probe", PMIX_STRING);
        PMIX_INFO_LOAD(&d[2], "pmix.monitor.tgtproc", &procs, PMIX_DATA_ARRAY);
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

/* Rank 1's monitor may alert while rank 1 lives (a loaded machine can hold it
 * longer than a window between its last beat and its end): that alert is
 * allowed. What is checked is what follows the server's handling of its
 * departure: its monitor is gone, so no alert in 4 windows. Rank 1 beats just
 * before it ends, which re-arms a monitor that already alerted: a monitor
 * that outlived it would alert again within 2 windows. */
static int dies(void) {
    if (me.rank == 1) {
        CHECK(heartbeat_monitor("dying", 1, 0, 0) == PMIX_SUCCESS, "monitor");
        PMIx_Fence(NULL, 0, NULL, 0);
        PMIx_Heartbeat();
        server_round_trip(); /* the beat has reached the server */
        _exit(0);            /* no finalize: lost */
    }
    only_mine = 0;
    register_handler();
    PMIx_Fence(NULL, 0, NULL, 0);
    wait_departed(1);
    const int before = count_alerts();
    nap_ms(4000); /* 4 windows in which no alert may come */
    CHECK(count_alerts() == before, "%d alert(s) for a process that is gone",
          count_alerts() - before);
    printf("monitor dies ok (%d alert(s) while it lived)\n", before);
    return 0;
}

static int many(void) {
    enum { N = 64 };
    register_handler();
    char id[32];
    for (int i = 0; i < N; ++i) {
        snprintf(id, sizeof id, "m%d", i);
        pmix_status_t rc = heartbeat_monitor(id, 1, 1, 1);
        CHECK(rc == PMIX_SUCCESS, "monitor %s: %s", id, PMIx_Error_string(rc));
    }
    beat_for(3.0);
    CHECK(count_alerts() == 0, "an alert while beating");
    wait_alerts(N);
    int seen[N] = {0};
    for (int i = 0; i < N; ++i) {
        int k = -1;
        CHECK(sscanf(alerts[i].id, "m%d", &k) == 1 && k >= 0 && k < N, "id '%s'", alerts[i].id);
        CHECK(!seen[k]++, "two alerts for %s", alerts[i].id);
    }
    CHECK(cancel(NULL) == PMIX_SUCCESS, "cancel all");
    printf("monitor many ok\n");
    return 0;
}

static int range(void) {
    only_mine = 0;
    register_handler();
    PMIx_Fence(NULL, 0, NULL, 0); /* both handlers are in place */
    if (me.rank == 1) {
        CHECK(heartbeat_monitor("ns", 1, 0, 1) == PMIX_SUCCESS, "monitor ns");
        pmix_info_t mon, d[4];
        uint32_t one = 1;
        bool t = true;
        pmix_data_range_t r = PMIX_RANGE_PROC_LOCAL;
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
        PMIX_INFO_LOAD(&d[0], PMIX_MONITOR_HEARTBEAT_TIME, &one, PMIX_UINT32);
        PMIX_INFO_LOAD(&d[1], PMIX_MONITOR_ID, "self", PMIX_STRING);
        PMIX_INFO_LOAD(&d[2], PMIX_RANGE, &r, PMIX_DATA_RANGE);
        PMIX_INFO_LOAD(&d[3], PMIX_MONITOR_APP_CONTROL, &t, PMIX_BOOL);
        pmix_status_t rc = PMIx_Process_monitor(&mon, OUR_CODE, d, 4, NULL, NULL);
        CHECK(rc == PMIX_SUCCESS, "monitor self: %s", PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&d[1]);
        wait_alerts(2);
        CHECK(cancel(NULL) == PMIX_SUCCESS, "cancel all");
    } else {
        wait_alerts(1);
    }
    /* Rank 1 had both alerts: whatever reached rank 0 was sent before this. */
    PMIx_Fence(NULL, 0, NULL, 0);
    const int n = count_alerts();
    if (me.rank == 0) {
        CHECK(n == 1 && strcmp(alerts[0].id, "ns") == 0, "rank 0 got %d alert(s), first '%s'", n,
              alerts[0].id);
    } else {
        CHECK(n == 2, "rank 1 got %d alerts", n);
    }
    printf("monitor range ok\n");
    return 0;
}

static int tool(void) {
    register_handler();
    pmix_status_t rc = heartbeat_monitor("tool", 1, 0, 1);
    CHECK(rc == PMIX_SUCCESS, "monitor: %s", PMIx_Error_string(rc));
    wait_alerts(1);
    CHECK(PMIX_CHECK_PROCID(&alerts[0].source, &me), "alert source %s:%u", alerts[0].source.nspace,
          alerts[0].source.rank);
    CHECK(strcmp(alerts[0].id, "tool") == 0, "alert id '%s'", alerts[0].id);
    CHECK(cancel(NULL) == PMIX_SUCCESS, "cancel all");
    printf("monitor tool ok\n");
    fflush(stdout);
    PMIx_tool_finalize();
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    alarm(60);
    if (strcmp(argv[1], "tool") == 0) {
        if (PMIx_tool_init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
        return tool();
    }
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    const char *mode = argv[1];
    int rc = 2;
    if (strcmp(mode, "badargs") == 0) rc = badargs();
    if (strcmp(mode, "heartbeat") == 0) rc = heartbeat();
    if (strcmp(mode, "file") == 0) rc = file(argc > 2 ? argv[2] : NULL);
    if (strcmp(mode, "cancel") == 0) rc = cancels();
    if (strcmp(mode, "appctrl") == 0) rc = appctrl(1);
    if (strcmp(mode, "noappctrl") == 0) rc = appctrl(0);
    if (strcmp(mode, "dies") == 0) rc = dies();
    if (strcmp(mode, "many") == 0) rc = many();
    if (strcmp(mode, "range") == 0) rc = range();
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return rc;
}
