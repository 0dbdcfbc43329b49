/* A collective PMIx_Group_construct without a leader whose member fails
 * (docs/groups.md, "A member fails, no leader"): with
 * PMIX_GROUP_NOTIFY_TERMINATION every participant that has called construct
 * gets PMIX_GROUP_MEMBER_FAILED, and their handlers' results decide. Each wait
 * is bounded: alarm() for events and callbacks, PMIX_TIMEOUT on the calls,
 * pmixrun --timeout and the ctest TIMEOUT around it. Ordering comes from a
 * collecting (server-side) fence: the constructs posted before it are in
 * the server once it completed.
 *
 * usage: group_member_failed_client proceed - the last rank dies before it
 *                                 constructs; the handlers go on: every
 *                                 construct returns PMIX_ERR_PARTIAL_SUCCESS
 *                                 without it, and PMIX_GROUP_MEMBERSHIP_UPDATE
 *                                 follows with the smaller membership
 *        group_member_failed_client abort - the same, rank 1's handler returns
 *                                 PMIX_GROUP_CONSTRUCT_ABORT: every construct
 *                                 returns it, the others get that event */
#include <pmix.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "group_common.h"

static int abort_it;

static const char *GRP = "mf-grp";

/* What the handler saw (written on the progress thread, read by main). */
static atomic_int member_failed, aborted, updated, registered_done;
static atomic_uint failed_rank, update_size;
static pmix_status_t registered_status;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    pmix_status_t answer = PMIX_SUCCESS;
    for (size_t i = 0; i < ninfo; ++i) {
        if (status == PMIX_GROUP_MEMBER_FAILED &&
            PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC))
            atomic_store(&failed_rank, info[i].value.data.proc->rank);
        if (status == PMIX_GROUP_MEMBERSHIP_UPDATE &&
            PMIX_CHECK_KEY(&info[i], PMIX_GROUP_MEMBERSHIP))
            atomic_store(&update_size, (unsigned)info[i].value.data.darray->size);
    }
    if (status == PMIX_GROUP_MEMBER_FAILED) {
        /* The decision: the handler's status (as a construct leader's). */
        if (abort_it && me.rank == 1) answer = PMIX_GROUP_CONSTRUCT_ABORT;
        atomic_store(&member_failed, 1);
    } else if (status == PMIX_GROUP_CONSTRUCT_ABORT) {
        atomic_store(&aborted, 1);
    } else if (status == PMIX_GROUP_MEMBERSHIP_UPDATE) {
        atomic_store(&updated, 1);
    }
    if (cbfunc != NULL) cbfunc(answer, NULL, 0, NULL, NULL, cbdata);
}

static void registered(pmix_status_t status, size_t ref, void *cbdata) {
    (void)ref, (void)cbdata;
    registered_status = status;
    atomic_store(&registered_done, 1);
}

static void wait_flag(atomic_int *flag) {
    while (!atomic_load(flag)) usleep(1000); /* bounded by alarm() */
}

static struct {
    atomic_int done; /* set last, on the progress thread */
    pmix_status_t status;
    size_t members;
} nb; /* static: the callback never writes into a returned frame */

static void construct_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                         pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)cbdata;
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_MEMBERSHIP))
            nb.members = info[i].value.data.darray->size;
    nb.status = status;
    if (release_fn != NULL) release_fn(release_cbdata);
    atomic_store(&nb.done, 1);
}

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "proceed") != 0 && strcmp(argv[1], "abort") != 0)) {
        fprintf(stderr, "usage: group_member_failed_client proceed|abort\n");
        return 2;
    }
    abort_it = strcmp(argv[1], "abort") == 0;
    alarm(90); /* every wait below is bounded */
    CHECK(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "Get job size");
    nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    const pmix_rank_t last = nprocs - 1;

    pmix_status_t codes[] = {PMIX_GROUP_MEMBER_FAILED, PMIX_GROUP_CONSTRUCT_ABORT,
                             PMIX_GROUP_MEMBERSHIP_UPDATE};
    PMIx_Register_event_handler(codes, 3, NULL, 0, on_event, registered, NULL);
    wait_flag(&registered_done);
    CHECK(registered_status, "Register_event_handler");

    pmix_proc_t *procs = calloc(nprocs, sizeof(pmix_proc_t));
    for (uint32_t r = 0; r < nprocs; ++r) PMIX_LOAD_PROCID(&procs[r], me.nspace, r);
    pmix_info_t dirs[2];
    bool yes = true;
    int timeout = 60;
    PMIX_INFO_LOAD(&dirs[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&dirs[1], PMIX_GROUP_NOTIFY_TERMINATION, &yes, PMIX_BOOL);
    if (me.rank != last)
        CHECK(PMIx_Group_construct_nb(GRP, procs, nprocs, dirs, 2, construct_cb, NULL),
              "construct_nb");
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    /* Every rank named: through the server (a collecting fence over the
     * job's wildcard takes the shared-memory barrier), so every construct is in. */
    CHECK(PMIx_Fence(procs, nprocs, &collect, 1), "Fence");
    if (me.rank == last) raise(SIGKILL);
    wait_flag(&nb.done);
    if (!atomic_load(&member_failed) || atomic_load(&failed_rank) != last)
        FAIL("no PMIX_GROUP_MEMBER_FAILED about rank %u", last);
    if (abort_it) {
        if (nb.status != PMIX_GROUP_CONSTRUCT_ABORT)
            FAIL("construct: %s", PMIx_Error_string(nb.status));
        if (me.rank != 1) wait_flag(&aborted); /* from rank 1, which decided */
        printf("group member failed abort ok\n");
    } else {
        if (nb.status != PMIX_ERR_PARTIAL_SUCCESS)
            FAIL("construct: %s", PMIx_Error_string(nb.status));
        if (nb.members != nprocs - 1) FAIL("the group has %zu members", nb.members);
        wait_flag(&updated);
        if (atomic_load(&update_size) != nprocs - 1)
            FAIL("PMIX_GROUP_MEMBERSHIP_UPDATE lists %u members", atomic_load(&update_size));
        CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
        printf("group member failed proceed ok: %zu members\n", nb.members);
    }
    free(procs);
    CHECK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
