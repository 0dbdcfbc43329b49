/* Leaders and aborts of a collective PMIx_Group_construct (docs/groups.md,
 * "Leaders of a collective construct"), one rule per mode; rank 0 declares
 * itself the leader (PMIX_GROUP_LEADER). Each wait is bounded: alarm() for
 * events and callbacks, PMIX_TIMEOUT on the calls, pmixrun --timeout and the
 * ctest TIMEOUT around it. Ordering comes from fences and events, never from
 * time: rank 0's construct_nb leaves on its socket before its (collecting,
 * so server-side) fence request, so the server holds it once the fence
 * completed.
 *
 * usage: group_leader_client member-dies - with PMIX_GROUP_NOTIFY_TERMINATION
 *                                 the last rank dies before constructing:
 *                                 PMIX_GROUP_MEMBER_FAILED to the leader only,
 *                                 whose handler goes on: PARTIAL_SUCCESS
 *                                 without it, the leader's results say
 *                                 PMIX_GROUP_LEADER
 *        group_leader_client member-dies-abort - the same, the leader's
 *                                 handler returns PMIX_GROUP_CONSTRUCT_ABORT:
 *                                 every construct (blocking and _nb) returns
 *                                 it and the others get that event
 *        group_leader_client leader-dies | leader-dies-default - the leader
 *                                 dies after its construct_nb:
 *                                 PMIX_GROUP_LEADER_FAILED to the others; rank
 *                                 2 volunteers (PMIX_GROUP_LEADER in its
 *                                 handler's results) / nobody does and rank 1
 *                                 (the lowest group rank) leads;
 *                                 PMIX_GROUP_LEADER_SELECTED names it, the
 *                                 construct completes without rank 0
 *        group_leader_client leader-dies-across | leader-dies-across-default
 *                                 | leader-dies-across-abort - across the two
 *                                 servers of the multinode host (4 ranks,
 *                                 0,1 on node0, 2,3 on node1), the procs in
 *                                 the order 0,3,2,1: the leader (rank 0)
 *                                 dies after its construct_nb;
 *                                 PMIX_GROUP_LEADER_FAILED to ranks 1-3 on
 *                                 both servers; ranks 1 (node0) and 2 (node1)
 *                                 volunteer and rank 2, the lower group rank,
 *                                 leads / nobody volunteers and rank 3 (group
 *                                 rank 1) leads / rank 1 aborts: every
 *                                 construct returns PMIX_GROUP_CONSTRUCT_ABORT
 *        group_leader_client leader-dies-across-abort-held - the abort with
 *                                 node1's host holding its answer
 *                                 (TWONODE_HOLD_GROUPS=node1): node0's
 *                                 abort reaches node1's server before its
 *                                 answer; ranks 2, 3 still get
 *                                 PMIX_GROUP_LEADER_FAILED before their
 *                                 constructs return the abort, then rank 2
 *                                 releases the (ignored) answer
 *        group_leader_client member-lost-after-host | member-lost-after-host-optional
 *                                 - across the two servers with the host
 *                                 holding its group answers
 *                                 (TWONODE_HOLD_GROUPS): every rank
 *                                 constructs, both servers call the host,
 *                                 rank 3 (node1) dies, then rank 2 releases
 *                                 the answers: the construct fails with
 *                                 PMIX_ERR_LOST_CONNECTION on both servers /
 *                                 with PMIX_GROUP_OPTIONAL returns
 *                                 PARTIAL_SUCCESS with 0,1,2 on both, and
 *                                 PMIX_GROUP_MEMBERSHIP_UPDATE follows
 *        group_leader_client member-lost-after-answer - across the two
 *                                 servers, node1's host holding its answers
 *                                 (TWONODE_HOLD_GROUPS=node1), with
 *                                 PMIX_GROUP_OPTIONAL and
 *                                 PMIX_GROUP_NOTIFY_TERMINATION: node0's
 *                                 group forms (ranks 0, 1: SUCCESS with
 *                                 0,1,2,3), then rank 3 (node1) dies; node1's
 *                                 "member lost" message reaches node0 after
 *                                 its group formed: ranks 0, 1 get
 *                                 PMIX_GROUP_MEMBER_FAILED and the update;
 *                                 rank 2 then releases node1's answer:
 *                                 PARTIAL_SUCCESS with 0,1,2; both servers
 *                                 answer the membership query 0,1,2 and the
 *                                 three destruct the group
 *        group_leader_client leader-aborts-before-host - across the two
 *                                 servers: ranks 0 (the leader), 2 and 3
 *                                 construct, node1's server calls the host,
 *                                 rank 1 (node0) dies and the leader's
 *                                 handler aborts before node0's server called
 *                                 the host: every construct returns
 *                                 PMIX_GROUP_CONSTRUCT_ABORT and the host
 *                                 holds no group operation at the end
 *        group_leader_client abort-event - rank 0 (a participant, the leader)
 *                                 calls construct_nb, then generates
 *                                 PMIX_GROUP_CONSTRUCT_ABORT itself
 *                                 (PMIx_Notify_event): every construct,
 *                                 blocking and _nb, returns that status (the
 *                                 last rank constructs only after it got the
 *                                 event, so the construct is still open) */
#include <pmix.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "group_common.h"

static const char *mode;

static const char *GRP = "ldr-grp";

/* What the handlers saw (written on the progress thread, read by main). */
static _Atomic int member_failed = 0, leader_failed = 0, selected = 0, aborted = 0, updated = 0;

/* twonode_host (TWONODE_HOLD_GROUPS) answers the group upcalls once a client
 * notifies this code (tests/multinode/twonode_host.cpp). */
#define RELEASE_GROUPS (PMIX_EXTERNAL_ERR_BASE - 140)
static _Atomic pmix_rank_t failed_rank = PMIX_RANK_UNDEF, new_leader = PMIX_RANK_UNDEF;

static const pmix_proc_t *affected(const pmix_info_t info[], size_t ninfo) {
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC)) return info[i].value.data.proc;
    return NULL;
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    pmix_status_t answer = PMIX_SUCCESS;
    static pmix_info_t volunteer;
    pmix_info_t *out = NULL;
    size_t nout = 0;
    const pmix_proc_t *who = affected(info, ninfo);
    switch (status) {
        case PMIX_GROUP_MEMBER_FAILED:
            if (who != NULL) failed_rank = who->rank;
            member_failed = 1;
            if (strcmp(mode, "member-dies-abort") == 0 ||
                strcmp(mode, "leader-aborts-before-host") == 0)
                answer = PMIX_GROUP_CONSTRUCT_ABORT;
            break;
        case PMIX_GROUP_LEADER_FAILED:
            leader_failed = 1;
            if (strncmp(mode, "leader-dies-across-abort", 24) == 0 && me.rank == 1)
                answer = PMIX_GROUP_CONSTRUCT_ABORT;
            if ((strcmp(mode, "leader-dies") == 0 && me.rank == 2) ||
                (strcmp(mode, "leader-dies-across") == 0 && (me.rank == 1 || me.rank == 2))) {
                bool yes = true;
                PMIX_INFO_LOAD(&volunteer, PMIX_GROUP_LEADER, &yes, PMIX_BOOL);
                out = &volunteer;
                nout = 1;
            }
            break;
        case PMIX_GROUP_LEADER_SELECTED:
            if (who != NULL) new_leader = who->rank;
            selected = 1;
            break;
        case PMIX_GROUP_CONSTRUCT_ABORT:
            aborted = 1;
            break;
        case PMIX_GROUP_MEMBERSHIP_UPDATE:
            updated = 1;
            break;
        default:
            break;
    }
    if (cbfunc != NULL) cbfunc(answer, out, nout, NULL, NULL, cbdata);
}

static void registered(pmix_status_t status, size_t ref, void *cbdata) {
    (void)ref;
    *(_Atomic pmix_status_t *)cbdata = status;
}

static void wait_flag(_Atomic int *flag) {
    while (!*flag) usleep(1000); /* bounded by alarm() */
}

/* A fence through the server (every rank named, not the job's wildcard: it
 * never takes the job's shared-memory barrier, where a collecting fence over
 * the whole job goes too, framework/server/README.md): the caller's requests
 * sent before it, on the same socket, have reached the server once it
 * completes. */
static void server_fence(void) {
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_proc_t *all = calloc(nprocs, sizeof *all);
    if (all == NULL) FAIL("calloc");
    for (uint32_t r = 0; r < nprocs; ++r) PMIX_LOAD_PROCID(&all[r], me.nspace, r);
    CHECK(PMIx_Fence(all, nprocs, &collect, 1), "Fence");
    free(all);
}

struct nb {
    _Atomic int done;
    pmix_status_t status;
    int leader;
    char members[128];
};

/* The membership in `results` as ranks ("1,2,3"), and whether they say
 * that this process leads the group. */
static void read_results(pmix_info_t *results, size_t n, char *members, size_t len, int *leader) {
    members[0] = '\0';
    *leader = 0;
    for (size_t i = 0; i < n; ++i) {
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_LEADER))
            *leader = PMIX_INFO_TRUE(&results[i]) ? 1 : 0;
        if (!PMIX_CHECK_KEY(&results[i], PMIX_GROUP_MEMBERSHIP)) continue;
        pmix_proc_t *p = (pmix_proc_t *)results[i].value.data.darray->array;
        for (size_t k = 0; k < results[i].value.data.darray->size; ++k) {
            char one[16];
            snprintf(one, sizeof one, "%s%u", k ? "," : "", p[k].rank);
            strncat(members, one, len - strlen(members) - 1);
        }
    }
}

static void construct_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                         pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    struct nb *r = cbdata;
    read_results(info, ninfo, r->members, sizeof r->members, &r->leader);
    r->status = status;
    r->done = 1;
    if (release_fn != NULL) release_fn(release_cbdata);
}

/* The construct over every rank, blocking or not, as leader or not. */
static pmix_proc_t *procs;
static pmix_info_t dirs[3];
static size_t ndirs;

static void directives(int leader) {
    bool yes = true;
    int timeout = 60;
    ndirs = 0;
    PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_GROUP_NOTIFY_TERMINATION, &yes, PMIX_BOOL);
    if (leader) PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_GROUP_LEADER, &yes, PMIX_BOOL);
}

static void construct_nb(struct nb *r) {
    memset(r, 0, sizeof *r);
    CHECK(PMIx_Group_construct_nb(GRP, procs, nprocs, dirs, ndirs, construct_cb, r),
          "construct_nb");
}

static pmix_status_t construct_blocking(char *members, size_t len, int *leader) {
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Group_construct(GRP, procs, nprocs, dirs, ndirs, &results, &nresults);
    read_results(results, nresults, members, len, leader);
    PMIX_INFO_FREE(results, nresults);
    return rc;
}

/* The members but `gone`, as read_results() writes them. */
static void members_but(pmix_rank_t gone, char *out, size_t len) {
    out[0] = '\0';
    for (uint32_t r = 0; r < nprocs; ++r) {
        if (r == gone) continue;
        char one[16];
        snprintf(one, sizeof one, "%s%u", out[0] ? "," : "", r);
        strncat(out, one, len - strlen(out) - 1);
    }
}

static void mode_member_dies(int abort_it) {
    const pmix_rank_t last = nprocs - 1;
    char want[128], members[128] = "";
    int leader = 0;
    pmix_status_t rc;
    struct nb r;
    members_but(last, want, sizeof want);
    directives(me.rank == 0);
    if (me.rank == 0) construct_nb(&r);
    server_fence(); /* rank 0's construct is in */
    if (me.rank == last) raise(SIGKILL);
    if (me.rank == 0) {
        wait_flag(&r.done);
        rc = r.status;
        strcpy(members, r.members);
        leader = r.leader;
        if (!member_failed || failed_rank != last)
            FAIL("the leader had no PMIX_GROUP_MEMBER_FAILED about rank %u", last);
    } else {
        rc = construct_blocking(members, sizeof members, &leader);
    }
    if (abort_it) {
        if (rc != PMIX_GROUP_CONSTRUCT_ABORT) FAIL("construct: %s", PMIx_Error_string(rc));
        if (me.rank != 0) wait_flag(&aborted);
        printf("group leader abort ok\n");
        return;
    }
    if (rc != PMIX_ERR_PARTIAL_SUCCESS) FAIL("construct: %s", PMIx_Error_string(rc));
    if (strcmp(members, want) != 0) FAIL("membership %s, not %s", members, want);
    if (leader != (me.rank == 0)) FAIL("the results say leader=%d", leader);
    /* Only the leader is told: the others' handlers ran for nothing. The
     * event would have come before the construct's answer. */
    CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
    if (me.rank != 0 && member_failed) FAIL("a non-leader got PMIX_GROUP_MEMBER_FAILED");
    printf("group leader decides ok: %s\n", members);
}

static void mode_leader_dies(int volunteer) {
    const pmix_rank_t expected = volunteer ? 2 : 1;
    char want[128], members[128] = "";
    int leader = 0;
    struct nb r;
    members_but(0, want, sizeof want);
    directives(me.rank == 0);
    if (me.rank == 0) construct_nb(&r);
    server_fence(); /* rank 0's construct is in */
    if (me.rank == 0) raise(SIGKILL);
    /* The last rank constructs only once the new leader is known: the
     * construct cannot complete before the leader's death. */
    if (me.rank == nprocs - 1) wait_flag(&selected);
    pmix_status_t rc = construct_blocking(members, sizeof members, &leader);
    if (rc != PMIX_ERR_PARTIAL_SUCCESS) FAIL("construct: %s", PMIx_Error_string(rc));
    if (!leader_failed) FAIL("no PMIX_GROUP_LEADER_FAILED");
    wait_flag(&selected);
    if (new_leader != expected) FAIL("PMIX_GROUP_LEADER_SELECTED names rank %u", new_leader);
    if (strcmp(members, want) != 0) FAIL("membership %s, not %s", members, want);
    if (leader != (me.rank == expected)) FAIL("the results say leader=%d", leader);
    CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
    printf("group new leader ok: rank %u leads %s\n", new_leader, members);
}

/* Across the two servers: rank 0, the only leader, dies after its
 * construct_nb (it was in at node0's server: the fence after it went
 * through the server). A fence with PMIX_GROUP_FT_COLLECTIVE over the job
 * completes only once node0's server handled the death, so the construct
 * then reaches both servers' hosts with the leader failed. */
static void mode_leader_dies_across(int volunteers, int abort_it, int held) {
    const pmix_rank_t expected = volunteers ? 2 : 3;
    const char *want = "3,2,1";
    char members[128] = "";
    int leader = 0;
    struct nb r;
    if (nprocs != 4) FAIL("leader-dies-across wants 4 ranks");
    for (uint32_t k = 1; k < nprocs; ++k) PMIX_LOAD_PROCID(&procs[k], me.nspace, nprocs - k);
    directives(me.rank == 0);
    if (me.rank == 0) construct_nb(&r);
    server_fence(); /* rank 0's construct is in */
    if (me.rank == 0) raise(SIGKILL);
    pmix_info_t ft[2];
    bool yes = true;
    PMIX_INFO_LOAD(&ft[0], PMIX_GROUP_FT_COLLECTIVE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&ft[1], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Fence(NULL, 0, ft, 2), "fence with PMIX_GROUP_FT_COLLECTIVE");
    pmix_status_t rc = construct_blocking(members, sizeof members, &leader);
    if (!leader_failed) FAIL("no PMIX_GROUP_LEADER_FAILED");
    if (held && me.rank == 2) /* node1's answer comes after the abort now */
        CHECK(PMIx_Notify_event(RELEASE_GROUPS, &me, PMIX_RANGE_RM, NULL, 0, NULL, NULL),
              "Notify_event (release the host's answers)");
    if (abort_it) {
        if (rc != PMIX_GROUP_CONSTRUCT_ABORT) FAIL("construct: %s", PMIx_Error_string(rc));
        if (me.rank != 1) wait_flag(&aborted);
        if (selected) FAIL("PMIX_GROUP_LEADER_SELECTED after an abort");
        printf("group leader across abort ok\n");
        return;
    }
    if (rc != PMIX_ERR_PARTIAL_SUCCESS) FAIL("construct: %s", PMIx_Error_string(rc));
    wait_flag(&selected);
    if (new_leader != expected) FAIL("PMIX_GROUP_LEADER_SELECTED names rank %u", new_leader);
    if (strcmp(members, want) != 0) FAIL("membership %s, not %s", members, want);
    if (leader != (me.rank == expected)) FAIL("the results say leader=%d", leader);
    CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
    printf("group new leader across ok: rank %u leads %s\n", new_leader, members);
}

/* A fence through both servers that goes on without a rank that ended: it
 * completes only once the dead rank's server handled its end. */
static void ft_fence(void) {
    pmix_info_t ft[2];
    bool yes = true;
    PMIX_INFO_LOAD(&ft[0], PMIX_GROUP_FT_COLLECTIVE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&ft[1], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Fence(NULL, 0, ft, 2), "fence with PMIX_GROUP_FT_COLLECTIVE");
}

/* Rank 3 ends after both servers handed the construct to the host. Node1's
 * server handled its end before the FT fence completed (and told node0
 * through the host then); rank 2, on node1, releases the host's answers
 * after it, so the message is ahead of the answer at node0 too. */
static void mode_member_lost_after_host(int optional) {
    bool yes = true;
    int timeout = 60;
    struct nb r;
    if (nprocs != 4) FAIL("member-lost-after-host wants 4 ranks");
    ndirs = 0;
    PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    if (optional) PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_GROUP_OPTIONAL, &yes, PMIX_BOOL);
    construct_nb(&r);
    server_fence(); /* every construct is in: both servers called the host */
    if (me.rank == 3) raise(SIGKILL);
    ft_fence();
    if (me.rank == 2)
        CHECK(PMIx_Notify_event(RELEASE_GROUPS, &me, PMIX_RANGE_RM, NULL, 0, NULL, NULL),
              "Notify_event (release the host's answers)");
    wait_flag(&r.done);
    if (!optional) {
        if (r.status != PMIX_ERR_LOST_CONNECTION)
            FAIL("construct: %s", PMIx_Error_string(r.status));
        printf("group member lost after host ok: %s\n", PMIx_Error_string(r.status));
        return;
    }
    if (r.status != PMIX_ERR_PARTIAL_SUCCESS) FAIL("construct: %s", PMIx_Error_string(r.status));
    if (strcmp(r.members, "0,1,2") != 0) FAIL("membership %s, not 0,1,2", r.members);
    wait_flag(&updated);
    CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
    printf("group member lost after host ok: %s\n", r.members);
}

/* The membership of GRP as this process's server knows it ("0,1,2"). */
static void server_membership(char *out, size_t len) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t arc;
    PMIX_ARGV_APPEND(arc, q.keys, PMIX_QUERY_GROUP_MEMBERSHIP);
    (void)arc;
    PMIX_INFO_CREATE(q.qualifiers, 1);
    q.nqual = 1;
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_GROUP_ID, GRP, PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    CHECK(PMIx_Query_info(&q, 1, &results, &nresults), "Query");
    out[0] = '\0';
    for (size_t j = 0; j < nresults; ++j) {
        if (!PMIX_CHECK_KEY(&results[j], PMIX_QUERY_RESULTS)) continue;
        pmix_info_t *r = (pmix_info_t *)results[j].value.data.darray->array;
        for (size_t i = 0; i < results[j].value.data.darray->size; ++i)
            if (PMIX_CHECK_KEY(&r[i], PMIX_QUERY_GROUP_MEMBERSHIP)) {
                const pmix_proc_t *p = (const pmix_proc_t *)r[i].value.data.darray->array;
                for (size_t k = 0; k < r[i].value.data.darray->size; ++k) {
                    char one[16];
                    snprintf(one, sizeof one, "%s%u", k ? "," : "", p[k].rank);
                    strncat(out, one, len - strlen(out) - 1);
                }
            }
    }
    PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_DESTRUCT(&q);
}

/* Node0's group forms before rank 3 dies; node1 still holds its answer. */
static void mode_member_lost_after_answer(void) {
    bool yes = true;
    int timeout = 60;
    struct nb r;
    char members[128];
    if (nprocs != 4) FAIL("member-lost-after-answer wants 4 ranks");
    ndirs = 0;
    PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_GROUP_OPTIONAL, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_GROUP_NOTIFY_TERMINATION, &yes, PMIX_BOOL);
    construct_nb(&r);
    if (me.rank < 2) {
        wait_flag(&r.done); /* node0 answered */
        if (r.status != PMIX_SUCCESS) FAIL("construct: %s", PMIx_Error_string(r.status));
        if (strcmp(r.members, "0,1,2,3") != 0) FAIL("membership %s, not 0,1,2,3", r.members);
    }
    server_fence(); /* node0's group formed */
    if (me.rank == 3) raise(SIGKILL);
    ft_fence(); /* node1's server handled the end and told node0 first */
    if (me.rank < 2) {
        wait_flag(&member_failed);
        if (failed_rank != 3) FAIL("PMIX_GROUP_MEMBER_FAILED about rank %u", failed_rank);
        wait_flag(&updated);
    } else {
        if (r.done) FAIL("node1 answered before the release");
        CHECK(PMIx_Notify_event(RELEASE_GROUPS, &me, PMIX_RANGE_RM, NULL, 0, NULL, NULL),
              "Notify_event (release the host's answers)");
        wait_flag(&r.done);
        if (r.status != PMIX_ERR_PARTIAL_SUCCESS)
            FAIL("construct: %s", PMIx_Error_string(r.status));
        if (strcmp(r.members, "0,1,2") != 0) FAIL("membership %s, not 0,1,2", r.members);
        wait_flag(&updated);
    }
    server_membership(members, sizeof members);
    if (strcmp(members, "0,1,2") != 0) FAIL("the server's membership %s, not 0,1,2", members);
    CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
    printf("group member lost after answer ok: %s\n", members);
}

/* Rank 1 never constructs: node1's server has called the host (its ranks'
 * constructs were in before the fence) when rank 1's death makes the
 * leader, on node0, abort. */
static void mode_leader_aborts_before_host(void) {
    struct nb r;
    if (nprocs != 4) FAIL("leader-aborts-before-host wants 4 ranks");
    directives(me.rank == 0);
    if (me.rank != 1) construct_nb(&r);
    server_fence(); /* the constructs are in */
    if (me.rank == 1) raise(SIGKILL);
    wait_flag(&r.done);
    if (r.status != PMIX_GROUP_CONSTRUCT_ABORT) FAIL("construct: %s", PMIx_Error_string(r.status));
    if (me.rank == 0 && !member_failed) FAIL("the leader had no PMIX_GROUP_MEMBER_FAILED");
    if (me.rank != 0) wait_flag(&aborted);
    printf("group abort before host ok\n");
}

static void mode_abort_event(void) {
    char members[128];
    int leader = 0;
    pmix_status_t rc;
    struct nb r;
    directives(me.rank == 0);
    if (me.rank == 0) {
        construct_nb(&r);
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, PMIX_GROUP_ID, GRP, PMIX_STRING);
        CHECK(PMIx_Notify_event(PMIX_GROUP_CONSTRUCT_ABORT, &me, PMIX_RANGE_NAMESPACE, &info, 1,
                                NULL, NULL),
              "Notify_event");
        PMIX_INFO_DESTRUCT(&info);
        wait_flag(&r.done);
        rc = r.status;
    } else if (me.rank == nprocs - 1) {
        /* Only once the abort is out: the construct cannot have completed. */
        wait_flag(&aborted);
        rc = me.rank % 2 == 0 ? (construct_nb(&r), wait_flag(&r.done), r.status)
                              : construct_blocking(members, sizeof members, &leader);
    } else if (me.rank % 2 == 0) {
        construct_nb(&r);
        wait_flag(&r.done);
        rc = r.status;
    } else {
        rc = construct_blocking(members, sizeof members, &leader);
    }
    if (rc != PMIX_GROUP_CONSTRUCT_ABORT) FAIL("construct: %s", PMIx_Error_string(rc));
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
    printf("group abort event ok: %s\n", me.rank % 2 == 0 ? "nb" : "blocking");
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(
            stderr,
            "usage: group_leader_client member-dies|member-dies-abort|leader-dies|"
            "leader-dies-default|leader-dies-across|leader-dies-across-default|"
            "leader-dies-across-abort|leader-dies-across-abort-held|member-lost-after-host|"
            "member-lost-after-host-optional|member-lost-after-answer|leader-aborts-before-host|"
            "abort-event\n");
        return 2;
    }
    mode = argv[1];
    alarm(60); /* every wait below is bounded */
    CHECK(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "Get job size");
    nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    procs = calloc(nprocs, sizeof(pmix_proc_t));
    for (uint32_t r = 0; r < nprocs; ++r) PMIX_LOAD_PROCID(&procs[r], me.nspace, r);
    pmix_status_t codes[] = {PMIX_GROUP_MEMBER_FAILED, PMIX_GROUP_LEADER_FAILED,
                             PMIX_GROUP_LEADER_SELECTED, PMIX_GROUP_CONSTRUCT_ABORT,
                             PMIX_GROUP_MEMBERSHIP_UPDATE};
    _Atomic pmix_status_t reg = PMIX_ERR_TIMEOUT;
    PMIx_Register_event_handler(codes, sizeof codes / sizeof codes[0], NULL, 0, on_event,
                                registered, (void *)&reg);
    while (reg == PMIX_ERR_TIMEOUT) usleep(1000); /* bounded by alarm() */
    CHECK(reg, "register");
    /* Everyone is registered before anyone constructs. */
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
    if (strcmp(mode, "member-dies") == 0) {
        mode_member_dies(0);
    } else if (strcmp(mode, "member-dies-abort") == 0) {
        mode_member_dies(1);
    } else if (strcmp(mode, "leader-dies") == 0) {
        mode_leader_dies(1);
    } else if (strcmp(mode, "leader-dies-default") == 0) {
        mode_leader_dies(0);
    } else if (strcmp(mode, "leader-dies-across") == 0) {
        mode_leader_dies_across(1, 0, 0);
    } else if (strcmp(mode, "leader-dies-across-default") == 0) {
        mode_leader_dies_across(0, 0, 0);
    } else if (strcmp(mode, "leader-dies-across-abort") == 0) {
        mode_leader_dies_across(0, 1, 0);
    } else if (strcmp(mode, "leader-dies-across-abort-held") == 0) {
        mode_leader_dies_across(0, 1, 1);
    } else if (strcmp(mode, "member-lost-after-host") == 0) {
        mode_member_lost_after_host(0);
    } else if (strcmp(mode, "member-lost-after-answer") == 0) {
        mode_member_lost_after_answer();
    } else if (strcmp(mode, "member-lost-after-host-optional") == 0) {
        mode_member_lost_after_host(1);
    } else if (strcmp(mode, "leader-aborts-before-host") == 0) {
        mode_leader_aborts_before_host();
    } else if (strcmp(mode, "abort-event") == 0) {
        mode_abort_event();
    } else {
        FAIL("unknown mode %s", mode);
    }
    free(procs);
    CHECK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
