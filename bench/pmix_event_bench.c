/* Notify-to-handler latency: rank 0 raises an event with PMIX_RANGE_NAMESPACE
 * carrying its CLOCK_MONOTONIC send time; every rank's handler (rank 0's
 * included) records the time it ran minus that. Events are paced (one every
 * `gap` microseconds) so that the figure is latency, not queueing. Public
 * PMIx API only, so the same source builds against OpenPMIx (bench/run.sh
 * style; see bench/run_events.sh).
 *
 * usage: pmix_event_bench [scale] [gap_us]
 * Output (rank 0): RESULT <name> <nanoseconds>
 *   event_median  median over ranks of each rank's median latency
 *   event_p90     median over ranks of each rank's 90th percentile
 *   event_worst   the highest per-rank median */
#include <pmix.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CODE (PMIX_EXTERNAL_ERR_BASE - 500)
#define T0_KEY "bench.t0"

static uint64_t *samples;
static size_t nsamples, capacity;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_in = PTHREAD_COND_INITIALIZER; /* nsamples reached capacity */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, size_t n, double p) {
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_u64);
    size_t i = (size_t)(p * (double)(n - 1));
    return v[i];
}

static void fail(const char *what, pmix_status_t rc) {
    fprintf(stderr, "pmix_event_bench: %s: %s\n", what, PMIx_Error_string(rc));
    exit(1);
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)results, (void)nresults;
    uint64_t t = now_ns();
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], T0_KEY) && info[i].value.type == PMIX_UINT64) {
            pthread_mutex_lock(&lock);
            if (nsamples < capacity) samples[nsamples++] = t - info[i].value.data.uint64;
            if (nsamples == capacity) pthread_cond_signal(&all_in);
            pthread_mutex_unlock(&lock);
        }
    }
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

int main(int argc, char **argv) {
    long scale = argc > 1 ? atol(argv[1]) : 1;
    long gap_us = argc > 2 ? atol(argv[2]) : 2000;
    if (scale < 1) scale = 1;
    size_t iters = 400 / (size_t)scale;
    if (iters < 5) iters = 5;
    capacity = iters;
    samples = calloc(capacity, sizeof *samples);

    pmix_proc_t me, wild;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_Init", rc);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    if ((rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val)) != PMIX_SUCCESS) fail("job size", rc);
    uint32_t n = val->data.uint32;
    PMIX_VALUE_RELEASE(val);

    pmix_status_t code = CODE;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, handler, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("fence", rc);

    if (me.rank == 0) {
        for (size_t i = 0; i < iters; ++i) {
            pmix_info_t info;
            uint64_t t0 = now_ns();
            PMIX_INFO_LOAD(&info, T0_KEY, &t0, PMIX_UINT64);
            rc = PMIx_Notify_event(CODE, &me, PMIX_RANGE_NAMESPACE, &info, 1, NULL, NULL);
            PMIX_INFO_DESTRUCT(&info);
            if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) fail("PMIx_Notify_event", rc);
            usleep((useconds_t)gap_us);
        }
    }
    /* let the last events arrive (bounded: 5 s after the last one was sent;
     * waiting on a condition variable, not polling, so that the waiting
     * ranks do not add wake-ups of their own to the figure) */
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += me.rank == 0 ? 5 : 5 + (time_t)(iters * (size_t)gap_us / 1000000);
    pthread_mutex_lock(&lock);
    while (nsamples < iters && pthread_cond_timedwait(&all_in, &lock, &deadline) == 0) {
    }
    pthread_mutex_unlock(&lock);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("fence", rc);

    pthread_mutex_lock(&lock);
    uint64_t mine[3] = {pct(samples, nsamples, 0.5), pct(samples, nsamples, 0.9), nsamples};
    pthread_mutex_unlock(&lock);
    pmix_value_t v;
    pmix_byte_object_t bo = {.bytes = (char *)mine, .size = sizeof mine};
    PMIX_VALUE_LOAD(&v, &bo, PMIX_BYTE_OBJECT);
    if ((rc = PMIx_Put(PMIX_GLOBAL, "bench.ev", &v)) != PMIX_SUCCESS) fail("put", rc);
    PMIX_VALUE_DESTRUCT(&v);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) fail("commit", rc);
    pmix_info_t collect;
    bool t = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    if ((rc = PMIx_Fence(NULL, 0, &collect, 1)) != PMIX_SUCCESS) fail("fence collect", rc);

    if (me.rank == 0) {
        uint64_t *med = calloc(n, sizeof *med), *p90 = calloc(n, sizeof *p90), worst = 0, lost = 0;
        for (uint32_t r = 0; r < n; ++r) {
            pmix_proc_t peer;
            PMIX_LOAD_PROCID(&peer, me.nspace, r);
            if ((rc = PMIx_Get(&peer, "bench.ev", NULL, 0, &val)) != PMIX_SUCCESS) fail("get", rc);
            uint64_t theirs[3];
            memcpy(theirs, val->data.bo.bytes, sizeof theirs);
            PMIX_VALUE_RELEASE(val);
            med[r] = theirs[0];
            p90[r] = theirs[1];
            if (theirs[0] > worst) worst = theirs[0];
            lost += iters - theirs[2];
        }
        printf("RESULT event_median %llu\n", (unsigned long long)pct(med, n, 0.5));
        printf("RESULT event_p90 %llu\n", (unsigned long long)pct(p90, n, 0.5));
        printf("RESULT event_worst %llu\n", (unsigned long long)worst);
        printf("INFO %u receivers, %zu events each, %llu not received\n", n, iters,
               (unsigned long long)lost);
        free(med);
        free(p90);
    }
    PMIx_Finalize(NULL, 0);
    free(samples);
    return 0;
}
