/* A process that honours PMIX_DEBUG_STOP_IN_APP (docs/tools.md, "Debuggers";
 * tool_stopapp.c spawns it): after PMIx_Init it reads the attribute (job
 * data, rank WILDCARD: true, a rank, or an array of procs); a targeted rank
 * registers for PMIX_DEBUGGER_RELEASE, announces PMIX_READY_FOR_DEBUG to its
 * server (range RM) with PMIX_BREAKPOINT "appstop-here", waits (bounded, 60
 * s) for the release and prints "appstop released rank N"; any other rank
 * prints "appstop rank N went on". */
#include <pmix.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int released = 0;

static void on_release(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Whether the value of PMIX_DEBUG_STOP_IN_APP names `me`. */
static bool targeted(const pmix_value_t *v, const pmix_proc_t *me) {
    if (v->type == PMIX_BOOL) return v->data.flag;
    if (v->type == PMIX_PROC_RANK)
        return v->data.rank == PMIX_RANK_WILDCARD || v->data.rank == me->rank;
    if (v->type == PMIX_DATA_ARRAY && v->data.darray != NULL && v->data.darray->type == PMIX_PROC) {
        const pmix_proc_t *p = (const pmix_proc_t *)v->data.darray->array;
        for (size_t i = 0; i < v->data.darray->size; ++i)
            if (PMIX_CHECK_NSPACE(p[i].nspace, me->nspace) &&
                (p[i].rank == me->rank || p[i].rank == PMIX_RANK_WILDCARD))
                return true;
    }
    return false;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("appstop FAILED: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t wild = me;
    wild.rank = PMIX_RANK_WILDCARD;
    pmix_value_t *v = NULL;
    bool stop = false;
    if (PMIx_Get(&wild, PMIX_DEBUG_STOP_IN_APP, NULL, 0, &v) == PMIX_SUCCESS && v != NULL) {
        stop = targeted(v, &me);
        PMIX_VALUE_RELEASE(v);
    }
    if (!stop) {
        printf("appstop rank %u went on\n", me.rank);
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    pmix_status_t code = PMIX_DEBUGGER_RELEASE;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_release, NULL, NULL);
    if (rc < 0) {
        printf("appstop FAILED: register: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_info_t bp;
    PMIX_INFO_LOAD(&bp, PMIX_BREAKPOINT, "appstop-here", PMIX_STRING);
    rc = PMIx_Notify_event(PMIX_READY_FOR_DEBUG, &me, PMIX_RANGE_RM, &bp, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&bp);
    if (rc != PMIX_SUCCESS) {
        printf("appstop FAILED: notify: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 60;
    int wrc = 0;
    pthread_mutex_lock(&lock);
    while (!released && wrc == 0) wrc = pthread_cond_timedwait(&cond, &lock, &deadline);
    const int ok = released;
    pthread_mutex_unlock(&lock);
    if (!ok) {
        printf("appstop FAILED: rank %u not released\n", me.rank);
        return 1;
    }
    printf("appstop released rank %u\n", me.rank);
    PMIx_Finalize(NULL, 0);
    return 0;
}
