/* The sample program of seed 002 ("Job Control and Monitoring APIs") under
 * pmixrun, N ranks: register a default event handler, read the universe
 * size, declare ourselves preemptible with checkpoint methods "signal
 * SIGUSR2" then "event PMIX_JCTRL_CHECKPOINT" (PMIx_Job_control_nb, no
 * targets), ask for a heartbeat monitor and beat, fence, finalize.
 *
 * Beyond the seed, to show that the declarations took effect in the host:
 * rank 0 asks pmixrun to checkpoint rank 1, which pmixrun does by the first
 * declared method (SIGUSR2; rank 1 then notifies
 * PMIX_JCTRL_CHECKPOINT_COMPLETE), and rank 0 sends SIGUSR1 to pmixrun,
 * which alerts every rank (all declared themselves preemptible) with
 * PMIX_JCTRL_PREEMPT_ALERT. Prints "seed ok: <step>" lines; every wait is
 * bounded. */
#define _GNU_SOURCE
#include <pmix.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pmix_proc_t myproc;
static _Atomic sig_atomic_t got_usr2 = 0;
static _Atomic int preempt_alerts = 0;

static void on_usr2(int sig) {
    (void)sig;
    got_usr2 = 1;
}

static void nap(void) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

/* The default handler: counts preemption alerts, completes every event. */
static void notification_fn(size_t evhdlr_registration_id, pmix_status_t status,
                            const pmix_proc_t *source, pmix_info_t info[], size_t ninfo,
                            pmix_info_t results[], size_t nresults,
                            pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)evhdlr_registration_id, (void)source, (void)info, (void)ninfo, (void)results,
        (void)nresults;
    if (status == PMIX_JCTRL_PREEMPT_ALERT) atomic_fetch_add(&preempt_alerts, 1);
    if (NULL != cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void evhandler_reg_callbk(pmix_status_t status, size_t evhandler_ref, void *cbdata) {
    _Atomic int *active = (_Atomic int *)cbdata;
    if (PMIX_SUCCESS != status) {
        fprintf(stderr, "Client %s:%d EVENT HANDLER REGISTRATION FAILED WITH STATUS %d, ref=%lu\n",
                myproc.nspace, myproc.rank, status, (unsigned long)evhandler_ref);
    }
    atomic_store(active, status);
}

static void infocbfunc(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                       pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)info, (void)ninfo;
    _Atomic int *active = (_Atomic int *)cbdata;
    if (NULL != release_fn) release_fn(release_cbdata);
    atomic_store(active, status);
}

/* Bounded wait for an asynchronous answer (-1: none yet). */
static int wait_active(_Atomic int *active) {
    for (int i = 0; i < 30000 && atomic_load(active) == -1; ++i) nap();
    return atomic_load(active);
}

int main(int argc, char **argv) {
    (void)argc, (void)argv;
    int rc;
    pmix_value_t *val = NULL;
    pmix_proc_t proc;
    uint32_t nprocs;
    pmix_info_t *info, *iptr;
    bool flag;
    _Atomic int active;
    pmix_data_array_t *dptr;
    int ok = 1;

    if (PMIX_SUCCESS != (rc = PMIx_Init(&myproc, NULL, 0))) {
        fprintf(stderr, "Client ns %s rank %d: PMIx_Init failed: %d\n", myproc.nspace, myproc.rank,
                rc);
        exit(1);
    }
    fprintf(stderr, "Client ns %s rank %d: Running\n", myproc.nspace, myproc.rank);
    signal(SIGUSR2, on_usr2); /* our checkpoint signal, in place before we declare it */

    active = -1;
    PMIx_Register_event_handler(NULL, 0, NULL, 0, notification_fn, evhandler_reg_callbk,
                                (void *)&active);
    if (0 != wait_active(&active)) {
        fprintf(stderr, "[%s:%d] Default handler registration failed\n", myproc.nspace,
                myproc.rank);
        exit(1);
    }

    (void)strncpy(proc.nspace, myproc.nspace, PMIX_MAX_NSLEN);
    proc.rank = PMIX_RANK_WILDCARD;
    if (PMIX_SUCCESS != (rc = PMIx_Get(&proc, PMIX_UNIV_SIZE, NULL, 0, &val))) {
        fprintf(stderr, "Client ns %s rank %d: PMIx_Get universe size failed: %d\n", myproc.nspace,
                myproc.rank, rc);
        exit(1);
    }
    nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    fprintf(stderr, "Client %s:%d universe size %d\n", myproc.nspace, myproc.rank, nprocs);

    /* inform the RM that we are preemptible, and that our checkpoint methods are
     * "signal" on SIGUSR2 and event on PMIX_JCTRL_CHECKPOINT */
    PMIX_INFO_CREATE(info, 2);
    flag = true;
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_CTRL_PREEMPTIBLE, (void *)&flag, PMIX_BOOL);
    /* can't use "load" to load a pmix_data_array_t */
    (void)strncpy(info[1].key, PMIX_JOB_CTRL_CHECKPOINT_METHOD, PMIX_MAX_KEYLEN);
    info[1].value.type = PMIX_DATA_ARRAY;
    dptr = (pmix_data_array_t *)malloc(sizeof(pmix_data_array_t));
    info[1].value.data.darray = dptr;
    dptr->type = PMIX_INFO;
    dptr->size = 2;
    PMIX_INFO_CREATE(iptr, dptr->size);
    dptr->array = iptr;
    rc = SIGUSR2;
    PMIX_INFO_LOAD(&iptr[0], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &rc, PMIX_INT);
    PMIX_INFO_LOAD(&iptr[1], PMIX_JOB_CTRL_CHECKPOINT_EVENT, &flag, PMIX_BOOL);

    /* since this is informational and not a requested operation, the target parameter
     * doesn't mean anything and can be ignored */
    active = -1;
    if (PMIX_SUCCESS != (rc = PMIx_Job_control_nb(NULL, 0, info, 2, infocbfunc, (void *)&active))) {
        fprintf(stderr, "Client ns %s rank %d: PMIx_Job_control_nb failed: %d\n", myproc.nspace,
                myproc.rank, rc);
        exit(1);
    }
    rc = wait_active(&active);
    PMIX_INFO_FREE(info, 2);
    if (0 != rc) {
        fprintf(stderr, "Client ns %s rank %d: PMIx_Job_control_nb failed: %s\n", myproc.nspace,
                myproc.rank, PMIx_Error_string(rc));
        exit(1);
    }
    printf("seed ok: rank %u declared preemptible with checkpoint methods\n", myproc.rank);

    /* The seed's heartbeat monitor: 5 s windows, alert after 2 drops (the
     * test ends long before), then one beat. */
    {
        pmix_info_t *iptr, *minfo;
        uint32_t n;
        PMIX_INFO_CREATE(iptr, 1);
        PMIX_INFO_LOAD(&iptr[0], PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
        PMIX_INFO_CREATE(minfo, 3);
        PMIX_INFO_LOAD(&minfo[0], PMIX_MONITOR_ID, "MONITOR1", PMIX_STRING);
        n = 5;
        PMIX_INFO_LOAD(&minfo[1], PMIX_MONITOR_HEARTBEAT_TIME, &n, PMIX_UINT32);
        n = 2;
        PMIX_INFO_LOAD(&minfo[2], PMIX_MONITOR_HEARTBEAT_DROPS, &n, PMIX_UINT32);
        active = -1;
        rc = PMIx_Process_monitor_nb(iptr, PMIX_MONITOR_HEARTBEAT_ALERT, minfo, 3, infocbfunc,
                                     (void *)&active);
        if (rc == PMIX_SUCCESS) rc = wait_active(&active);
        PMIX_INFO_FREE(iptr, 1);
        PMIX_INFO_FREE(minfo, 3);
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "seed: rank %u heartbeat monitor: %s\n", myproc.rank,
                    PMIx_Error_string(rc));
            exit(1);
        }
        PMIx_Heartbeat();
        printf("seed ok: rank %u monitored by heartbeat\n", myproc.rank);
    }

    /* Beyond the seed: the host acts on the declarations. */
    PMIx_Fence(NULL, 0, NULL, 0); /* everyone declared */
    pmix_proc_t one;
    PMIX_LOAD_PROCID(&one, myproc.nspace, 1);
    if (myproc.rank == 0 && nprocs > 1) {
        pmix_info_t d;
        PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_CHECKPOINT, "seed.ckpt", PMIX_STRING);
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Job_control(&one, 1, &d, 1, &results, &nresults);
        PMIX_INFO_DESTRUCT(&d);
        if (rc == PMIX_SUCCESS)
            printf("seed ok: rank 1 checkpointed\n");
        else
            ok = 0;
        if (results != NULL) PMIX_INFO_FREE(results, nresults);
    } else if (myproc.rank == 1) {
        for (int i = 0; i < 30000 && !got_usr2; ++i) nap();
        if (got_usr2) {
            printf("seed ok: rank 1 asked to checkpoint by its first method (SIGUSR2)\n");
            pmix_info_t d;
            PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_CHECKPOINT, "seed.ckpt", PMIX_STRING);
            rc = PMIx_Notify_event(PMIX_JCTRL_CHECKPOINT_COMPLETE, &myproc, PMIX_RANGE_RM, &d, 1,
                                   NULL, NULL);
            PMIX_INFO_DESTRUCT(&d);
            if (rc != PMIX_SUCCESS) ok = 0;
        } else {
            ok = 0;
        }
    }
    fflush(stdout);
    PMIx_Fence(NULL, 0, NULL, 0);
    if (myproc.rank == 0) kill(getppid(), SIGUSR1); /* pmixrun: preempt */
    for (int i = 0; i < 30000 && atomic_load(&preempt_alerts) == 0; ++i) nap();
    if (atomic_load(&preempt_alerts) > 0)
        printf("seed ok: rank %u alerted of preemption\n", myproc.rank);
    else
        ok = 0;
    fflush(stdout);

    /* call fence to synchronize with our peers - no need to
     * collect any info as we didn't "put" anything */
    PMIX_INFO_CREATE(info, 1);
    flag = false;
    PMIX_INFO_LOAD(info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    if (PMIX_SUCCESS != (rc = PMIx_Fence(&proc, 1, info, 1))) {
        fprintf(stderr, "Client ns %s rank %d: PMIx_Fence failed: %d\n", myproc.nspace, myproc.rank,
                rc);
        exit(1);
    }
    PMIX_INFO_FREE(info, 1);

    fprintf(stderr, "Client ns %s rank %d: Finalizing\n", myproc.nspace, myproc.rank);
    if (PMIX_SUCCESS != (rc = PMIx_Finalize(NULL, 0))) {
        fprintf(stderr, "Client ns %s rank %d:PMIx_Finalize failed: %d\n", myproc.nspace,
                myproc.rank, rc);
        exit(1);
    }
    printf("seed ok: rank %u finalized\n", myproc.rank);
    fflush(stdout);
    return ok ? 0 : 1;
}
