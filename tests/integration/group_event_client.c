/* A group as an event's affected process or source (docs/groups.md, "The
 * group as an address"). Ranks 0..2 of the job (N >= 4) construct the group
 * "ev-grp" as [2, 0, 1] (group rank 0 is rank 2, 1 is rank 0, 2 is rank 1);
 * the other ranks are not members. Each rule below fails when the library
 * leaves the group id untranslated (nobody matches: the waits hit alarm()).
 *
 *   affected     rank 2 notifies EV_ONE with PMIX_EVENT_AFFECTED_PROC =
 *                {ev-grp, 2}; every rank's handler filters on its own
 *                identity: only rank 1 (group rank 2) gets it. Then rank 2
 *                notifies EV_ALL with PMIX_EVENT_AFFECTED_PROC = {ev-grp,
 *                WILDCARD}: ranks 0, 1, 2 get it (with the members as
 *                PMIX_EVENT_AFFECTED_PROCS), the others not.
 *   filter       the members register for EV_ONE with PMIX_EVENT_AFFECTED_PROC
 *                = {ev-grp, WILDCARD}; the last rank notifies it about
 *                itself (not a member), then about rank 0 (a member): each
 *                member's handler runs once, for rank 0.
 *   source       the members register for EV_ALL with PMIX_EVENT_CUSTOM_RANGE
 *                = {ev-grp, WILDCARD} (sources they listen to); the last rank
 *                notifies it, then rank 1: each member's handler runs once,
 *                with rank 1 as the source.
 * "Not received" is read after a fence that every notifier enters after its
 * notifications: the server routes an event before it answers its notifier,
 * and one connection delivers in order. */
#include <string.h>

#include "group_common.h"

#define EV_ONE (PMIX_EXTERNAL_ERR_BASE - 21)
#define EV_ALL (PMIX_EXTERNAL_ERR_BASE - 22)

static const char *GRP = "ev-grp";
static _Atomic int seen = 0;
static pmix_rank_t first_affected = PMIX_RANK_INVALID, first_source = PMIX_RANK_INVALID;
static _Atomic size_t first_naffected = 0;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)results, (void)nresults;
    if (seen == 0) {
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC)) {
                first_affected = info[i].value.data.proc->rank;
                first_naffected = 1;
            } else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS)) {
                const pmix_proc_t *p = info[i].value.data.darray->array;
                first_affected = p[0].rank;
                first_naffected = info[i].value.data.darray->size;
            }
        }
        first_source = source->rank;
    }
    ++seen;
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int member(void) {
    return me.rank <= 2;
}

static void wait_seen(void) {
    while (seen == 0) usleep(1000); /* bounded by alarm() */
}

static void fence(void) {
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
}

static void notify(pmix_status_t code, const char *key, const pmix_proc_t *about) {
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, key, about, PMIX_PROC);
    CHECK(PMIx_Notify_event(code, NULL, PMIX_RANGE_NAMESPACE, &info, 1, NULL, NULL), "Notify");
    PMIX_INFO_DESTRUCT(&info);
}

/* Registers for `code`, filtered on `key` = `filter`, then a fence (every
 * rank registered before anyone notifies). */
static void listen(pmix_status_t code, const char *key, const pmix_proc_t *filter, int want) {
    if (want) {
        pmix_info_t info;
        pmix_data_array_t darray = {PMIX_PROC, 1, (void *)filter};
        if (strcmp(key, PMIX_EVENT_AFFECTED_PROC) == 0) {
            PMIX_INFO_LOAD(&info, key, filter, PMIX_PROC);
        } else {
            PMIX_INFO_LOAD(&info, key, &darray, PMIX_DATA_ARRAY);
        }
        group_register(&code, 1, &info, 1, on_event);
        PMIX_INFO_DESTRUCT(&info);
    }
    fence();
}

static void mode_affected(void) {
    pmix_proc_t self = me, about;
    /* EV_ONE about group rank 2: rank 1 only. */
    listen(EV_ONE, PMIX_EVENT_AFFECTED_PROC, &self, 1);
    PMIX_LOAD_PROCID(&about, GRP, 2);
    if (me.rank == 2) notify(EV_ONE, PMIX_EVENT_AFFECTED_PROC, &about);
    if (me.rank == 1) {
        wait_seen();
        if (first_affected != 1) FAIL("EV_ONE names rank %u as affected", first_affected);
    }
    fence();
    if (seen != (me.rank == 1 ? 1 : 0)) FAIL("EV_ONE seen %d times", seen);
    /* EV_ALL about the whole group: the members. */
    seen = 0;
    first_affected = PMIX_RANK_INVALID;
    listen(EV_ALL, PMIX_EVENT_AFFECTED_PROC, &self, 1);
    PMIX_LOAD_PROCID(&about, GRP, PMIX_RANK_WILDCARD);
    if (me.rank == 2) notify(EV_ALL, PMIX_EVENT_AFFECTED_PROC, &about);
    if (member()) {
        wait_seen();
        if (first_naffected != 3 || first_affected != 2)
            FAIL("EV_ALL names %zu affected, the first rank %u", first_naffected, first_affected);
    }
    fence();
    if (seen != (member() ? 1 : 0)) FAIL("EV_ALL seen %d times", seen);
    printf("group event affected ok: rank %u saw %d\n", me.rank, seen);
}

static void mode_filter(int source) {
    const pmix_status_t code = source ? EV_ALL : EV_ONE;
    const char *key = source ? PMIX_EVENT_CUSTOM_RANGE : PMIX_EVENT_AFFECTED_PROC;
    pmix_proc_t grp, outsider, insider;
    PMIX_LOAD_PROCID(&grp, GRP, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&outsider, me.nspace, nprocs - 1);
    PMIX_LOAD_PROCID(&insider, me.nspace, source ? 1 : 0);
    listen(code, key, &grp, member());
    /* The outsider's event first: a wrong match would be seen first. */
    if (source) {
        /* The outsider's event is routed before the fence ends; rank 1's after. */
        if (me.rank == nprocs - 1) notify(code, PMIX_EVENT_AFFECTED_PROC, &me);
        fence();
        if (me.rank == 1) notify(code, PMIX_EVENT_AFFECTED_PROC, &me);
    } else if (me.rank == nprocs - 1) {
        notify(code, PMIX_EVENT_AFFECTED_PROC, &outsider);
        notify(code, PMIX_EVENT_AFFECTED_PROC, &insider);
    }
    if (member()) {
        wait_seen();
        const pmix_rank_t got = source ? first_source : first_affected;
        if (got != insider.rank)
            FAIL("the first %s is rank %u, not %u", source ? "source" : "affected", got,
                 insider.rank);
    }
    fence();
    if (seen != (member() ? 1 : 0)) FAIL("seen %d times", seen);
    printf("group event %s ok: rank %u saw %d\n", source ? "source" : "filter", me.rank, seen);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: group_event_client affected|filter|source\n");
        return 2;
    }
    alarm(60); /* every wait below is bounded */
    group_init();
    if (nprocs < 4) FAIL("needs at least 4 processes");
    if (member()) {
        pmix_proc_t procs[3];
        PMIX_LOAD_PROCID(&procs[0], me.nspace, 2);
        PMIX_LOAD_PROCID(&procs[1], me.nspace, 0);
        PMIX_LOAD_PROCID(&procs[2], me.nspace, 1);
        CHECK(PMIx_Group_construct(GRP, procs, 3, NULL, 0, NULL, NULL), "construct");
    }
    if (strcmp(argv[1], "affected") == 0) {
        mode_affected();
    } else if (strcmp(argv[1], "filter") == 0) {
        mode_filter(0);
    } else if (strcmp(argv[1], "source") == 0) {
        mode_filter(1);
    } else {
        FAIL("unknown mode %s", argv[1]);
    }
    if (member()) CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
    CHECK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
