/* The bootstrap method of PMIx_Group_construct (docs/groups.md, "Bootstrap
 * method"): leaders know only how many leaders there are
 * (PMIX_GROUP_BOOTSTRAP) and name the processes of their collection
 * (PMIX_GROUP_ADD_MEMBERS); those call construct with no procs. Each wait is
 * bounded: PMIX_TIMEOUT on the calls, alarm() for the rest, pmixrun
 * --timeout and the ctest TIMEOUT around it.
 *
 * usage: group_bootstrap_client leaders   - every rank is a leader naming
 *                                           only itself; BOOTSTRAP = the
 *                                           job size
 *        group_bootstrap_client add       - ranks 0 and 3 lead, each adds the
 *                                           next two ranks, which call with
 *                                           no procs (rank 5: the _nb form);
 *                                           a context id from the host
 *        group_bootstrap_client bad       - BOOTSTRAP 0, or leaders that
 *                                           disagree on the count:
 *                                           PMIX_ERR_BAD_PARAM
 *        group_bootstrap_client timeout   - rank 0 leads, adds ranks 1 and
 *                                           2; rank 2 comes only after the
 *                                           others' PMIX_TIMEOUT: all get
 *                                           PMIX_ERR_TIMEOUT
 *        group_bootstrap_client optional-dies | ft-dies - ranks 0 and 2
 *                                           lead, adding ranks 1 and 3, with
 *                                           PMIX_GROUP_OPTIONAL /
 *                                           PMIX_GROUP_FT_COLLECTIVE; rank 3
 *                                           dies: ranks 0-2 form the group
 *                                           (PMIX_ERR_PARTIAL_SUCCESS)
 *        group_bootstrap_client optional-late - as timeout, with
 *                                           PMIX_GROUP_OPTIONAL: ranks 0 and
 *                                           1 form the group without rank 2
 *                                           (PARTIAL_SUCCESS), which gets
 *                                           PMIX_ERR_TIMEOUT when it comes
 *
 *        group_bootstrap_client leader-continue | leader-abort - rank 0
 *                                           leads with PMIX_GROUP_LEADER and
 *                                           adds ranks 1-3; rank 3 dies: only
 *                                           rank 0 gets PMIX_GROUP_MEMBER_FAILED;
 *                                           its handler goes on (the group
 *                                           0-2, PARTIAL_SUCCESS, rank 0's
 *                                           results carry PMIX_GROUP_LEADER,
 *                                           then PMIX_GROUP_MEMBERSHIP_UPDATE)
 *                                           or aborts (PMIX_GROUP_CONSTRUCT_ABORT
 *                                           for 0-2, the event to 1 and 2)
 *
 * Across the two servers of tests/multinode/twonode_host (4 ranks: 0, 1 on
 * node0, 2, 3 on node1; docs/groups.md, "Bootstrap across servers"):
 *        group_bootstrap_client across  - ranks 0 (node0) and 2 (node1) lead,
 *                                           rank 0 adds rank 3 and rank 2 adds
 *                                           rank 1 (each served by the other
 *                                           server), with a context id: one
 *                                           id, members 0-3, every member's
 *                                           data, then fence and destruct
 *        group_bootstrap_client across-one-leader - rank 0 alone leads and
 *                                           adds 1, 2, 3: node1 has no leader
 *        group_bootstrap_client across-dies | across-optional-dies - leaders
 *                                           as in across; rank 3 (node1),
 *                                           named by rank 0 (node0), dies:
 *                                           PMIX_ERR_LOST_CONNECTION for 0-2,
 *                                           or with PMIX_GROUP_OPTIONAL the
 *                                           group 0-2 (PARTIAL_SUCCESS, then
 *                                           PMIX_GROUP_MEMBERSHIP_UPDATE)
 *        group_bootstrap_client across-leader-continue | across-leader-abort -
 *                                           as leader-continue / leader-abort,
 *                                           rank 3 on node1, the leader on
 *                                           node0: the decision crosses servers;
 *                                           with 6 ranks (twonode_host --nodes
 *                                           3) the leader adds 1-5 and rank 5
 *                                           (node2) dies: the group is 0-4
 *        group_bootstrap_client across-leader-dies - rank 0, the only
 *                                           declared leader, names 1, 2, 3 and
 *                                           dies before rank 3 called:
 *                                           PMIX_ERR_LOST_CONNECTION for 1 and 2
 *        group_bootstrap_client across-two-leaders - leaders 0 (node0) and 2
 *                                           (node1) both decide; rank 3 dies
 *                                           once both called: both are asked,
 *                                           both go on: 0,1,2 everywhere
 *        group_bootstrap_client across-timeout - rank 0 leads, adds 1 and 2
 *                                           (node1); rank 2 comes after the
 *                                           PMIX_TIMEOUT: PMIX_ERR_TIMEOUT for
 *                                           all, the latecomer included
 *        group_bootstrap_client across-count-mismatch - ranks 0 (node0) and
 *                                           2 (node1) lead with counts 2 and
 *                                           3: both refused (groupsft) */
#include <pmix.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PMIX_GROUP_BOOTSTRAP of the standard (v6), not in the 4.2 headers. */
#ifndef PMIX_GROUP_BOOTSTRAP
#define PMIX_GROUP_BOOTSTRAP "pmix.grp.btstrp"
#endif

#include "group_common.h"

static uint32_t job_size(void) {
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "Get job size");
    uint32_t n = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    return n;
}

static void put_commit(const char *key, const char *text) {
    pmix_value_t v;
    v.type = PMIX_STRING;
    v.data.string = (char *)text;
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &v), "Put");
    CHECK(PMIx_Commit(), "Commit");
}

/* `key` of `who` from this process's own store (PMIX_OPTIONAL): it came
 * with the construct's answer. */
static void expect_key(const pmix_proc_t *who, const char *key, const char *expected) {
    pmix_value_t *val = NULL;
    pmix_info_t opt;
    bool yes = true;
    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Get(who, key, &opt, 1, &val);
    if (rc != PMIX_SUCCESS)
        FAIL("Get %s of %s:%u: %s", key, who->nspace, who->rank, PMIx_Error_string(rc));
    if (val->type != PMIX_STRING || strcmp(val->data.string, expected) != 0)
        FAIL("%s of %s:%u is not '%s'", key, who->nspace, who->rank, expected);
    PMIX_VALUE_RELEASE(val);
}

/* The results: the id and the membership ranks first..first+n-1 of my job
 * in rank order; returns the context id (SIZE_MAX: none). */
static size_t check_results(const char *grp, uint32_t first, uint32_t n, pmix_info_t *results,
                            size_t nresults) {
    int seen_id = 0, seen_members = 0;
    size_t cid = SIZE_MAX;
    for (size_t i = 0; i < nresults; ++i) {
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_ID)) {
            if (strcmp(results[i].value.data.string, grp) != 0) FAIL("result id is not %s", grp);
            seen_id = 1;
        } else if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_MEMBERSHIP)) {
            pmix_data_array_t *d = results[i].value.data.darray;
            if (d->type != PMIX_PROC || d->size != n) FAIL("membership has %zu entries", d->size);
            pmix_proc_t *m = (pmix_proc_t *)d->array;
            for (uint32_t k = 0; k < n; ++k) {
                pmix_proc_t want;
                PMIX_LOAD_PROCID(&want, me.nspace, first + k);
                if (!PMIX_CHECK_PROCID(&m[k], &want))
                    FAIL("group rank %u is %s:%u", k, m[k].nspace, m[k].rank);
            }
            seen_members = 1;
        } else if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID)) {
            cid = results[i].value.data.size;
        }
    }
    if (!seen_id || !seen_members) FAIL("construct results lack the id or the membership");
    return cid;
}

/* After the group formed: every member's committed data is here, by its
 * own name and by its group rank, and a fence over the group completes. */
static void use_group(const char *grp, uint32_t first, uint32_t n) {
    char text[64];
    for (uint32_t g = 0; g < n; ++g) {
        pmix_proc_t real, by_group;
        PMIX_LOAD_PROCID(&real, me.nspace, first + g);
        PMIX_LOAD_PROCID(&by_group, grp, g);
        snprintf(text, sizeof text, "rank %u", first + g);
        expect_key(&real, "boot.key", text);
        expect_key(&by_group, "boot.key", text);
    }
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, grp, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Fence(&wild, 1, NULL, 0), "Fence over the group");
    CHECK(PMIx_Group_destruct(grp, NULL, 0), "destruct");
}

static void load_bootstrap(pmix_info_t *info, size_t leaders) {
    PMIX_INFO_LOAD(info, PMIX_GROUP_BOOTSTRAP, &leaders, PMIX_SIZE);
}

static void mode_leaders(void) {
    char text[64];
    snprintf(text, sizeof text, "rank %u", me.rank);
    put_commit("boot.key", text);
    pmix_info_t info[2];
    int timeout = 30;
    load_bootstrap(&info[0], nprocs);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    CHECK(PMIx_Group_construct("boot-leaders", &me, 1, info, 2, &results, &nresults),
          "bootstrap construct");
    check_results("boot-leaders", 0, nprocs, results, nresults);
    PMIX_INFO_FREE(results, nresults);
    use_group("boot-leaders", 0, nprocs);
    printf("bootstrap leaders ok: %u members\n", nprocs);
}

static struct {
    atomic_int done; /* set last, on the progress thread */
    pmix_status_t status;
    size_t cid;
    int members_ok;
} nb; /* static: the callback never writes into a returned frame */

static void construct_cb(pmix_status_t status, pmix_info_t *results, size_t nresults, void *cbdata,
                         pmix_release_cbfunc_t release, void *release_data) {
    (void)cbdata;
    nb.status = status;
    if (status == PMIX_SUCCESS) {
        nb.cid = check_results("boot-add", 0, 6, results, nresults);
        nb.members_ok = 1;
    }
    if (release != NULL) release(release_data);
    atomic_store(&nb.done, 1);
}

static void mode_add(void) {
    if (nprocs != 6) FAIL("add needs 6 ranks");
    char text[64];
    snprintf(text, sizeof text, "rank %u", me.rank);
    put_commit("boot.key", text);
    int timeout = 30;
    bool yes = true;
    pmix_info_t info[4];
    size_t ninfo = 0;
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    const int leader = me.rank == 0 || me.rank == 3;
    pmix_proc_t adds[2];
    pmix_data_array_t darray = {PMIX_PROC, 2, adds};
    if (leader) {
        load_bootstrap(&info[ninfo++], 2);
        PMIX_LOAD_PROCID(&adds[0], me.nspace, me.rank + 1);
        PMIX_LOAD_PROCID(&adds[1], me.nspace, me.rank + 2);
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_GROUP_ADD_MEMBERS, &darray, PMIX_DATA_ARRAY);
    }
    size_t cid = SIZE_MAX;
    if (me.rank == 5) {
        /* An add member with the non-blocking form. */
        CHECK(PMIx_Group_construct_nb("boot-add", NULL, 0, info, ninfo, construct_cb, NULL),
              "bootstrap construct_nb");
        while (!atomic_load(&nb.done)) usleep(1000); /* bounded by alarm() */
        CHECK(nb.status, "bootstrap construct_nb callback");
        cid = nb.cid;
    } else {
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        CHECK(PMIx_Group_construct("boot-add", leader ? &me : NULL, leader ? 1 : 0, info, ninfo,
                                   &results, &nresults),
              leader ? "bootstrap construct (leader)" : "bootstrap construct (add member)");
        cid = check_results("boot-add", 0, 6, results, nresults);
        PMIX_INFO_FREE(results, nresults);
    }
    for (size_t i = 0; i < ninfo; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    /* pmixrun's context ids start at 1000: the host was asked. */
    if (cid == SIZE_MAX || cid < 1000) FAIL("context id %zu is not the host's", cid);
    /* The same at every member: exchanged through the group's own fence. */
    char key[32];
    snprintf(text, sizeof text, "%zu", cid);
    put_commit("boot.cid", text);
    pmix_proc_t wild;
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    PMIX_LOAD_PROCID(&wild, "boot-add", PMIX_RANK_WILDCARD);
    CHECK(PMIx_Fence(&wild, 1, &collect, 1), "collecting fence over the group");
    PMIX_INFO_DESTRUCT(&collect);
    for (uint32_t r = 0; r < nprocs; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        snprintf(key, sizeof key, "boot.cid");
        expect_key(&p, key, text);
    }
    use_group("boot-add", 0, 6);
    printf("bootstrap add ok: %s, context id %zu\n", leader ? "leader" : "add member", cid);
}

static void mode_bad(void) {
    pmix_info_t info[2];
    int timeout = 30;
    pmix_status_t rc;
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    /* No leaders: not a count the construct could wait for. */
    load_bootstrap(&info[0], 0);
    rc = PMIx_Group_construct("boot-bad", &me, 1, info, 2, NULL, NULL);
    if (rc != PMIX_ERR_BAD_PARAM) FAIL("PMIX_GROUP_BOOTSTRAP 0: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&info[0]);
    /* Not a number. */
    PMIX_INFO_LOAD(&info[0], PMIX_GROUP_BOOTSTRAP, "two", PMIX_STRING);
    rc = PMIx_Group_construct("boot-bad", &me, 1, info, 2, NULL, NULL);
    if (rc != PMIX_ERR_BAD_PARAM) FAIL("PMIX_GROUP_BOOTSTRAP \"two\": %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&info[0]);
    /* A leader gives its own id in procs. */
    pmix_proc_t other;
    PMIX_LOAD_PROCID(&other, me.nspace, nprocs); /* beyond the job: not me */
    load_bootstrap(&info[0], 1);
    rc = PMIx_Group_construct("boot-bad", &other, 1, info, 2, NULL, NULL);
    if (rc != PMIX_ERR_BAD_PARAM) FAIL("a leader not in its procs: %s", PMIx_Error_string(rc));
    /* Nothing was left behind: the id names a group now. */
    CHECK(PMIx_Group_construct("boot-bad", &me, 1, info, 2, NULL, NULL), "construct after");
    CHECK(PMIx_Group_destruct("boot-bad", NULL, 0), "destruct");
    printf("bootstrap bad ok\n");
}

static void mode_timeout(void) {
    if (nprocs != 3) FAIL("timeout needs 3 ranks");
    pmix_status_t rc;
    if (me.rank == 2) {
        /* The latecomer: this fence completes once the others gave up. */
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
        rc = PMIx_Group_construct("boot-late", NULL, 0, NULL, 0, NULL, NULL);
        if (rc != PMIX_ERR_TIMEOUT) FAIL("the latecomer got %s", PMIx_Error_string(rc));
        printf("bootstrap latecomer got %s\n", PMIx_Error_string(rc));
        return;
    }
    if (me.rank == 0) {
        pmix_info_t info[3];
        int timeout = 2;
        pmix_proc_t adds[2];
        pmix_data_array_t darray = {PMIX_PROC, 2, adds};
        PMIX_LOAD_PROCID(&adds[0], me.nspace, 1);
        PMIX_LOAD_PROCID(&adds[1], me.nspace, 2);
        load_bootstrap(&info[0], 1);
        PMIX_INFO_LOAD(&info[1], PMIX_GROUP_ADD_MEMBERS, &darray, PMIX_DATA_ARRAY);
        PMIX_INFO_LOAD(&info[2], PMIX_TIMEOUT, &timeout, PMIX_INT);
        rc = PMIx_Group_construct("boot-late", &me, 1, info, 3, NULL, NULL);
        for (int i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    } else {
        /* No timeout of its own: the leader's ends the construct. */
        rc = PMIx_Group_construct("boot-late", NULL, 0, NULL, 0, NULL, NULL);
    }
    if (rc != PMIX_ERR_TIMEOUT) FAIL("construct without rank 2: %s", PMIx_Error_string(rc));
    printf("bootstrap timed out as expected\n");
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
}

/* A bootstrap construct that goes on without a participant that ended:
 * rank 3 dies right away (before or after its leader names it; either way
 * it is left out). */
static void mode_tolerant_dies(const char *attr) {
    if (nprocs != 4) FAIL("optional-dies needs 4 ranks");
    if (me.rank == 3) raise(SIGKILL);
    char text[64];
    snprintf(text, sizeof text, "rank %u", me.rank);
    put_commit("boot.key", text);
    pmix_info_t info[4];
    size_t n = 0;
    int timeout = 30;
    bool yes = true;
    pmix_proc_t add;
    PMIX_LOAD_PROCID(&add, me.nspace, me.rank + 1);
    PMIX_INFO_LOAD(&info[n++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&info[n++], attr, &yes, PMIX_BOOL);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc;
    if (me.rank % 2 == 0) {
        load_bootstrap(&info[n++], 2);
        PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_ADD_MEMBERS, &add, PMIX_PROC);
        rc = PMIx_Group_construct("boot-opt", &me, 1, info, n, &results, &nresults);
    } else {
        rc = PMIx_Group_construct("boot-opt", NULL, 0, info, n, &results, &nresults);
    }
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    if (rc != PMIX_ERR_PARTIAL_SUCCESS) FAIL("construct: %s", PMIx_Error_string(rc));
    check_results("boot-opt", 0, 3, results, nresults);
    PMIX_INFO_FREE(results, nresults);
    use_group("boot-opt", 0, 3);
    printf("bootstrap without the dead ok: 3 members\n");
}

static void mode_optional_late(void) {
    if (nprocs != 3) FAIL("optional-late needs 3 ranks");
    pmix_status_t rc;
    if (me.rank == 2) {
        /* The latecomer: this fence completes once the others formed it. */
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
        rc = PMIx_Group_construct("boot-opt-late", NULL, 0, NULL, 0, NULL, NULL);
        if (rc != PMIX_ERR_TIMEOUT) FAIL("the latecomer got %s", PMIx_Error_string(rc));
        printf("bootstrap optional latecomer got %s\n", PMIx_Error_string(rc));
        return;
    }
    pmix_info_t info[4];
    size_t n = 0;
    int timeout = 2;
    bool yes = true;
    PMIX_INFO_LOAD(&info[n++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_OPTIONAL, &yes, PMIX_BOOL);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    if (me.rank == 0) {
        pmix_proc_t adds[2];
        pmix_data_array_t darray = {PMIX_PROC, 2, adds};
        PMIX_LOAD_PROCID(&adds[0], me.nspace, 1);
        PMIX_LOAD_PROCID(&adds[1], me.nspace, 2);
        load_bootstrap(&info[n++], 1);
        PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_ADD_MEMBERS, &darray, PMIX_DATA_ARRAY);
        rc = PMIx_Group_construct("boot-opt-late", &me, 1, info, n, &results, &nresults);
    } else {
        rc = PMIx_Group_construct("boot-opt-late", NULL, 0, info, n, &results, &nresults);
    }
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    if (rc != PMIX_ERR_PARTIAL_SUCCESS) FAIL("construct without rank 2: %s", PMIx_Error_string(rc));
    check_results("boot-opt-late", 0, 2, results, nresults);
    PMIX_INFO_FREE(results, nresults);
    printf("bootstrap optional formed without the latecomer\n");
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
    CHECK(PMIx_Group_destruct("boot-opt-late", NULL, 0), "destruct");
}

/* ---- PMIX_GROUP_LEADER in a bootstrap construct (one server) ---- */

static atomic_int failed_about = -1; /* PMIX_GROUP_MEMBER_FAILED: the affected rank */
/* reduced_update_seen: PMIX_GROUP_MEMBERSHIP_UPDATE with every rank but the last */
static atomic_int abort_seen, reduced_update_seen;
static int leader_aborts;

/* across with 6 ranks: after the leader's decision, a relay of events
 * 0 -> 4 (node2) -> 3 (node1), and rank 3 calls only then. The relay's last
 * hop crosses node2's link to node1 behind node2's question about rank 5
 * (PMIX_GROUP_MEMBER_FAILED), so node1's server has both the question and
 * the leader's decision before rank 3 calls: it is not with the host yet,
 * and must have applied the decision itself. */
static const pmix_status_t kRelayEvent = PMIX_EXTERNAL_ERR_BASE - 145;
static int relay; /* the 6-rank form */
static atomic_int relay_seen;

static void relay_sent(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    if (status != PMIX_SUCCESS) FAIL("relay: %s", PMIx_Error_string(status));
}

/* Non-blocking: called from an event handler. */
static void relay_to(pmix_rank_t rank) {
    pmix_proc_t to;
    pmix_info_t info;
    PMIX_LOAD_PROCID(&to, me.nspace, rank);
    PMIX_INFO_LOAD(&info, PMIX_EVENT_CUSTOM_RANGE, &to, PMIX_PROC);
    CHECK(PMIx_Notify_event(kRelayEvent, &me, PMIX_RANGE_CUSTOM, &info, 1, relay_sent, NULL),
          "Notify_event (relay)");
    PMIX_INFO_DESTRUCT(&info);
}

static void leader_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                           pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    pmix_status_t answer = PMIX_SUCCESS;
    for (size_t i = 0; i < ninfo; ++i) {
        if (status == PMIX_GROUP_MEMBER_FAILED &&
            PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC))
            atomic_store(&failed_about, (int)info[i].value.data.proc->rank);
        if (status == PMIX_GROUP_MEMBERSHIP_UPDATE &&
            PMIX_CHECK_KEY(&info[i], PMIX_GROUP_MEMBERSHIP) &&
            info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray->size == nprocs - 1)
            atomic_store(&reduced_update_seen, 1);
    }
    if (status == PMIX_GROUP_MEMBER_FAILED && leader_aborts) answer = PMIX_GROUP_CONSTRUCT_ABORT;
    if (status == PMIX_GROUP_CONSTRUCT_ABORT) atomic_store(&abort_seen, 1);
    if (cbfunc != NULL) cbfunc(answer, NULL, 0, NULL, NULL, cbdata);
    if (relay && status == PMIX_GROUP_MEMBER_FAILED) relay_to(4); /* after the decision */
    if (relay && status == kRelayEvent && me.rank == 4) relay_to(3);
    if (relay && status == kRelayEvent && me.rank == 3) atomic_store(&relay_seen, 1);
}

static int results_say_leader(const pmix_info_t *results, size_t nresults) {
    for (size_t i = 0; i < nresults; ++i) {
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_LEADER) && PMIX_INFO_TRUE(&results[i])) return 1;
    }
    return 0;
}

/* across: under twonode_host (rank 0 on node0, rank 3 on node1): the
 * leader's decision crosses the servers; no fence over the group (that host
 * fences whole jobs only). With 6 ranks (twonode_host --nodes 3: rank 5 on
 * node2), the leader adds 1-5 and rank 5 dies: the group is 0-4. */
static void mode_leader_decides(int abort_it, int across) {
    if (nprocs != 4 && !(across && nprocs == 6))
        FAIL("leader-continue / leader-abort need 4 ranks (across: or 6)");
    const uint32_t last = nprocs - 1; /* dies */
    if (me.rank == last) raise(SIGKILL);
    leader_aborts = abort_it;
    relay = nprocs == 6 && !abort_it;
    pmix_status_t codes[] = {PMIX_GROUP_MEMBER_FAILED, PMIX_GROUP_CONSTRUCT_ABORT,
                             PMIX_GROUP_MEMBERSHIP_UPDATE, kRelayEvent};
    group_register(codes, 4, NULL, 0, leader_handler);
    char text[64];
    snprintf(text, sizeof text, "rank %u", me.rank);
    put_commit("boot.key", text);
    const char *grp = abort_it ? (across ? "boot-lead-abort-across" : "boot-lead-abort")
                               : (across ? "boot-lead-across" : "boot-lead");
    pmix_info_t info[4];
    size_t n = 0;
    int timeout = 30;
    bool yes = true;
    pmix_proc_t adds[5];
    pmix_data_array_t darray = {PMIX_PROC, last, adds};
    PMIX_INFO_LOAD(&info[n++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    if (me.rank == 0) {
        load_bootstrap(&info[n++], 1);
        for (uint32_t k = 0; k < last; ++k) PMIX_LOAD_PROCID(&adds[k], me.nspace, k + 1);
        PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_ADD_MEMBERS, &darray, PMIX_DATA_ARRAY);
        PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_LEADER, &yes, PMIX_BOOL);
    }
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    if (relay && me.rank == 3)
        while (!atomic_load(&relay_seen)) usleep(1000); /* bounded by alarm() */
    pmix_status_t rc = PMIx_Group_construct(grp, me.rank == 0 ? &me : NULL, me.rank == 0 ? 1 : 0,
                                            info, n, &results, &nresults);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    const pmix_status_t want = abort_it ? PMIX_GROUP_CONSTRUCT_ABORT : PMIX_ERR_PARTIAL_SUCCESS;
    if (rc != want) FAIL("construct: %s", PMIx_Error_string(rc));
    if (me.rank == 0 && atomic_load(&failed_about) != (int)last)
        FAIL("the leader had no PMIX_GROUP_MEMBER_FAILED about rank %u", last);
    if (me.rank != 0 && atomic_load(&failed_about) != -1)
        FAIL("an add member got PMIX_GROUP_MEMBER_FAILED");
    if (abort_it) {
        /* The others are told by the event, from the leader. */
        if (me.rank != 0)
            while (!atomic_load(&abort_seen)) usleep(1000); /* bounded by alarm() */
        printf("bootstrap leader abort ok\n");
        return;
    }
    check_results(grp, 0, last, results, nresults);
    if (results_say_leader(results, nresults) != (me.rank == 0))
        FAIL("PMIX_GROUP_LEADER in the results of rank %u is wrong", me.rank);
    PMIX_INFO_FREE(results, nresults);
    while (!atomic_load(&reduced_update_seen)) usleep(1000); /* bounded by alarm() */
    if (!across) {
        use_group(grp, 0, 3);
    } else {
        for (uint32_t g = 0; g < last; ++g) {
            pmix_proc_t real, by_group;
            PMIX_LOAD_PROCID(&real, me.nspace, g);
            PMIX_LOAD_PROCID(&by_group, grp, g);
            snprintf(text, sizeof text, "rank %u", g);
            expect_key(&real, "boot.key", text);
            expect_key(&by_group, "boot.key", text);
        }
        CHECK(PMIx_Group_destruct(grp, NULL, 0), "destruct");
    }
    printf("bootstrap leader went on ok: %u members\n", last);
}

/* ---- across the two servers of tests/multinode/twonode_host ---- */

static void need_two_nodes(void) {
    if (nprocs != 4) FAIL("the across modes need the 4 ranks of twonode_host");
}

static atomic_int update_seen; /* PMIX_GROUP_MEMBERSHIP_UPDATE with 3 members */

static void update_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                           pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_MEMBERSHIP) &&
            info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray->size == 3)
            atomic_store(&update_seen, 1);
    }
    if (cbfunc != NULL) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* One call of the across modes: a leader (BOOTSTRAP = nleaders, adding
 * `adds`) or an add member; returns the construct's status. */
static pmix_status_t across_call(const char *grp, int leader, size_t nleaders,
                                 const pmix_rank_t *adds, size_t nadds, int timeout,
                                 const char *flag, pmix_info_t **results, size_t *nresults) {
    pmix_info_t info[5];
    size_t n = 0;
    bool yes = true;
    pmix_proc_t procs[3];
    pmix_data_array_t darray = {PMIX_PROC, nadds, procs};
    PMIX_INFO_LOAD(&info[n++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    if (flag != NULL) PMIX_INFO_LOAD(&info[n++], flag, &yes, PMIX_BOOL);
    if (leader) {
        PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
        load_bootstrap(&info[n++], nleaders);
        for (size_t k = 0; k < nadds; ++k) PMIX_LOAD_PROCID(&procs[k], me.nspace, adds[k]);
        if (nadds > 0) PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_ADD_MEMBERS, &darray, PMIX_DATA_ARRAY);
    }
    pmix_status_t rc =
        PMIx_Group_construct(grp, leader ? &me : NULL, leader ? 1 : 0, info, n, results, nresults);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    return rc;
}

/* across / across-one-leader: the group of all four ranks. */
static void mode_across(int two_leaders) {
    need_two_nodes();
    char text[64];
    snprintf(text, sizeof text, "rank %u", me.rank);
    put_commit("boot.key", text);
    const char *grp = two_leaders ? "boot-across" : "boot-across-one";
    int leader;
    pmix_rank_t adds[3];
    size_t nadds = 0;
    if (two_leaders) {
        /* Each leader names a process served by the other server. */
        leader = me.rank == 0 || me.rank == 2;
        adds[nadds++] = me.rank == 0 ? 3 : 1;
    } else {
        leader = me.rank == 0;
        adds[nadds++] = 1, adds[nadds++] = 2, adds[nadds++] = 3;
    }
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    CHECK(across_call(grp, leader, two_leaders ? 2 : 1, adds, nadds, 30, NULL, &results, &nresults),
          leader ? "bootstrap construct (leader)" : "bootstrap construct (add member)");
    size_t cid = check_results(grp, 0, 4, results, nresults);
    PMIX_INFO_FREE(results, nresults);
    if (cid == SIZE_MAX) FAIL("no context id");
    /* The same at every member: exchanged through the group's own fence. */
    bool yes = true;
    snprintf(text, sizeof text, "%zu", cid);
    put_commit("boot.cid", text);
    pmix_proc_t wild;
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    PMIX_LOAD_PROCID(&wild, grp, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Fence(&wild, 1, &collect, 1), "collecting fence over the group");
    PMIX_INFO_DESTRUCT(&collect);
    for (uint32_t r = 0; r < nprocs; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        expect_key(&p, "boot.cid", text);
    }
    use_group(grp, 0, 4);
    printf("bootstrap across ok: %s, context id %zu\n", leader ? "leader" : "add member", cid);
}

/* across-dies / across-optional-dies: rank 3 (node1) dies; rank 0 (node0)
 * names it. */
static void mode_across_dies(int optional) {
    need_two_nodes();
    if (me.rank == 3) raise(SIGKILL);
    char text[64];
    snprintf(text, sizeof text, "rank %u", me.rank);
    put_commit("boot.key", text);
    if (optional) {
        pmix_status_t code = PMIX_GROUP_MEMBERSHIP_UPDATE;
        group_register(&code, 1, NULL, 0, update_handler);
    }
    const char *grp = optional ? "boot-across-opt" : "boot-across-dies";
    const int leader = me.rank == 0 || me.rank == 2;
    const pmix_rank_t add = me.rank == 0 ? 3 : 1;
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = across_call(grp, leader, 2, &add, 1, 30,
                                   optional ? PMIX_GROUP_OPTIONAL : NULL, &results, &nresults);
    if (!optional) {
        if (rc != PMIX_ERR_LOST_CONNECTION) FAIL("construct: %s", PMIx_Error_string(rc));
        printf("bootstrap across lost ok: %s\n", PMIx_Error_string(rc));
        return;
    }
    if (rc != PMIX_ERR_PARTIAL_SUCCESS) FAIL("construct: %s", PMIx_Error_string(rc));
    check_results(grp, 0, 3, results, nresults);
    PMIX_INFO_FREE(results, nresults);
    while (!atomic_load(&update_seen)) usleep(1000); /* bounded by alarm() */
    for (uint32_t g = 0; g < 3; ++g) {
        pmix_proc_t real, by_group;
        PMIX_LOAD_PROCID(&real, me.nspace, g);
        PMIX_LOAD_PROCID(&by_group, grp, g);
        snprintf(text, sizeof text, "rank %u", g);
        expect_key(&real, "boot.key", text);
        expect_key(&by_group, "boot.key", text);
    }
    CHECK(PMIx_Group_destruct(grp, NULL, 0), "destruct");
    printf("bootstrap across without the dead ok: 3 members\n");
}

/* across-leader-dies: rank 0 (node0), the only leader, declares
 * PMIX_GROUP_LEADER and names 1, 2, 3, then dies before rank 3 (node1)
 * called: no election in the bootstrap method, the construct fails with
 * PMIX_ERR_LOST_CONNECTION for ranks 1 (node0) and 2 (node1). Rank 3 stays
 * until rank 2 tells it (an event on node1) that its call returned. */
static const pmix_status_t kDoneEvent = PMIX_EXTERNAL_ERR_BASE - 143;
static atomic_int done_seen;

static void done_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                         pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    atomic_store(&done_seen, 1);
    if (cbfunc != NULL) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void mode_across_leader_dies(void) {
    need_two_nodes();
    const char *grp = "boot-lead-dies-across";
    if (me.rank == 3) {
        pmix_status_t code = kDoneEvent;
        group_register(&code, 1, NULL, 0, done_handler);
    }
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence"); /* rank 3 listens */
    if (me.rank == 3) {
        while (!atomic_load(&done_seen)) usleep(1000); /* bounded by alarm() */
        printf("bootstrap leader dies ok: rank 3 stayed\n");
        return;
    }
    pmix_info_t info[4];
    size_t n = 0;
    int timeout = 30;
    bool yes = true;
    pmix_proc_t adds[3];
    pmix_data_array_t darray = {PMIX_PROC, 3, adds};
    PMIX_INFO_LOAD(&info[n++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    if (me.rank == 0) {
        load_bootstrap(&info[n++], 1);
        for (uint32_t k = 0; k < 3; ++k) PMIX_LOAD_PROCID(&adds[k], me.nspace, k + 1);
        PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_ADD_MEMBERS, &darray, PMIX_DATA_ARRAY);
        PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_LEADER, &yes, PMIX_BOOL);
        CHECK(PMIx_Group_construct_nb(grp, &me, 1, info, n, NULL, NULL), "construct_nb");
        /* A round trip to the server after the construct: it has the call. */
        pmix_query_t q;
        pmix_status_t arc;
        PMIX_QUERY_CONSTRUCT(&q);
        PMIX_ARGV_APPEND(arc, q.keys, PMIX_QUERY_NUM_GROUPS);
        (void)arc;
        pmix_info_t *qres = NULL;
        size_t nqres = 0;
        (void)PMIx_Query_info(&q, 1, &qres, &nqres);
        raise(SIGKILL);
    }
    pmix_status_t rc = PMIx_Group_construct(grp, NULL, 0, info, n, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    if (rc != PMIX_ERR_LOST_CONNECTION) FAIL("construct: %s", PMIx_Error_string(rc));
    if (me.rank == 2) {
        pmix_info_t range;
        pmix_proc_t three;
        PMIX_LOAD_PROCID(&three, me.nspace, 3);
        PMIX_INFO_LOAD(&range, PMIX_EVENT_CUSTOM_RANGE, &three, PMIX_PROC);
        CHECK(PMIx_Notify_event(kDoneEvent, &me, PMIX_RANGE_CUSTOM, &range, 1, NULL, NULL),
              "Notify_event");
        PMIX_INFO_DESTRUCT(&range);
    }
    printf("bootstrap leader dies ok: %s\n", PMIx_Error_string(rc));
}

/* across-two-leaders: leaders 0 (node0, adding 3) and 2 (node1, adding 1)
 * both declare PMIX_GROUP_LEADER; once both calls are with their servers
 * (a round trip after construct_nb), they tell rank 3 (node1) to die: each
 * leader, on its own server, gets PMIX_GROUP_MEMBER_FAILED about it, both go
 * on, and both servers form 0,1,2 (PARTIAL_SUCCESS, PMIX_GROUP_LEADER in the
 * results of 0 and 2 only, the update). Each server awaits the other's
 * leader's decision. */
static const pmix_status_t kDieEvent = PMIX_EXTERNAL_ERR_BASE - 144;
static atomic_int die_asked;

static void die_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                        pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                        pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    if (atomic_fetch_add(&die_asked, 1) + 1 == 2) raise(SIGKILL); /* both leaders called */
    if (cbfunc != NULL) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static struct {
    atomic_int done; /* set last, on the progress thread */
    pmix_status_t status;
    int leader;
    char members[64];
} two;

static void two_cb(pmix_status_t status, pmix_info_t *results, size_t nresults, void *cbdata,
                   pmix_release_cbfunc_t release, void *release_data) {
    (void)cbdata;
    two.status = status;
    two.leader = results_say_leader(results, nresults);
    for (size_t i = 0; i < nresults; ++i) {
        if (!PMIX_CHECK_KEY(&results[i], PMIX_GROUP_MEMBERSHIP)) continue;
        pmix_proc_t *m = (pmix_proc_t *)results[i].value.data.darray->array;
        for (size_t k = 0; k < results[i].value.data.darray->size; ++k) {
            char one[16];
            snprintf(one, sizeof one, "%s%u", k ? "," : "", m[k].rank);
            strncat(two.members, one, sizeof two.members - strlen(two.members) - 1);
        }
    }
    if (release != NULL) release(release_data);
    atomic_store(&two.done, 1);
}

static void mode_across_two_leaders(void) {
    need_two_nodes();
    const char *grp = "boot-two-leaders-across";
    pmix_status_t codes[] = {PMIX_GROUP_MEMBER_FAILED, PMIX_GROUP_CONSTRUCT_ABORT,
                             PMIX_GROUP_MEMBERSHIP_UPDATE};
    group_register(codes, 3, NULL, 0, leader_handler);
    if (me.rank == 3) {
        pmix_status_t code = kDieEvent;
        group_register(&code, 1, NULL, 0, die_handler);
    }
    char text[64];
    snprintf(text, sizeof text, "rank %u", me.rank);
    put_commit("boot.key", text);
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence"); /* every handler is in */
    if (me.rank == 3) {
        for (;;) usleep(1000); /* dies in die_handler; bounded by alarm() */
    }
    const int leader = me.rank == 0 || me.rank == 2;
    pmix_info_t info[4];
    size_t n = 0;
    int timeout = 30;
    bool yes = true;
    size_t nleaders = 2;
    pmix_proc_t add;
    PMIX_LOAD_PROCID(&add, me.nspace, me.rank == 0 ? 3 : 1);
    PMIX_INFO_LOAD(&info[n++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    if (leader) {
        PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_BOOTSTRAP, &nleaders, PMIX_SIZE);
        PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_ADD_MEMBERS, &add, PMIX_PROC);
        PMIX_INFO_LOAD(&info[n++], PMIX_GROUP_LEADER, &yes, PMIX_BOOL);
    }
    CHECK(PMIx_Group_construct_nb(grp, leader ? &me : NULL, leader ? 1 : 0, info, n, two_cb, NULL),
          "construct_nb");
    if (leader) {
        /* A round trip to the server after the construct: it has the call. */
        pmix_query_t q;
        pmix_status_t arc;
        PMIX_QUERY_CONSTRUCT(&q);
        PMIX_ARGV_APPEND(arc, q.keys, PMIX_QUERY_NUM_GROUPS);
        (void)arc;
        pmix_info_t *qres = NULL;
        size_t nqres = 0;
        (void)PMIx_Query_info(&q, 1, &qres, &nqres);
        if (qres != NULL) PMIX_INFO_FREE(qres, nqres);
        PMIX_QUERY_DESTRUCT(&q);
        pmix_info_t range;
        pmix_proc_t three;
        PMIX_LOAD_PROCID(&three, me.nspace, 3);
        PMIX_INFO_LOAD(&range, PMIX_EVENT_CUSTOM_RANGE, &three, PMIX_PROC);
        CHECK(PMIx_Notify_event(kDieEvent, &me, PMIX_RANGE_CUSTOM, &range, 1, NULL, NULL),
              "Notify_event");
        PMIX_INFO_DESTRUCT(&range);
    }
    while (!atomic_load(&two.done)) usleep(1000); /* bounded by alarm() */
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    if (two.status != PMIX_ERR_PARTIAL_SUCCESS)
        FAIL("construct: %s", PMIx_Error_string(two.status));
    if (leader && atomic_load(&failed_about) != 3)
        FAIL("leader %u had no PMIX_GROUP_MEMBER_FAILED about rank 3", me.rank);
    if (!leader && atomic_load(&failed_about) != -1)
        FAIL("an add member got PMIX_GROUP_MEMBER_FAILED");
    if (two.leader != leader) FAIL("PMIX_GROUP_LEADER in the results of rank %u is wrong", me.rank);
    if (strcmp(two.members, "0,1,2") != 0) FAIL("membership %s, not 0,1,2", two.members);
    while (!atomic_load(&reduced_update_seen)) usleep(1000); /* bounded by alarm() */
    for (uint32_t g = 0; g < 3; ++g) {
        pmix_proc_t real;
        PMIX_LOAD_PROCID(&real, me.nspace, g);
        snprintf(text, sizeof text, "rank %u", g);
        expect_key(&real, "boot.key", text);
    }
    CHECK(PMIx_Group_destruct(grp, NULL, 0), "destruct");
    printf("bootstrap two leaders went on ok: %s\n", two.members);
}

/* across-timeout: rank 2 (node1), named by rank 0 (node0), comes late. */
static void mode_across_timeout(void) {
    need_two_nodes();
    pmix_status_t rc;
    if (me.rank == 3) {
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
        return;
    }
    if (me.rank == 2) {
        /* The latecomer: this fence completes once the others gave up. */
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
        rc = PMIx_Group_construct("boot-across-late", NULL, 0, NULL, 0, NULL, NULL);
        if (rc != PMIX_ERR_TIMEOUT) FAIL("the latecomer got %s", PMIx_Error_string(rc));
        printf("bootstrap across latecomer got %s\n", PMIx_Error_string(rc));
        return;
    }
    const pmix_rank_t adds[2] = {1, 2};
    rc = across_call("boot-across-late", me.rank == 0, 1, adds, 2, 2, NULL, NULL, NULL);
    if (rc != PMIX_ERR_TIMEOUT) FAIL("construct without rank 2: %s", PMIx_Error_string(rc));
    printf("bootstrap across timed out as expected\n");
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
}

/* ---- groupsft: leaders on the two servers that disagree on the count ---- */

/* across-count-mismatch: rank 0 (node0) leads with PMIX_GROUP_BOOTSTRAP 2,
 * rank 2 (node1) with 3, each naming only itself; ranks 1 and 3 stay out.
 * A server that holds its own leader when the other's announcement comes
 * refuses the announced one (PMIX_ERR_BAD_PARAM, told to its server); a
 * leader not refused goes on waiting for leaders of its own count until its
 * PMIX_TIMEOUT (5 s). No group forms, nothing hangs, and at least one leader
 * is refused: the two compare their statuses through a fence of ranks 0, 2. */
static void mode_across_count_mismatch(void) {
    need_two_nodes();
    if (me.rank == 1 || me.rank == 3) return;
    pmix_status_t rc =
        across_call("boot-across-count", 1, me.rank == 0 ? 2 : 3, NULL, 0, 5, NULL, NULL, NULL);
    if (rc != PMIX_ERR_BAD_PARAM && rc != PMIX_ERR_TIMEOUT)
        FAIL("a leader whose count differs got %s", PMIx_Error_string(rc));
    char text[16];
    snprintf(text, sizeof text, "%d", (int)rc);
    put_commit("count.rc", text);
    pmix_proc_t pair[2];
    pmix_info_t collect;
    bool yes = true;
    PMIX_LOAD_PROCID(&pair[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&pair[1], me.nspace, 2);
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Fence(pair, 2, &collect, 1), "fence of the two leaders");
    pmix_value_t *val = NULL;
    CHECK(PMIx_Get(&pair[me.rank == 0 ? 1 : 0], "count.rc", NULL, 0, &val), "Get count.rc");
    const pmix_status_t other = (pmix_status_t)atoi(val->data.string);
    PMIX_VALUE_RELEASE(val);
    if (rc != PMIX_ERR_BAD_PARAM && other != PMIX_ERR_BAD_PARAM)
        FAIL("neither leader was refused (both: %s)", PMIx_Error_string(rc));
    printf("bootstrap across count mismatch ok: rank %u got %s\n", me.rank, PMIx_Error_string(rc));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr,
                "usage: group_bootstrap_client "
                "leaders|add|bad|timeout|optional-dies|ft-dies|optional-late|leader-continue|"
                "leader-abort|across|"
                "across-one-leader|across-dies|across-optional-dies|across-timeout|"
                "across-leader-continue|across-leader-abort|across-leader-dies|"
                "across-two-leaders|across-count-mismatch\n");
        return 2;
    }
    alarm(90); /* every wait below is bounded */
    CHECK(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    nprocs = job_size();
    const char *mode = argv[1];
    if (strcmp(mode, "leaders") == 0) {
        mode_leaders();
    } else if (strcmp(mode, "add") == 0) {
        mode_add();
    } else if (strcmp(mode, "bad") == 0) {
        mode_bad();
    } else if (strcmp(mode, "timeout") == 0) {
        mode_timeout();
    } else if (strcmp(mode, "optional-dies") == 0) {
        mode_tolerant_dies(PMIX_GROUP_OPTIONAL);
    } else if (strcmp(mode, "optional-late") == 0) {
        mode_optional_late();
    } else if (strcmp(mode, "ft-dies") == 0) {
        mode_tolerant_dies(PMIX_GROUP_FT_COLLECTIVE);
    } else if (strcmp(mode, "leader-continue") == 0) {
        mode_leader_decides(0, 0);
    } else if (strcmp(mode, "leader-abort") == 0) {
        mode_leader_decides(1, 0);
    } else if (strcmp(mode, "across-leader-continue") == 0) {
        mode_leader_decides(0, 1);
    } else if (strcmp(mode, "across-leader-abort") == 0) {
        mode_leader_decides(1, 1);
    } else if (strcmp(mode, "across-leader-dies") == 0) {
        mode_across_leader_dies();
    } else if (strcmp(mode, "across-two-leaders") == 0) {
        mode_across_two_leaders();
    } else if (strcmp(mode, "across") == 0) {
        mode_across(1);
    } else if (strcmp(mode, "across-one-leader") == 0) {
        mode_across(0);
    } else if (strcmp(mode, "across-dies") == 0) {
        mode_across_dies(0);
    } else if (strcmp(mode, "across-optional-dies") == 0) {
        mode_across_dies(1);
    } else if (strcmp(mode, "across-timeout") == 0) {
        mode_across_timeout();
    } else if (strcmp(mode, "across-count-mismatch") == 0) {
        mode_across_count_mismatch();
    } else {
        FAIL("unknown mode %s", mode);
    }
    CHECK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
