/* A client's PMIx_Notify_event reaches the server while its progress thread
 * is busy (issue 17 item 2: the event is written from the caller's thread,
 * docs/events.md "Latency"). Two ranks:
 *   rank 1 registers a handler for CODE_PEER, which creates a marker file;
 *   rank 0 raises CODE_LOCAL (PMIX_RANGE_PROC_LOCAL) whose handler holds
 *   rank 0's progress thread until released, then raises CODE_PEER to the
 *   namespace (non-blocking) and waits, at most 20 s, for rank 1's marker.
 * Before, the event waited in the queue behind the held handler: rank 1 never
 * saw it and rank 0 failed at the bound. Prints "notify busy ok" per rank. */
#include <pmix.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CODE_LOCAL (PMIX_EXTERNAL_ERR_BASE - 610)
#define CODE_PEER (PMIX_EXTERNAL_ERR_BASE - 611)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int released, held, peer_seen;
static char marker[512];

static void fail(const char *what, pmix_status_t rc) {
    fprintf(stderr, "notify_busy_client: %s: %s\n", what, PMIx_Error_string(rc));
    exit(1);
}

static void deadline_in(struct timespec *ts, int seconds) {
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += seconds;
}

/* Rank 0, on its progress thread: hold it until main releases (bounded). */
static void hold(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                 size_t ninfo, pmix_info_t results[], size_t nresults,
                 pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    struct timespec ts;
    deadline_in(&ts, 30);
    pthread_mutex_lock(&lock);
    held = 1;
    pthread_cond_broadcast(&cond);
    while (!released && pthread_cond_timedwait(&cond, &lock, &ts) == 0) {
    }
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Rank 1: the event arrived; tell rank 0 outside PMIx. */
static void seen(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                 size_t ninfo, pmix_info_t results[], size_t nresults,
                 pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    FILE *f = fopen(marker, "w");
    if (f != NULL) fclose(f);
    pthread_mutex_lock(&lock);
    peer_seen = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void op_done(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    if (status != PMIX_SUCCESS && status != PMIX_OPERATION_SUCCEEDED)
        fprintf(stderr, "notify_busy_client: notify completed with %s\n",
                PMIx_Error_string(status));
}

int main(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_Init", rc);
    const char *tmp = getenv("TMPDIR");
    snprintf(marker, sizeof marker, "%s/pmixpp_notify_busy.%s", tmp != NULL ? tmp : "/tmp",
             me.nspace);
    pmix_status_t code = me.rank == 0 ? CODE_LOCAL : CODE_PEER;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, me.rank == 0 ? hold : seen, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);
    if (me.rank == 0) unlink(marker);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("Fence", rc);

    int ok = 1;
    struct timespec ts;
    if (me.rank == 0) {
        rc = PMIx_Notify_event(CODE_LOCAL, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, op_done, NULL);
        if (rc != PMIX_SUCCESS) fail("Notify (local)", rc);
        deadline_in(&ts, 20);
        pthread_mutex_lock(&lock);
        while (!held && pthread_cond_timedwait(&cond, &lock, &ts) == 0) {
        }
        const int is_held = held;
        pthread_mutex_unlock(&lock);
        if (!is_held) {
            fprintf(stderr, "notify_busy_client: the local handler never ran\n");
            return 1;
        }
        /* The progress thread is held: the event must still go out. */
        rc = PMIx_Notify_event(CODE_PEER, &me, PMIX_RANGE_NAMESPACE, NULL, 0, op_done, NULL);
        if (rc != PMIX_SUCCESS) fail("Notify (namespace)", rc);
        ok = 0;
        for (int i = 0; i < 2000 && !ok; ++i) { /* 20 s at most */
            if (access(marker, F_OK) == 0)
                ok = 1;
            else
                usleep(10000);
        }
        if (!ok) fprintf(stderr, "notify_busy_client: rank 1 did not get the event in 20 s\n");
        pthread_mutex_lock(&lock);
        released = 1;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
        unlink(marker);
    } else {
        deadline_in(&ts, 25);
        pthread_mutex_lock(&lock);
        while (!peer_seen && pthread_cond_timedwait(&cond, &lock, &ts) == 0) {
        }
        ok = peer_seen;
        pthread_mutex_unlock(&lock);
        if (!ok) fprintf(stderr, "notify_busy_client: rank 1: no event in 25 s\n");
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("final Fence", rc);
    if (ok) printf("notify busy ok\n");
    PMIx_Finalize(NULL, 0);
    return ok ? 0 : 1;
}
