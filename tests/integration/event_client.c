/* Event notification under pmixrun (framework/event/README.md). One program,
 * one mode per behaviour; each prints "<mode> ok" lines that run_case.py
 * counts, or "<mode> FAILED: why" and exits 1. Every wait is bounded
 * (wait_for: 30 s); nothing asserts on time.
 * usage: event_client MODE */
#include <pmix.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CODE_A (PMIX_EXTERNAL_ERR_BASE - 1)
#define CODE_B (PMIX_EXTERNAL_ERR_BASE - 2)
#define CODE_C (PMIX_EXTERNAL_ERR_BASE - 3)
#define CODE_J (PMIX_EXTERNAL_ERR_BASE - 10)

static pmix_proc_t me;
static uint32_t nprocs;
static const char *mode;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static char trace[4096]; /* handler names, in calling order */
static int calls;

static void fail(const char *why, int rc) {
    printf("%s FAILED: rank %u: %s (%s)\n", mode, me.rank, why, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

static void record(const char *name) {
    pthread_mutex_lock(&lock);
    strncat(trace, name, sizeof trace - strlen(trace) - 1);
    strncat(trace, " ", sizeof trace - strlen(trace) - 1);
    ++calls;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
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

static void reset(void) {
    pthread_mutex_lock(&lock);
    trace[0] = '\0';
    calls = 0;
    pthread_mutex_unlock(&lock);
}

static void fence(void) {
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("fence", rc);
}

/* A handler that records the name in its cbdata... handlers get no cbdata:
 * the name is found from the id. */
#define MAXH 32
static char names[MAXH][32];

static void named(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                  size_t ninfo, pmix_info_t results[], size_t nresults,
                  pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    record(id < MAXH ? names[id] : "?");
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_NO_ACTION_TAKEN, NULL, 0, NULL, NULL, cbdata);
}

/* Registers `named` (blocking form) with a name and one optional directive. */
static pmix_status_t reg(pmix_status_t *codes, size_t ncodes, const char *name, const char *key,
                         const char *value) {
    pmix_info_t info[2];
    size_t n = 0;
    PMIX_INFO_LOAD(&info[n], PMIX_EVENT_HDLR_NAME, name, PMIX_STRING);
    ++n;
    if (key != NULL) {
        if (value != NULL) {
            PMIX_INFO_LOAD(&info[n], key, value, PMIX_STRING);
        } else {
            bool t = true;
            PMIX_INFO_LOAD(&info[n], key, &t, PMIX_BOOL);
        }
        ++n;
    }
    pmix_status_t rc = PMIx_Register_event_handler(codes, ncodes, info, n, named, NULL, NULL);
    if (rc >= 0 && rc < MAXH) snprintf(names[rc], sizeof names[rc], "%s", name);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    return rc;
}

static void notify(pmix_status_t code, pmix_data_range_t range, pmix_info_t *info, size_t ninfo) {
    pmix_status_t rc = PMIx_Notify_event(code, NULL, range, info, ninfo, NULL, NULL);
    if (rc != PMIX_SUCCESS) fail("notify", rc);
}

/* The non-blocking form: its callback runs once the server answered, which
 * it does after it routed (and cached) the event (docs/events.md). The
 * blocking form returns once the request is written, so the server may
 * route it after a later registration of another process. */
static _Atomic int routed_done;
static void on_routed(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    if (status != PMIX_SUCCESS) fail("notify callback", status);
    routed_done = 1;
}
static void notify_routed(pmix_status_t code, pmix_data_range_t range) {
    routed_done = 0;
    pmix_status_t rc = PMIx_Notify_event(code, NULL, range, NULL, 0, on_routed, NULL);
    if (rc != PMIX_SUCCESS) fail("notify", rc);
    for (int i = 0; i < 30000 && !routed_done; ++i) usleep(1000);
    if (!routed_done) fail("notify callback missing", PMIX_ERR_TIMEOUT);
}

static void expect_trace(const char *want) {
    pthread_mutex_lock(&lock);
    int ok = strcmp(trace, want) == 0;
    pthread_mutex_unlock(&lock);
    if (!ok) {
        printf("%s FAILED: rank %u: handlers ran as '%s', expected '%s'\n", mode, me.rank, trace,
               want);
        fflush(stdout);
        exit(1);
    }
}

/* --- order: categories, FIRST/LAST, BEFORE/AFTER, default prepend; through the server --- */
static void mode_order(void) {
    pmix_status_t a = CODE_A, ab[2] = {CODE_A, CODE_B};
    if (reg(NULL, 0, "dflt1", NULL, NULL) < 0) fail("reg dflt1", -1);
    if (reg(NULL, 0, "dflt2", NULL, NULL) < 0) fail("reg dflt2", -1); /* prepends */
    if (reg(ab, 2, "multi1", NULL, NULL) < 0) fail("reg multi1", -1);
    if (reg(&a, 1, "single1", NULL, NULL) < 0) fail("reg single1", -1);
    if (reg(&a, 1, "single2", NULL, NULL) < 0) fail("reg single2", -1); /* prepends */
    if (reg(&a, 1, "single3", PMIX_EVENT_HDLR_APPEND, NULL) < 0) fail("reg single3", -1);
    if (reg(NULL, 0, "last", PMIX_EVENT_HDLR_LAST, NULL) < 0) fail("reg last", -1);
    if (reg(ab, 2, "first", PMIX_EVENT_HDLR_FIRST, NULL) < 0) fail("reg first", -1);
    if (reg(&a, 1, "before1", PMIX_EVENT_HDLR_BEFORE, "single1") < 0) fail("reg before1", -1);
    if (reg(NULL, 0, "after2", PMIX_EVENT_HDLR_AFTER, "dflt2") < 0) fail("reg after2", -1);
    fence();
    if (me.rank == 0) notify(CODE_A, PMIX_RANGE_NAMESPACE, NULL, 0);
    if (!wait_for(10)) fail("not every handler ran", PMIX_ERR_TIMEOUT);
    expect_trace("first single2 before1 single1 single3 multi1 dflt2 after2 dflt1 last ");
    printf("order ok: rank %u\n", me.rank);
}

/* --- errors: the RFC's registration errors; the blocking form returns the id --- */
static void mode_errors(void) {
    pmix_status_t a = CODE_A, b = CODE_B, ab[2] = {CODE_A, CODE_B};
    pmix_status_t id1 = reg(&a, 1, "h1", NULL, NULL);
    pmix_status_t id2 = reg(&b, 1, "h2", PMIX_EVENT_HDLR_FIRST, NULL);
    if (id1 < 0 || id2 < 0 || id1 == id2) fail("blocking registration returns distinct ids", id1);
    if (reg(&b, 1, "h1", NULL, NULL) >= 0) fail("duplicate name accepted", 0);
    if (reg(&a, 1, "x1", PMIX_EVENT_HDLR_FIRST, NULL) >= 0) fail("second FIRST accepted", 0);
    if (reg(NULL, 0, "l1", PMIX_EVENT_HDLR_LAST, NULL) < 0) fail("LAST refused", -1);
    if (reg(&a, 1, "x2", PMIX_EVENT_HDLR_LAST, NULL) >= 0) fail("second LAST accepted", 0);
    if (reg(&a, 1, "x3", PMIX_EVENT_HDLR_BEFORE, "nobody") >= 0) fail("BEFORE unknown accepted", 0);
    if (reg(ab, 2, "x4", PMIX_EVENT_HDLR_AFTER, "h1") >= 0)
        fail("AFTER other category accepted", 0);
    if (reg(&a, 1, "x5", PMIX_EVENT_HDLR_BEFORE, "h2") >= 0) fail("BEFORE the FIRST accepted", 0);
    if (reg(&a, 1, "x6", PMIX_EVENT_HDLR_AFTER, "l1") >= 0) fail("AFTER the LAST accepted", 0);
    if (reg(&a, 1, "f1", PMIX_EVENT_HDLR_FIRST_IN_CATEGORY, NULL) < 0)
        fail("FIRST_IN_CATEGORY", -1);
    if (reg(&b, 1, "x7", PMIX_EVENT_HDLR_FIRST_IN_CATEGORY, NULL) >= 0)
        fail("second FIRST_IN_CATEGORY", 0);
    /* Deregistering the FIRST re-opens the position (standard). */
    if (PMIx_Deregister_event_handler((size_t)id2, NULL, NULL) != PMIX_SUCCESS)
        fail("deregister", -1);
    if (reg(&a, 1, "x8", PMIX_EVENT_HDLR_FIRST, NULL) < 0)
        fail("FIRST after its deregistration", -1);
    if (PMIx_Deregister_event_handler(9999, NULL, NULL) != PMIX_ERR_BAD_PARAM)
        fail("deregister unknown", -1);
    printf("errors ok: rank %u\n", me.rank);
}

/* --- chain: results, modification, ACTION_COMPLETE, WANT_TERMINATION + REQD --- */
static int seen_ok;
static void chain1(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo;
    static pmix_info_t out[2];
    bool t = true;
    if (nresults != 0 || results != NULL) seen_ok = -1;
    PMIX_INFO_LOAD(&out[0], "test.note", "from chain1", PMIX_STRING);
    PMIX_INFO_LOAD(&out[1], PMIX_EVENT_WANT_TERMINATION, &t, PMIX_BOOL);
    PMIX_INFO_REQUIRED(&out[1]);
    record("c1");
    cbfunc(PMIX_EVENT_PARTIAL_ACTION_TAKEN, out, 2, NULL, NULL, cbdata);
}
static void chain2(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo;
    /* c1's status entry, its note, its required WANT_TERMINATION */
    if (nresults == 3 && PMIX_CHECK_KEY(&results[0], "c1") &&
        results[0].value.type == PMIX_STATUS &&
        results[0].value.data.status == PMIX_EVENT_PARTIAL_ACTION_TAKEN &&
        PMIX_CHECK_KEY(&results[1], "test.note") &&
        PMIX_CHECK_KEY(&results[2], PMIX_EVENT_WANT_TERMINATION)) {
        ++seen_ok;
    }
    results[1].key[0] = '\0'; /* drop c1's note for later handlers */
    static pmix_info_t out[1];
    bool t = true;
    PMIX_INFO_LOAD(&out[0], PMIX_EVENT_NO_TERMINATION, &t, PMIX_BOOL); /* cannot override REQD */
    record("c2");
    cbfunc(PMIX_SUCCESS, out, 1, NULL, NULL, cbdata);
}
static void chain3(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo;
    int note = 0, want = 0, noterm = 0;
    for (size_t i = 0; i < nresults; ++i) {
        if (PMIX_CHECK_KEY(&results[i], "test.note")) ++note;
        if (PMIX_CHECK_KEY(&results[i], PMIX_EVENT_WANT_TERMINATION)) ++want;
        if (PMIX_CHECK_KEY(&results[i], PMIX_EVENT_NO_TERMINATION)) ++noterm;
    }
    if (note == 0 && want == 1 && noterm == 0 && nresults == 3) ++seen_ok;
    record("c3");
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}
static void chain4(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    record("c4");
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}
static void mode_chain(void) {
    pmix_notification_fn_t fns[4] = {chain1, chain2, chain3, chain4};
    const char *hn[4] = {"c1", "c2", "c3", "c4"};
    pmix_status_t a = CODE_A;
    for (int i = 0; i < 4; ++i) {
        pmix_info_t info[2];
        bool t = true;
        PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_NAME, hn[i], PMIX_STRING);
        PMIX_INFO_LOAD(&info[1], PMIX_EVENT_HDLR_APPEND, &t, PMIX_BOOL);
        if (PMIx_Register_event_handler(&a, 1, info, 2, fns[i], NULL, NULL) < 0)
            fail("register", -1);
        PMIX_INFO_DESTRUCT(&info[0]);
        PMIX_INFO_DESTRUCT(&info[1]);
        PMIX_INFO_DESTRUCT(&info[0]);
        PMIX_INFO_DESTRUCT(&info[1]);
    }
    notify(CODE_A, PMIX_RANGE_PROC_LOCAL, NULL, 0);
    if (!wait_for(3)) fail("chain did not run", PMIX_ERR_TIMEOUT);
    sleep(1); /* c4 must not run: give it the chance to show up */
    expect_trace("c1 c2 c3 ");
    if (seen_ok != 2) fail("results were not as expected", seen_ok);
    printf("chain ok: rank %u\n", me.rank);
}

/* --- retobj: the object given with PMIX_EVENT_RETURN_OBJECT is in the handler's info --- */
static int retobj_target;
static void *retobj_seen = NULL;
static int retobj_detail = 0;
static void retobj_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                           pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT) &&
            info[i].value.type == PMIX_POINTER)
            retobj_seen = info[i].value.data.ptr;
        if (PMIX_CHECK_KEY(&info[i], "test.detail")) retobj_detail = 1;
    }
    record("r");
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}
static void mode_retobj(void) {
    pmix_status_t a = CODE_A;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_EVENT_RETURN_OBJECT, &retobj_target, PMIX_POINTER);
    if (PMIx_Register_event_handler(&a, 1, &info, 1, retobj_handler, NULL, NULL) < 0)
        fail("register", -1);
    PMIX_INFO_DESTRUCT(&info);
    pmix_info_t detail;
    PMIX_INFO_LOAD(&detail, "test.detail", "x", PMIX_STRING);
    notify(CODE_A, PMIX_RANGE_PROC_LOCAL, &detail, 1);
    PMIX_INFO_DESTRUCT(&detail);
    if (!wait_for(1)) fail("handler did not run", PMIX_ERR_TIMEOUT);
    if (retobj_seen != &retobj_target) fail("no PMIX_EVENT_RETURN_OBJECT in the info", -1);
    if (!retobj_detail) fail("the event's own info is missing", -1);
    printf("retobj ok: rank %u\n", me.rank);
}

/* --- ranges: NAMESPACE, CUSTOM, LOCAL, GLOBAL from rank 0; RM reaches no client --- */
static pmix_proc_t last_source;
static void ranged(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)info, (void)ninfo, (void)results, (void)nresults;
    char name[32];
    snprintf(name, sizeof name, "%d", CODE_A - status);
    pthread_mutex_lock(&lock);
    last_source = *source;
    pthread_mutex_unlock(&lock);
    record(name);
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}
static void mode_ranges(void) {
    if (PMIx_Register_event_handler(NULL, 0, NULL, 0, ranged, NULL, NULL) < 0) fail("register", -1);
    fence();
    if (me.rank == 0) {
        pmix_info_t custom;
        pmix_proc_t target;
        PMIX_LOAD_PROCID(&target, me.nspace, 1);
        pmix_data_array_t da = {.type = PMIX_PROC, .size = 1, .array = &target};
        PMIX_INFO_LOAD(&custom, PMIX_EVENT_CUSTOM_RANGE, &da, PMIX_DATA_ARRAY);
        notify(CODE_A - 0, PMIX_RANGE_RM, NULL, 0);        /* "0": nobody */
        notify(CODE_A - 1, PMIX_RANGE_CUSTOM, &custom, 1); /* "1": rank 1 */
        notify(CODE_A - 2, PMIX_RANGE_NAMESPACE, NULL, 0); /* "2": everyone */
        notify(CODE_A - 3, PMIX_RANGE_LOCAL, NULL, 0);     /* "3": everyone */
        notify(CODE_A - 4, PMIX_RANGE_GLOBAL, NULL, 0);    /* "4": everyone */
        PMIX_INFO_DESTRUCT(&custom);
    }
    int want = me.rank == 1 ? 4 : 3;
    if (!wait_for(want)) fail("events missing", PMIX_ERR_TIMEOUT);
    fence();
    expect_trace(me.rank == 1 ? "1 2 3 4 " : "2 3 4 ");
    pthread_mutex_lock(&lock);
    int src_ok = strcmp(last_source.nspace, me.nspace) == 0 && last_source.rank == 0;
    pthread_mutex_unlock(&lock);
    if (!src_ok) fail("wrong source", 0);
    printf("ranges ok: rank %u\n", me.rank);
}

/* --- bigevent: an event whose info is larger than the wire's compression
 * threshold (64 KiB by default), routed to every rank. The server builds the
 * routed frame once and writes it as is to every receiver; a peer that may be
 * remote (tcp) gets the body compressed instead, through the channel's own
 * send. Either way every rank's handler sees the same bytes. --- */
#define BIG_KEY "evtest.big"
#define BIG_SIZE (100 * 1024)
static atomic_int big_ok = 0;
static void big_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                        pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                        pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)results, (void)nresults;
    int good = 0;
    for (size_t i = 0; i < ninfo; ++i) {
        if (!PMIX_CHECK_KEY(&info[i], BIG_KEY) || info[i].value.type != PMIX_BYTE_OBJECT) continue;
        const pmix_byte_object_t *bo = &info[i].value.data.bo;
        good = bo->size == BIG_SIZE;
        for (size_t b = 0; good && b < bo->size; ++b)
            good = (unsigned char)bo->bytes[b] == (unsigned char)(b % 251 + b / 4096);
    }
    atomic_store(&big_ok, good ? 1 : -1);
    record("big");
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}
static void mode_bigevent(void) {
    pmix_status_t code = CODE_B;
    if (PMIx_Register_event_handler(&code, 1, NULL, 0, big_handler, NULL, NULL) < 0)
        fail("register", -1);
    fence();
    if (me.rank == 0) {
        char *bytes = malloc(BIG_SIZE);
        if (bytes == NULL) fail("malloc", PMIX_ERR_NOMEM);
        for (size_t b = 0; b < BIG_SIZE; ++b) bytes[b] = (char)(unsigned char)(b % 251 + b / 4096);
        pmix_byte_object_t bo = {.bytes = bytes, .size = BIG_SIZE};
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, BIG_KEY, &bo, PMIX_BYTE_OBJECT);
        notify(CODE_B, PMIX_RANGE_NAMESPACE, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
        free(bytes);
    }
    if (!wait_for(1)) fail("event missing", PMIX_ERR_TIMEOUT);
    if (atomic_load(&big_ok) != 1) fail("the event's bytes differ", PMIX_ERR_BAD_PARAM);
    fence();
    printf("bigevent ok: rank %u\n", me.rank);
}

/* --- hybrid: two threads register for one code; PMIX_RANGE=PROC_LOCAL on a
 * registration accepts only this process's own events --- */
static void *thread_reg(void *arg) {
    pmix_status_t a = CODE_A;
    if (reg(&a, 1, (const char *)arg, NULL, NULL) < 0) fail("thread registration", -1);
    return NULL;
}
static void mode_hybrid(void) {
    pthread_t t1, t2;
    pthread_create(&t1, NULL, thread_reg, "thr1");
    pthread_create(&t2, NULL, thread_reg, "thr2");
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    pmix_status_t a = CODE_A;
    pmix_data_range_t own = PMIX_RANGE_PROC_LOCAL;
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_NAME, "ownonly", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_RANGE, &own, PMIX_DATA_RANGE);
    pmix_status_t id = PMIx_Register_event_handler(&a, 1, info, 2, named, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (id < 0) fail("register ownonly", id);
    snprintf(names[id], sizeof names[id], "own");
    fence();
    /* Rank 1's event: both thread handlers, not "own". */
    if (me.rank == 1) notify(CODE_A, PMIX_RANGE_NAMESPACE, NULL, 0);
    /* Wait for the whole chain: a fence may complete in shared memory,
     * without the progress thread, so it does not order after the chain. */
    if (!wait_for(me.rank == 1 ? 3 : 2)) fail("namespace event missing", PMIX_ERR_TIMEOUT);
    fence();
    pthread_mutex_lock(&lock);
    int both = strstr(trace, "thr1") != NULL && strstr(trace, "thr2") != NULL;
    int own_seen = strstr(trace, "own") != NULL;
    pthread_mutex_unlock(&lock);
    if (!both || (me.rank != 1 && own_seen) || calls != (me.rank == 1 ? 3 : 2))
        fail("namespace event reached the wrong handlers", 0);
    reset();
    /* One thread raises a PROC_LOCAL event: every handler of this process, "own" included. */
    notify(CODE_A, PMIX_RANGE_PROC_LOCAL, NULL, 0);
    if (!wait_for(3)) fail("proc-local event missing", PMIX_ERR_TIMEOUT);
    printf("hybrid ok: rank %u\n", me.rank);
}

/* --- late: events before a registration are replayed to it, oldest first,
 * and only after its registration callback ran --- */
static _Atomic int reg_done;
static void late_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                         pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    record(!reg_done          ? "EARLY"
           : status == CODE_A ? "A"
           : status == CODE_B ? "B"
           : status == CODE_C ? "C"
                              : "?");
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}
static void on_reg(pmix_status_t status, size_t id, void *cbdata) {
    (void)id, (void)cbdata;
    if (status != PMIX_SUCCESS) fail("registration", status);
    usleep(100000); /* an event delivered before this returns would be seen as EARLY */
    reg_done = 1;
}
static void mode_late(int expect_all) {
    if (me.rank == 0) {
        /* Routed before rank 1 registers (a registration completes before
         * its server answers it, and the server sends a client every event
         * in range: an event routed after that registration, or read by
         * rank 1 after it, reaches the handler live; docs/events.md,
         * "Registration without a round trip"). */
        notify_routed(CODE_A, PMIX_RANGE_GLOBAL);
        notify_routed(CODE_B, PMIX_RANGE_GLOBAL);
        notify_routed(CODE_C, PMIX_RANGE_GLOBAL);
    }
    /* Through the server (collecting, every rank named: a collecting fence
     * over the job's wildcard takes the shared-memory barrier): its answer
     * comes to rank 1 behind the events, so rank 1 has read them before it
     * registers; an event it read after its registration completed would
     * reach the handler live. */
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_proc_t *all = calloc(nprocs, sizeof *all);
    if (all == NULL) fail("calloc", PMIX_ERR_NOMEM);
    for (uint32_t r = 0; r < nprocs; ++r) PMIX_LOAD_PROCID(&all[r], me.nspace, r);
    pmix_status_t rc = PMIx_Fence(all, nprocs, &collect, 1);
    free(all);
    PMIX_INFO_DESTRUCT(&collect);
    if (rc != PMIX_SUCCESS) fail("collecting fence", rc);
    if (me.rank == 1) {
        if (PMIx_Register_event_handler(NULL, 0, NULL, 0, late_handler, on_reg, NULL) !=
            PMIX_SUCCESS)
            fail("register", -1);
        if (!wait_for(expect_all ? 3 : 2)) fail("replayed events missing", PMIX_ERR_TIMEOUT);
        sleep(1);
        expect_trace(expect_all ? "A B C " : "B C ");
    }
    fence();
    printf("late ok: rank %u\n", me.rank);
}

/* --- jobevent: a job event waits in the cache for every local client, even
 * when environment events fill the ring (PMIX_MCA_evcache_ring_size=2) --- */
static void mode_jobevent(void) {
    if (me.rank == 0) {
        notify(CODE_J, PMIX_RANGE_NAMESPACE, NULL, 0);
        for (int i = 0; i < 5; ++i) notify(CODE_A, PMIX_RANGE_GLOBAL, NULL, 0);
    }
    fence();
    if (me.rank != 0) {
        pmix_status_t j = CODE_J;
        if (PMIx_Register_event_handler(&j, 1, NULL, 0, ranged, NULL, NULL) < 0)
            fail("register", -1);
        if (!wait_for(1)) fail("cached job event missing", PMIX_ERR_TIMEOUT);
        expect_trace("9 "); /* CODE_A - CODE_J */
    }
    fence();
    printf("jobevent ok: rank %u\n", me.rank);
}

/* --- levels: JOB_LEVEL / ENVIRO_LEVEL and AFFECTED_PROC on a registration --- */
static void mode_levels(void) {
    pmix_status_t a = CODE_A;
    pmix_info_t info[2];
    bool t = true;
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_NAME, "joblvl", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], "pmix.evjob", &t, PMIX_BOOL);
    pmix_status_t id = PMIx_Register_event_handler(&a, 1, info, 2, named, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    snprintf(names[id], sizeof names[id], "job");
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_NAME, "envlvl", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], "pmix.evenv", &t, PMIX_BOOL);
    id = PMIx_Register_event_handler(&a, 1, info, 2, named, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    snprintf(names[id], sizeof names[id], "env");
    pmix_proc_t r1;
    PMIX_LOAD_PROCID(&r1, me.nspace, 1);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_NAME, "aff", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_AFFECTED_PROC, &r1, PMIX_PROC);
    id = PMIx_Register_event_handler(&a, 1, info, 2, named, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    snprintf(names[id], sizeof names[id], "aff");
    fence();
    if (me.rank == 0) {
        /* an environment event: SMS source, no target */
        pmix_proc_t sms;
        memset(&sms, 0, sizeof sms);
        sms.rank = PMIX_RANK_UNDEF;
        if (PMIx_Notify_event(CODE_A, &sms, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL) != PMIX_SUCCESS)
            fail("notify env", -1);
        fence();
        /* a job event affecting rank 1 */
        pmix_info_t aff;
        PMIX_INFO_LOAD(&aff, PMIX_EVENT_AFFECTED_PROC, &r1, PMIX_PROC);
        notify(CODE_A, PMIX_RANGE_NAMESPACE, &aff, 1);
        PMIX_INFO_DESTRUCT(&aff);
    } else {
        fence();
    }
    if (!wait_for(3)) fail("events missing", PMIX_ERR_TIMEOUT);
    /* handlers prepend: aff, env, job order within the category */
    expect_trace("env aff job ");
    printf("levels ok: rank %u\n", me.rank);
}

/* --- lost: the server dies; PMIX_ERR_LOST_CONNECTION reaches the handler --- */
static void mode_lost(void) {
    pmix_status_t codes[1] = {PMIX_ERR_LOST_CONNECTION};
    if (reg(codes, 1, "lost", NULL, NULL) < 0) fail("register", -1);
    kill(getppid(), SIGKILL); /* pmixrun */
    if (!wait_for(1)) fail("no lost-connection event", PMIX_ERR_TIMEOUT);
    printf("lost ok: rank %u\n", me.rank);
    fflush(stdout);
    _exit(0);
}

/* --- aborted / terminated: pmixrun's events about a peer --- */
static pmix_rank_t affected_rank = PMIX_RANK_UNDEF;
static void peer_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                         pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC)
            affected_rank = info[i].value.data.proc->rank;
    }
    record("peer");
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}
static void mode_peer(pmix_status_t code, int aborting) {
    signal(SIGTERM, SIG_IGN); /* pmixrun terminates the job after an abort */
    pmix_status_t c = code;
    if (PMIx_Register_event_handler(&c, 1, NULL, 0, peer_handler, NULL, NULL) < 0)
        fail("register", -1);
    fence();
    if (me.rank == nprocs - 1) {
        if (aborting) PMIx_Abort(7, "event_client: giving up", NULL, 0);
        _exit(3);
    }
    if (!wait_for(1)) fail("no event about the peer", PMIX_ERR_TIMEOUT);
    if (affected_rank != nprocs - 1) fail("wrong affected proc", (int)affected_rank);
    printf("%s ok: rank %u\n", mode, me.rank);
    fflush(stdout);
    _exit(0);
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    mode = argv[1];
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("init", rc);
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val) != PMIX_SUCCESS) fail("job size", -1);
    nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    if (strcmp(mode, "order") == 0)
        mode_order();
    else if (strcmp(mode, "errors") == 0)
        mode_errors();
    else if (strcmp(mode, "chain") == 0)
        mode_chain();
    else if (strcmp(mode, "retobj") == 0)
        mode_retobj();
    else if (strcmp(mode, "ranges") == 0)
        mode_ranges();
    else if (strcmp(mode, "bigevent") == 0)
        mode_bigevent();
    else if (strcmp(mode, "hybrid") == 0)
        mode_hybrid();
    else if (strcmp(mode, "late") == 0)
        mode_late(1);
    else if (strcmp(mode, "late_ring2") == 0) {
        mode = "late";
        mode_late(0);
    } else if (strcmp(mode, "jobevent") == 0)
        mode_jobevent();
    else if (strcmp(mode, "levels") == 0)
        mode_levels();
    else if (strcmp(mode, "lost") == 0)
        mode_lost();
    else if (strcmp(mode, "aborted") == 0)
        mode_peer(PMIX_ERR_PROC_ABORTED, 1);
    else if (strcmp(mode, "terminated") == 0)
        mode_peer(PMIX_EVENT_PROC_TERMINATED, 0);
    else
        fail("unknown mode", PMIX_ERR_BAD_PARAM);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
