/* Many application threads calling the client API at once (a
 * PMIX_THREAD_MULTIPLE-style application), for ThreadSanitizer (issue 19,
 * deliverable 3; docs/building.md, "ThreadSanitizer"): the other tests call
 * the library from one thread, so the paths where a caller's thread meets the
 * progress thread (a Put and a Commit beside another thread's Get, Get_nb's
 * callback, a Notify_event written from the caller's thread while others are
 * queued) ran under TSan one at a time.
 *
 * Each rank starts kThreads threads after a fence; each thread, kRounds times:
 * Puts a value of its own, Gets PMIX_JOB_SIZE (blocking) and PMIX_UNIV_SIZE
 * (Get_nb, its callback awaited), notifies an event to the namespace, and
 * every 8th round Commits. Then a collecting fence, and every rank reads every
 * peer's every value; each rank's handler must see every peer's events.
 * Prints "threads ok" per rank, or "threads FAILED: why". alarm() bounds the
 * whole run; nothing asserts on time. usage: threads_client */
#include <pmix.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CODE_T (PMIX_EXTERNAL_ERR_BASE - 91)
enum { kThreads = 4, kRounds = 40, kBound = 100 };

static pmix_proc_t me;
static uint32_t nprocs;
static _Atomic unsigned peer_events = 0; /* events from another rank */

static void fail(const char *why, pmix_status_t rc) {
    printf("threads FAILED: rank %u: %s (%s)\n", me.rank, why, PMIx_Error_string(rc));
    fflush(stdout);
    _exit(1);
}

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "threads FAILED: a wait passed its bound\n";
    if (write(STDOUT_FILENO, msg, sizeof msg - 1) < 0) _exit(2);
    _exit(2);
}

static uint64_t value_of(pmix_rank_t rank, int t, int i) {
    return ((uint64_t)rank << 32) | ((uint64_t)t << 16) | (uint64_t)i;
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)info, (void)ninfo, (void)results, (void)nresults;
    if (source != NULL && source->rank != me.rank) atomic_fetch_add(&peer_events, 1);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* One Get_nb in flight per thread: its slot is static, so the callback never
 * writes into a frame that has returned. */
struct slot {
    _Atomic int done; /* stored last by the callback */
    pmix_status_t status;
    uint32_t value;
};
static struct slot slots[kThreads];

static void on_value(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    struct slot *s = cbdata;
    s->status = status;
    s->value =
        (status == PMIX_SUCCESS && kv != NULL && kv->type == PMIX_UINT32) ? kv->data.uint32 : 0;
    atomic_store(&s->done, 1);
}

static void *worker(void *arg) {
    const int t = (int)(intptr_t)arg;
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    for (int i = 0; i < kRounds; ++i) {
        char key[32];
        snprintf(key, sizeof key, "thr.%d.%d", t, i);
        pmix_value_t v;
        v.type = PMIX_UINT64;
        v.data.uint64 = value_of(me.rank, t, i);
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
        if (rc != PMIX_SUCCESS) fail("PMIx_Put", rc);

        pmix_value_t *got = NULL;
        rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &got);
        if (rc != PMIX_SUCCESS) fail("PMIx_Get(PMIX_JOB_SIZE)", rc);
        if (got->type != PMIX_UINT32 || got->data.uint32 != nprocs)
            fail("PMIX_JOB_SIZE changed", PMIX_ERROR);
        PMIX_VALUE_RELEASE(got);

        struct slot *s = &slots[t];
        atomic_store(&s->done, 0);
        rc = PMIx_Get_nb(&job, PMIX_UNIV_SIZE, NULL, 0, on_value, s);
        if (rc != PMIX_SUCCESS) fail("PMIx_Get_nb(PMIX_UNIV_SIZE)", rc);
        while (!atomic_load(&s->done)) usleep(100); /* bounded by alarm() */
        if (s->status != PMIX_SUCCESS) fail("PMIx_Get_nb's callback", s->status);
        if (s->value < nprocs) fail("PMIX_UNIV_SIZE below the job's size", PMIX_ERROR);

        rc = PMIx_Notify_event(CODE_T, &me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
        if (rc != PMIX_SUCCESS) fail("PMIx_Notify_event", rc);

        if (i % 8 == 7 && (rc = PMIx_Commit()) != PMIX_SUCCESS) fail("PMIx_Commit", rc);
    }
    return NULL;
}

int main(void) {
    signal(SIGALRM, on_alarm);
    alarm(kBound);
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_Init", rc);
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *got = NULL;
    if ((rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &got)) != PMIX_SUCCESS)
        fail("PMIx_Get(PMIX_JOB_SIZE)", rc);
    nprocs = got->data.uint32;
    PMIX_VALUE_RELEASE(got);

    pmix_status_t code = CODE_T;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);
    /* Every rank's handler is in place before any rank notifies. */
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("the first PMIx_Fence", rc);

    pthread_t threads[kThreads];
    for (int t = 0; t < kThreads; ++t)
        if (pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t) != 0)
            fail("pthread_create", PMIX_ERROR);
    for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);

    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) fail("PMIx_Commit", rc);
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (rc != PMIX_SUCCESS) fail("the collecting PMIx_Fence", rc);

    for (pmix_rank_t r = 0; r < nprocs; ++r) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        for (int t = 0; t < kThreads; ++t) {
            for (int i = 0; i < kRounds; ++i) {
                char key[32];
                snprintf(key, sizeof key, "thr.%d.%d", t, i);
                if ((rc = PMIx_Get(&peer, key, NULL, 0, &got)) != PMIX_SUCCESS)
                    fail("PMIx_Get of a peer's key", rc);
                if (got->type != PMIX_UINT64 || got->data.uint64 != value_of(r, t, i))
                    fail("a peer's value differs", PMIX_ERROR);
                PMIX_VALUE_RELEASE(got);
            }
        }
    }

    /* Every event of every other rank reaches this rank's handler. */
    const unsigned want = (nprocs - 1) * kThreads * kRounds;
    while (atomic_load(&peer_events) < want) usleep(1000); /* bounded by alarm() */
    if (atomic_load(&peer_events) != want) fail("more events than were sent", PMIX_ERROR);

    printf("threads ok: rank %u, %u peer events\n", me.rank, want);
    fflush(stdout);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("the last PMIx_Fence", rc);
    PMIx_Finalize(NULL, 0);
    return 0;
}
