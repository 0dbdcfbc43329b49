/* The invite method of PMIx groups (docs/groups.md, "Invite and join"), one
 * rule per mode; rank 0 is the leader (the inviter). Each wait is bounded:
 * alarm() for events, PMIX_TIMEOUT where the rule needs it, pmixrun
 * --timeout and the ctest TIMEOUT around it. Nothing waits on time passing:
 * a process that must answer late waits for a fence the others enter once
 * their own calls returned.
 *
 * usage: group_invite_client accept   - every other rank is invited and
 *                                       accepts (odd ranks with join_nb in
 *                                       the PMIX_GROUP_INVITED handler, even
 *                                       ranks with a blocking join after it);
 *                                       membership in invite order, one
 *                                       context id, CONSTRUCT_COMPLETE to all,
 *                                       every member's committed data local
 *                                       afterwards (PMIX_OPTIONAL Get)
 *        group_invite_client decline  - ranks 1, 2 invited; 2 declines; the
 *                                       leader's DECLINED handler invites 3 in
 *                                       its place: {0, 1, 3}, PARTIAL_SUCCESS
 *        group_invite_client dies     - the last rank dies in its INVITED
 *                                       handler: INVITE_FAILED to the leader,
 *                                       the group forms without it
 *        group_invite_client timeout | optional-timeout - rank 2 answers
 *                                       after the invite's PMIX_TIMEOUT:
 *                                       TIMEOUT for all / (PMIX_GROUP_OPTIONAL)
 *                                       the group {0, 1}, PARTIAL_SUCCESS
 *        group_invite_client abort    - the leader's ACCEPTED handler returns
 *                                       PMIX_GROUP_CONSTRUCT_ABORT: every
 *                                       invitee gets that event, the calls
 *                                       return it
 *        group_invite_client abort-event - the leader generates
 *                                       PMIX_GROUP_CONSTRUCT_ABORT itself after
 *                                       its invite_nb: every call returns it
 *        group_invite_client leader-fails | leader-fails-default - the
 *                                       leader dies after ranks 1, 2 accepted;
 *                                       LEADER_FAILED to 1, 2, 3; rank 2
 *                                       volunteers (PMIX_GROUP_LEADER in its
 *                                       handler's results) / nobody does and
 *                                       rank 1 (the lowest) leads;
 *                                       LEADER_SELECTED names it; rank 3 then
 *                                       accepts and the group completes
 *        group_invite_client leader-fails-across | leader-fails-across-default
 *                                     - the same with PMIX_GROUP_ASSIGN_CONTEXT_ID
 *                                       under the two-server host (ranks 0, 1
 *                                       on node0, 2, 3 on node1): the vote
 *                                       crosses servers; every member checks
 *                                       its status, the membership,
 *                                       CONSTRUCT_COMPLETE and one context id
 *        group_invite_client leader-fails-abort - rank 3 (not answered yet)
 *                                       returns PMIX_GROUP_CONSTRUCT_ABORT from
 *                                       its LEADER_FAILED handler: the joins of
 *                                       1, 2 return that status (with the
 *                                       event), rank 3's later join too
 *        group_invite_client leader-fails-abort-node0 - rank 1 (node0, the
 *                                       failed leader's server) aborts: node1
 *                                       got no vote, its ranks 2, 3 still get
 *                                       PMIX_GROUP_LEADER_FAILED, then the
 *                                       abort (rank 3 joins only after the
 *                                       LEADER_FAILED event)
 *        group_invite_client leader-fails-timeout | leader-fails-timeout-node0
 *                                     - the leader invites 1, 2, 3 with
 *                                       PMIX_TIMEOUT and dies once 1, 2
 *                                       accepted; the LEADER_FAILED handlers of
 *                                       ranks 2, 3 (node1) / of rank 1 (node0,
 *                                       the failed leader's server) hold their
 *                                       answer until their join returned, so no
 *                                       new leader is ever chosen: the joins of
 *                                       1, 2 and 3 return PMIX_ERR_TIMEOUT, and
 *                                       every one of them was told
 *                                       LEADER_FAILED (one server: pmixrun, the
 *                                       first form)
 *        group_invite_client leader-fails-voter-dies - the leader dies after
 *                                       1, 2 accepted; rank 1 (node0) dies in
 *                                       its LEADER_FAILED handler: rank 2
 *                                       (node1) leads 2,3 (groupsft)
 *        group_invite_client leader-fails-three-servers - twonode_host
 *                                       --nodes 3: the leader (node0) invites
 *                                       1 (node0), 2 (node1), 4 (node2) with a
 *                                       context id and dies once 1, 2
 *                                       accepted; the three servers elect the
 *                                       volunteer 2: it leads 2,1,4, one
 *                                       context id (groups3)
 *        group_invite_client leader-fails-abort-three-servers - as
 *                                       leader-fails-three-servers, rank 4
 *                                       (node2) aborts in its LEADER_FAILED
 *                                       handler: every join returns
 *                                       PMIX_GROUP_CONSTRUCT_ABORT, each
 *                                       participant was asked once (groups3) */
#include <signal.h>
#include <string.h>

#include "group_common.h"

static const char *mode;

static const char *GRP = "inv-grp";

/* What the handlers saw (written on the progress thread, read by main). */
static _Atomic int invited = 0, completed = 0, aborted = 0, leader_failed = 0, selected = 0;
static _Atomic int accepted_seen = 0, declined_seen = 0, failed_seen = 0;
static pmix_proc_t inviter, failed_proc, new_leader;
static _Atomic size_t complete_members = 0;
static _Atomic pmix_status_t join_nb_status = PMIX_ERR_TIMEOUT;
static _Atomic int join_nb_done = 0; /* atomics: set last, on the progress thread */

/* leader-fails-timeout: a LEADER_FAILED answer held back (released by main
 * once its join returned). */
static pmix_event_notification_cbfunc_fn_t held_cbfunc = NULL;
static void *held_cbdata = NULL;
static _Atomic int held = 0;

static int holds_vote(void) {
    if (strcmp(mode, "leader-fails-timeout") == 0) return me.rank >= 2;
    if (strcmp(mode, "leader-fails-timeout-node0") == 0) return me.rank == 1;
    return 0;
}

/* leader-fails-across: each member tells the others its context id by an
 * event addressed to the group (the two-server host fences only the whole
 * job, and rank 0 is dead). */
static const pmix_status_t kCidEvent = PMIX_EXTERNAL_ERR_BASE - 142;
static _Atomic int cids_seen = 0;
static size_t cids[8]; /* the others' (written before cids_seen counts them) */

/* leader-fails-abort-three-servers: rank 4 (node2) aborts only once node1's
 * vote has left: rank 2 (node1), having voted, relays an event through rank 1
 * (node0) to rank 4 (not over node1's link to node2, where the test host
 * holds node1's vote until node2 sent its abort). */
static const pmix_status_t kRelayEvent = PMIX_EXTERNAL_ERR_BASE - 146;
static pmix_event_notification_cbfunc_fn_t abort_cbfunc = NULL;
static void *abort_cbdata = NULL;
static int relay_seen = 0; /* both on the progress thread */

static void relay_sent(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    if (status != PMIX_SUCCESS) FAIL("relay: %s", PMIx_Error_string(status));
}

/* Non-blocking: called from an event handler. */
static void relay_to(pmix_rank_t rank) {
    pmix_proc_t to;
    pmix_info_t info[2];
    PMIX_LOAD_PROCID(&to, me.nspace, rank);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_CUSTOM_RANGE, &to, PMIX_PROC);
    PMIX_INFO_LOAD(&info[1], PMIX_GROUP_ID, GRP, PMIX_STRING);
    CHECK(PMIx_Notify_event(kRelayEvent, &me, PMIX_RANGE_CUSTOM, info, 2, relay_sent, NULL),
          "Notify_event (relay)");
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

/* Rank 4's abort, once it was asked and the relay came (either order). */
static void abort_when_relayed(void) {
    if (abort_cbfunc == NULL || !relay_seen) return;
    pmix_event_notification_cbfunc_fn_t cbfunc = abort_cbfunc;
    abort_cbfunc = NULL;
    cbfunc(PMIX_GROUP_CONSTRUCT_ABORT, NULL, 0, NULL, NULL, abort_cbdata);
}

static int is_our_group(const pmix_info_t info[], size_t ninfo) {
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) && info[i].value.type == PMIX_STRING &&
            strcmp(info[i].value.data.string, GRP) == 0)
            return 1;
    return 0;
}

static const pmix_proc_t *affected(const pmix_info_t info[], size_t ninfo) {
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC)) return info[i].value.data.proc;
    return NULL;
}

static void membership(pmix_info_t *results, size_t n, char *out, size_t len);
static size_t context_id(pmix_info_t *results, size_t n);
static char cb_members[128];
static size_t cb_cid = SIZE_MAX;

static void join_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)cbdata;
    membership(info, ninfo, cb_members, sizeof cb_members);
    cb_cid = context_id(info, ninfo);
    join_nb_status = status;
    join_nb_done = 1;
    if (release_fn != NULL) release_fn(release_cbdata);
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)results, (void)nresults;
    pmix_status_t answer = PMIX_SUCCESS;
    static pmix_info_t volunteer;
    pmix_info_t *out = NULL;
    size_t nout = 0;
    if (!is_our_group(info, ninfo)) goto done;
    const pmix_proc_t *who = affected(info, ninfo);
    switch (status) {
        case PMIX_GROUP_INVITED:
            inviter = *source;
            if (strcmp(mode, "dies") == 0 && me.rank == nprocs - 1) raise(SIGKILL);
            /* Odd ranks answer from inside the handler: only the _nb form may. */
            if (strcmp(mode, "accept") == 0 && me.rank % 2 == 1)
                CHECK(PMIx_Group_join_nb(GRP, source, PMIX_GROUP_ACCEPT, NULL, 0, join_cb, NULL),
                      "join_nb");
            invited = 1;
            break;
        case PMIX_GROUP_INVITE_ACCEPTED:
            ++accepted_seen;
            if (strcmp(mode, "abort") == 0) answer = PMIX_GROUP_CONSTRUCT_ABORT;
            if (strncmp(mode, "leader-fails", 12) == 0 && me.rank == 0 && accepted_seen == 2)
                raise(SIGKILL);
            break;
        case PMIX_GROUP_INVITE_DECLINED:
            declined_seen = 1;
            if (who == NULL || who->rank != 2) FAIL("DECLINED names no rank 2");
            if (strcmp(mode, "decline") == 0) {
                /* Invite rank 3 in its place (only the _nb form in a handler). */
                pmix_proc_t repl;
                PMIX_LOAD_PROCID(&repl, me.nspace, 3);
                CHECK(PMIx_Group_invite_nb(GRP, &repl, 1, NULL, 0, join_cb, NULL), "invite_nb");
            }
            break;
        case PMIX_GROUP_INVITE_FAILED:
            if (who != NULL) failed_proc = *who;
            failed_seen = 1;
            break;
        case PMIX_GROUP_CONSTRUCT_COMPLETE:
            for (size_t i = 0; i < ninfo; ++i)
                if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_MEMBERSHIP))
                    complete_members = info[i].value.data.darray->size;
            completed = 1;
            break;
        case PMIX_GROUP_CONSTRUCT_ABORT:
            aborted = 1;
            break;
        case PMIX_GROUP_LEADER_FAILED:
            ++leader_failed; /* a count: each participant is asked once */
            /* groupsft: the lowest-ranked voter, which would lead, dies. */
            if (strcmp(mode, "leader-fails-voter-dies") == 0 && me.rank == 1) raise(SIGKILL);
            if (strcmp(mode, "leader-fails-abort-three-servers") == 0 && me.rank == 4 &&
                cbfunc != NULL) {
                abort_cbfunc = cbfunc;
                abort_cbdata = cbdata;
                abort_when_relayed();
                return; /* answered once the relay came */
            }
            if ((strcmp(mode, "leader-fails-abort") == 0 && me.rank == 3) ||
                (strcmp(mode, "leader-fails-abort-node0") == 0 && me.rank == 1))
                answer = PMIX_GROUP_CONSTRUCT_ABORT;
            if ((strcmp(mode, "leader-fails") == 0 || strcmp(mode, "leader-fails-across") == 0 ||
                 strcmp(mode, "leader-fails-three-servers") == 0) &&
                me.rank == 2) {
                bool yes = true;
                PMIX_INFO_LOAD(&volunteer, PMIX_GROUP_LEADER, &yes, PMIX_BOOL);
                out = &volunteer;
                nout = 1;
            }
            if (holds_vote() && cbfunc != NULL) {
                held_cbfunc = cbfunc;
                held_cbdata = cbdata;
                held = 1;
                return; /* answered by main, after its join */
            }
            break;
        default:
            if (status == kRelayEvent) {
                if (me.rank == 1) relay_to(4);
                if (me.rank == 4) {
                    relay_seen = 1;
                    abort_when_relayed();
                }
                break;
            }
            if (status != kCidEvent || source->rank == me.rank) break;
            if (cids_seen >= 8) break;
            cids[cids_seen] = SIZE_MAX;
            for (size_t i = 0; i < ninfo; ++i)
                if (PMIX_CHECK_KEY(&info[i], "inv.cid")) cids[cids_seen] = info[i].value.data.size;
            ++cids_seen;
            break;
        case PMIX_GROUP_LEADER_SELECTED:
            if (who != NULL) new_leader = *who;
            selected = 1;
            break;
    }
done:
    if (cbfunc != NULL) cbfunc(answer, out, nout, NULL, NULL, cbdata);
    /* After its answer (node1's vote goes out first). */
    if (status == PMIX_GROUP_LEADER_FAILED && me.rank == 2 &&
        strcmp(mode, "leader-fails-abort-three-servers") == 0)
        relay_to(1);
}

static void register_all(void) {
    pmix_status_t codes[] = {PMIX_GROUP_INVITED,
                             PMIX_GROUP_INVITE_ACCEPTED,
                             PMIX_GROUP_INVITE_DECLINED,
                             PMIX_GROUP_INVITE_FAILED,
                             PMIX_GROUP_CONSTRUCT_COMPLETE,
                             PMIX_GROUP_CONSTRUCT_ABORT,
                             PMIX_GROUP_LEADER_FAILED,
                             PMIX_GROUP_LEADER_SELECTED,
                             kCidEvent,
                             kRelayEvent};
    group_register(codes, sizeof codes / sizeof codes[0], NULL, 0, on_event);
}

static void wait_flag(_Atomic int *flag) {
    while (!*flag) usleep(1000); /* bounded by alarm() */
}

/* The membership in the results, as ranks ("0,1,3"). */
static void membership(pmix_info_t *results, size_t n, char *out, size_t len) {
    out[0] = '\0';
    for (size_t i = 0; i < n; ++i) {
        if (!PMIX_CHECK_KEY(&results[i], PMIX_GROUP_MEMBERSHIP)) continue;
        pmix_proc_t *p = (pmix_proc_t *)results[i].value.data.darray->array;
        for (size_t k = 0; k < results[i].value.data.darray->size; ++k) {
            char one[16];
            snprintf(one, sizeof one, "%s%u", k ? "," : "", p[k].rank);
            strncat(out, one, len - strlen(out) - 1);
        }
    }
}

static size_t context_id(pmix_info_t *results, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID)) return results[i].value.data.size;
    return SIZE_MAX;
}

static pmix_proc_t *ranks(const pmix_rank_t *list, size_t n) {
    pmix_proc_t *procs = calloc(n, sizeof(pmix_proc_t));
    for (size_t i = 0; i < n; ++i) PMIX_LOAD_PROCID(&procs[i], me.nspace, list[i]);
    return procs;
}

/* Every process's context id is rank 0's (through a collecting fence). */
static void same_context_id(size_t cid) {
    pmix_value_t v;
    v.type = PMIX_SIZE;
    v.data.size = cid;
    CHECK(PMIx_Put(PMIX_GLOBAL, "inv.cid", &v), "Put");
    CHECK(PMIx_Commit(), "Commit");
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Fence(NULL, 0, &collect, 1), "Fence");
    for (uint32_t r = 0; r < nprocs; ++r) {
        pmix_proc_t p;
        pmix_value_t *val = NULL;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        CHECK(PMIx_Get(&p, "inv.cid", NULL, 0, &val), "Get cid");
        if (val->data.size != cid)
            FAIL("rank %u has context id %zu, not %zu", r, val->data.size, cid);
        PMIX_VALUE_RELEASE(val);
    }
}

static void mode_accept(void) {
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    char members[128];
    if (me.rank == 0) {
        pmix_rank_t list[64];
        for (uint32_t r = 1; r < nprocs; ++r) list[r - 1] = r;
        pmix_proc_t *procs = ranks(list, nprocs - 1);
        pmix_info_t dir;
        bool yes = true;
        PMIX_INFO_LOAD(&dir, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
        CHECK(PMIx_Group_invite(GRP, procs, nprocs - 1, &dir, 1, &results, &nresults), "invite");
        free(procs);
        if (accepted_seen != (int)nprocs - 1)
            FAIL("the leader's handler saw %d accepted", accepted_seen);
    } else {
        wait_flag(&invited);
        if (inviter.rank != 0) FAIL("invited by rank %u", inviter.rank);
        if (me.rank % 2 == 1) {
            wait_flag(&join_nb_done);
            CHECK(join_nb_status, "join_nb");
            /* The results came to the callback. */
            if (strcmp(cb_members, "") == 0) FAIL("join_nb's callback had no membership");
        } else {
            CHECK(PMIx_Group_join(GRP, &inviter, PMIX_GROUP_ACCEPT, NULL, 0, &results, &nresults),
                  "join");
        }
    }
    if (me.rank % 2 == 1) {
        strcpy(members, cb_members);
    } else {
        membership(results, nresults, members, sizeof members);
    }
    char want[128] = "";
    for (uint32_t r = 0; r < nprocs; ++r) {
        char one[16];
        snprintf(one, sizeof one, "%s%u", r ? "," : "", r);
        strcat(want, one);
    }
    if (strcmp(members, want) != 0) FAIL("membership %s, not %s", members, want);
    /* Every member's committed data came with the group (on any server):
     * PMIX_OPTIONAL answers from this process's store only. */
    pmix_info_t local;
    bool yes = true;
    PMIX_INFO_LOAD(&local, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    for (uint32_t r = 0; r < nprocs; ++r) {
        pmix_proc_t p;
        pmix_value_t *val = NULL;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        CHECK(PMIx_Get(&p, "inv.rank", &local, 1, &val), "Get a member's committed data");
        if (val->type != PMIX_UINT32 || val->data.uint32 != r)
            FAIL("rank %u's committed data is wrong", r);
        PMIX_VALUE_RELEASE(val);
    }
    PMIX_INFO_DESTRUCT(&local);
    const size_t cid = me.rank % 2 == 1 ? cb_cid : context_id(results, nresults);
    if (cid == SIZE_MAX) FAIL("no context id");
    PMIX_INFO_FREE(results, nresults);
    wait_flag(&completed);
    if (complete_members != nprocs) FAIL("CONSTRUCT_COMPLETE with %zu members", complete_members);
    same_context_id(cid);
    /* The group is an address now: a fence over it, then destruct. */
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, GRP, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Fence(&all, 1, NULL, 0), "Fence over the group");
    CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
    printf("invite accept ok: %s\n", members);
}

static void mode_decline(void) {
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    char members[128] = "";
    pmix_status_t rc;
    if (me.rank == 0) {
        const pmix_rank_t list[] = {1, 2};
        pmix_proc_t *procs = ranks(list, 2);
        rc = PMIx_Group_invite(GRP, procs, 2, NULL, 0, &results, &nresults);
        free(procs);
        if (rc != PMIX_ERR_PARTIAL_SUCCESS) FAIL("invite: %s", PMIx_Error_string(rc));
        if (!declined_seen) FAIL("no PMIX_GROUP_INVITE_DECLINED");
        membership(results, nresults, members, sizeof members);
        wait_flag(&join_nb_done); /* the replacement invite's callback */
    } else if (me.rank == 2) {
        wait_flag(&invited);
        CHECK(PMIx_Group_join(GRP, &inviter, PMIX_GROUP_DECLINE, NULL, 0, &results, &nresults),
              "decline");
        if (nresults != 0) FAIL("a decline has results");
    } else if (me.rank == 1 || me.rank == 3) {
        wait_flag(&invited);
        CHECK(PMIx_Group_join(GRP, &inviter, PMIX_GROUP_ACCEPT, NULL, 0, &results, &nresults),
              "join");
        membership(results, nresults, members, sizeof members);
    }
    PMIX_INFO_FREE(results, nresults);
    if (me.rank != 2 && me.rank <= 3) {
        if (strcmp(members, "0,1,3") != 0) FAIL("membership %s, not 0,1,3", members);
        wait_flag(&completed);
        CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
        printf("invite decline ok: %s\n", members);
    } else if (me.rank == 2) {
        printf("invite declined ok\n");
    }
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
}

static void mode_dies(void) {
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    char members[128] = "";
    if (me.rank == 0) {
        pmix_rank_t list[64];
        for (uint32_t r = 1; r < nprocs; ++r) list[r - 1] = r;
        pmix_proc_t *procs = ranks(list, nprocs - 1);
        pmix_status_t rc = PMIx_Group_invite(GRP, procs, nprocs - 1, NULL, 0, &results, &nresults);
        free(procs);
        if (rc != PMIX_ERR_PARTIAL_SUCCESS) FAIL("invite: %s", PMIx_Error_string(rc));
        if (!failed_seen || failed_proc.rank != nprocs - 1)
            FAIL("no PMIX_GROUP_INVITE_FAILED about rank %u", nprocs - 1);
    } else {
        wait_flag(&invited); /* the last rank dies in its handler */
        CHECK(PMIx_Group_join(GRP, &inviter, PMIX_GROUP_ACCEPT, NULL, 0, &results, &nresults),
              "join");
    }
    membership(results, nresults, members, sizeof members);
    PMIX_INFO_FREE(results, nresults);
    if (strcmp(members, "0,1,2") != 0) FAIL("membership %s, not 0,1,2", members);
    CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
    printf("invite without the dead ok: %s\n", members);
}

static void mode_timeout(int optional) {
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    char members[128] = "";
    pmix_status_t rc;
    const pmix_status_t want = optional ? PMIX_ERR_PARTIAL_SUCCESS : PMIX_ERR_TIMEOUT;
    if (me.rank == 0) {
        const pmix_rank_t list[] = {1, 2};
        pmix_proc_t *procs = ranks(list, 2);
        pmix_info_t dir[2];
        bool yes = true;
        int timeout = 2;
        PMIX_INFO_LOAD(&dir[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
        PMIX_INFO_LOAD(&dir[1], PMIX_GROUP_OPTIONAL, &yes, PMIX_BOOL);
        rc = PMIx_Group_invite(GRP, procs, 2, dir, optional ? 2 : 1, &results, &nresults);
        free(procs);
        if (rc != want) FAIL("invite: %s", PMIx_Error_string(rc));
    } else if (me.rank == 1) {
        wait_flag(&invited);
        rc = PMIx_Group_join(GRP, &inviter, PMIX_GROUP_ACCEPT, NULL, 0, &results, &nresults);
        if (rc != (optional ? PMIX_SUCCESS : PMIX_ERR_TIMEOUT))
            FAIL("join: %s", PMIx_Error_string(rc));
    } else if (me.rank > 2) {
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence"); /* not invited */
        return;
    } else {
        /* Answers only once the others' calls returned. */
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
        rc = PMIx_Group_join(GRP, NULL, PMIX_GROUP_ACCEPT, NULL, 0, &results, &nresults);
        if (rc != PMIX_ERR_TIMEOUT) FAIL("late join: %s", PMIx_Error_string(rc));
        printf("invite latecomer ok\n");
        return;
    }
    membership(results, nresults, members, sizeof members);
    PMIX_INFO_FREE(results, nresults);
    if (optional && strcmp(members, "0,1") != 0) FAIL("membership %s, not 0,1", members);
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
    if (optional) CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
    printf("invite timeout ok: %s\n", optional ? members : "timed out");
}

static void mode_abort(void) {
    pmix_status_t rc;
    if (me.rank == 0) {
        pmix_rank_t list[64];
        for (uint32_t r = 1; r < nprocs; ++r) list[r - 1] = r;
        pmix_proc_t *procs = ranks(list, nprocs - 1);
        rc = PMIx_Group_invite(GRP, procs, nprocs - 1, NULL, 0, NULL, NULL);
        free(procs);
        if (rc != PMIX_GROUP_CONSTRUCT_ABORT) FAIL("invite: %s", PMIx_Error_string(rc));
    } else if (me.rank == 1) {
        wait_flag(&invited);
        rc = PMIx_Group_join(GRP, &inviter, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
        if (rc != PMIX_GROUP_CONSTRUCT_ABORT) FAIL("join: %s", PMIx_Error_string(rc));
        wait_flag(&aborted);
    } else {
        wait_flag(&invited);
        wait_flag(&aborted); /* before answering */
        rc = PMIx_Group_join(GRP, &inviter, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
        if (rc != PMIX_GROUP_CONSTRUCT_ABORT)
            FAIL("join after the abort: %s", PMIx_Error_string(rc));
    }
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
    printf("invite abort ok\n");
}

/* The leader aborts by generating PMIX_GROUP_CONSTRUCT_ABORT itself
 * (PMIx_Notify_event) after its invite_nb: the invite's callback and every
 * join return that status, blocking or not. */
static void mode_abort_event(void) {
    pmix_status_t rc;
    if (me.rank == 0) {
        pmix_rank_t list[64];
        for (uint32_t r = 1; r < nprocs; ++r) list[r - 1] = r;
        pmix_proc_t *procs = ranks(list, nprocs - 1);
        CHECK(PMIx_Group_invite_nb(GRP, procs, nprocs - 1, NULL, 0, join_cb, NULL), "invite_nb");
        free(procs);
        pmix_info_t info;
        PMIX_INFO_LOAD(&info, PMIX_GROUP_ID, GRP, PMIX_STRING);
        CHECK(PMIx_Notify_event(PMIX_GROUP_CONSTRUCT_ABORT, &me, PMIX_RANGE_NAMESPACE, &info, 1,
                                NULL, NULL),
              "Notify_event");
        PMIX_INFO_DESTRUCT(&info);
        wait_flag(&join_nb_done);
        if (join_nb_status != PMIX_GROUP_CONSTRUCT_ABORT)
            FAIL("invite_nb: %s", PMIx_Error_string(join_nb_status));
    } else {
        wait_flag(&invited);
        rc = PMIx_Group_join(GRP, &inviter, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
        if (rc != PMIX_GROUP_CONSTRUCT_ABORT) FAIL("join: %s", PMIx_Error_string(rc));
        wait_flag(&aborted);
    }
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
    printf("invite abort event ok\n");
}

/* three: under twonode_host --nodes 3 (ranks 0, 1 on node0, 2, 3 on node1,
 * 4, 5 on node2): the invitees are 1, 2 and 4, one per server, rank 4
 * answers the new leader only, and ranks 3, 5 take no part. */
static void mode_leader_fails(int volunteer, int cid, int three) {
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    char members[128] = "";
    const pmix_rank_t expected = volunteer ? 2 : 1;
    const pmix_rank_t late = three ? 4 : 3; /* joins the new leader */
    if (three && nprocs != 6) FAIL("leader-fails-three-servers needs 6 ranks");
    if (three && (me.rank == 3 || me.rank == 5)) return;
    if (me.rank == 0) {
        const pmix_rank_t list[] = {1, 2, late};
        pmix_proc_t *procs = ranks(list, 3);
        pmix_info_t dir;
        bool yes = true;
        PMIX_INFO_LOAD(&dir, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
        PMIx_Group_invite(GRP, procs, 3, &dir, cid ? 1 : 0, NULL, NULL); /* dies in its handler */
        FAIL("the leader's invite returned");
    }
    wait_flag(&invited);
    if (me.rank == late) {
        wait_flag(&selected); /* answers the new leader only */
        if (new_leader.rank != expected) FAIL("LEADER_SELECTED names rank %u", new_leader.rank);
        CHECK(PMIx_Group_join(GRP, &new_leader, PMIX_GROUP_ACCEPT, NULL, 0, &results, &nresults),
              "join");
    } else {
        CHECK(PMIx_Group_join(GRP, &inviter, PMIX_GROUP_ACCEPT, NULL, 0, &results, &nresults),
              "join");
    }
    if (!leader_failed) FAIL("no PMIX_GROUP_LEADER_FAILED");
    wait_flag(&selected);
    if (new_leader.rank != expected) FAIL("LEADER_SELECTED names rank %u", new_leader.rank);
    membership(results, nresults, members, sizeof members);
    const char *want = three ? "2,1,4" : volunteer ? "2,1,3" : "1,2,3";
    if (strcmp(members, want) != 0) FAIL("membership %s, not %s", members, want);
    if (cid) {
        /* One context id for the members of both servers: each sends its
         * own to the group and compares the two others'. */
        const size_t mine = context_id(results, nresults);
        if (mine == SIZE_MAX) FAIL("no context id");
        wait_flag(&completed);
        if (complete_members != 3) FAIL("CONSTRUCT_COMPLETE with %zu members", complete_members);
        pmix_info_t info[3];
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, GRP, PMIX_RANK_WILDCARD);
        PMIX_INFO_LOAD(&info[0], PMIX_GROUP_ID, GRP, PMIX_STRING);
        PMIX_INFO_LOAD(&info[1], "inv.cid", &mine, PMIX_SIZE);
        PMIX_INFO_LOAD(&info[2], PMIX_EVENT_CUSTOM_RANGE, &all, PMIX_PROC);
        CHECK(PMIx_Notify_event(kCidEvent, &me, PMIX_RANGE_CUSTOM, info, 3, NULL, NULL),
              "Notify_event");
        for (int i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&info[i]);
        while (cids_seen < 2) usleep(1000); /* bounded by alarm() */
        for (int i = 0; i < cids_seen; ++i)
            if (cids[i] != mine) FAIL("another member has context id %zu, not %zu", cids[i], mine);
    }
    PMIX_INFO_FREE(results, nresults);
    CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
    printf("invite new leader ok: rank %u leads %s\n", new_leader.rank, members);
}

/* The leader dies after ranks 1 (node0) and 2 (node1) accepted; rank 3
 * (node1) / rank 1 (node0) aborts from its LEADER_FAILED handler: every
 * participant's call returns PMIX_GROUP_CONSTRUCT_ABORT, on both servers. */
/* three (twonode_host --nodes 3): the invitees are 1 (node0), 2 (node1), 4
 * (node2), and rank 4, the late one, aborts; ranks 3, 5 take no part. */
static void mode_leader_fails_abort(pmix_rank_t aborter, int three) {
    pmix_status_t rc;
    const pmix_rank_t late = three ? 4 : 3; /* answers after LEADER_FAILED */
    if (three && nprocs != 6) FAIL("leader-fails-abort-three-servers needs 6 ranks");
    if (three && (me.rank == 3 || me.rank == 5)) return;
    if (me.rank == 0) {
        const pmix_rank_t list[] = {1, 2, late};
        pmix_proc_t *procs = ranks(list, 3);
        PMIx_Group_invite(GRP, procs, 3, NULL, 0, NULL, NULL); /* dies in its handler */
        FAIL("the leader's invite returned");
    }
    wait_flag(&invited);
    if (me.rank == late) {
        wait_flag(&leader_failed); /* aborts in its handler, then answers */
        rc = PMIx_Group_join(GRP, NULL, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
        if (rc != PMIX_GROUP_CONSTRUCT_ABORT) FAIL("late join: %s", PMIx_Error_string(rc));
    } else {
        rc = PMIx_Group_join(GRP, &inviter, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
        if (rc != PMIX_GROUP_CONSTRUCT_ABORT) FAIL("join: %s", PMIx_Error_string(rc));
        if (!leader_failed) FAIL("no PMIX_GROUP_LEADER_FAILED");
        if (me.rank != aborter) wait_flag(&aborted); /* from the aborter, through the host */
    }
    if (me.rank == late && aborter != late) wait_flag(&aborted);
    if (selected) FAIL("a leader was selected");
    /* A vote that reached a server after its abort asks nobody again. */
    if (three && leader_failed != 1) FAIL("PMIX_GROUP_LEADER_FAILED %d times", leader_failed);
    printf("invite leader failed abort ok\n");
}

/* The leader dies during its invite (PMIX_TIMEOUT 8 s) once 1, 2 accepted;
 * the held LEADER_FAILED answers keep a new leader from being chosen: the
 * invite's timeout still ends every participant's join. */
static void mode_leader_fails_timeout(void) {
    pmix_status_t rc;
    if (me.rank == 0) {
        const pmix_rank_t list[] = {1, 2, 3};
        pmix_proc_t *procs = ranks(list, 3);
        pmix_info_t dir;
        int timeout = 8;
        PMIX_INFO_LOAD(&dir, PMIX_TIMEOUT, &timeout, PMIX_INT);
        PMIx_Group_invite(GRP, procs, 3, &dir, 1, NULL, NULL); /* dies in its handler */
        FAIL("the leader's invite returned");
    }
    wait_flag(&invited);
    if (me.rank == 3) {
        wait_flag(&leader_failed); /* answers only after the leader failed */
        rc = PMIx_Group_join(GRP, NULL, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
    } else {
        rc = PMIx_Group_join(GRP, &inviter, PMIX_GROUP_ACCEPT, NULL, 0, NULL, NULL);
    }
    if (rc != PMIX_ERR_TIMEOUT) FAIL("join: %s, not PMIX_ERR_TIMEOUT", PMIx_Error_string(rc));
    wait_flag(&leader_failed); /* every participant is told */
    if (selected) FAIL("a leader was selected");
    if (held) held_cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, held_cbdata);
    printf("invite leader failed timeout ok\n");
}

/* ---- groupsft: a second failure during an election across servers ---- */

/* leader-fails-voter-dies: the leader (rank 0, node0) dies after ranks 1
 * (node0) and 2 (node1) accepted; rank 1, the lowest group rank that
 * accepted (the leader if nobody volunteers), dies in its LEADER_FAILED
 * handler, before it voted. The election closes without its vote on node0
 * and both servers pick rank 2 (node1): LEADER_SELECTED names it, rank 3
 * joins it, and the group is 2,3. */
static void mode_leader_fails_voter_dies(void) {
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    char members[128] = "";
    pmix_status_t rc;
    if (me.rank == 0) {
        const pmix_rank_t list[] = {1, 2, 3};
        pmix_proc_t *procs = ranks(list, 3);
        PMIx_Group_invite(GRP, procs, 3, NULL, 0, NULL, NULL); /* dies in its handler */
        FAIL("the leader's invite returned");
    }
    wait_flag(&invited);
    if (me.rank == 3) {
        wait_flag(&selected); /* answers the new leader only */
        if (new_leader.rank != 2) FAIL("LEADER_SELECTED names rank %u", new_leader.rank);
        rc = PMIx_Group_join(GRP, &new_leader, PMIX_GROUP_ACCEPT, NULL, 0, &results, &nresults);
    } else {
        /* Rank 1 dies in its LEADER_FAILED handler meanwhile. */
        rc = PMIx_Group_join(GRP, &inviter, PMIX_GROUP_ACCEPT, NULL, 0, &results, &nresults);
    }
    if (rc != PMIX_SUCCESS && rc != PMIX_ERR_PARTIAL_SUCCESS)
        FAIL("join: %s", PMIx_Error_string(rc));
    if (!leader_failed) FAIL("no PMIX_GROUP_LEADER_FAILED");
    wait_flag(&selected);
    if (new_leader.rank != 2) FAIL("LEADER_SELECTED names rank %u", new_leader.rank);
    membership(results, nresults, members, sizeof members);
    if (strcmp(members, "2,3") != 0) FAIL("membership %s, not 2,3", members);
    PMIX_INFO_FREE(results, nresults);
    CHECK(PMIx_Group_destruct(GRP, NULL, 0), "destruct");
    printf("invite voter dies ok: rank 2 leads %s (%s)\n", members, PMIx_Error_string(rc));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr,
                "usage: group_invite_client accept|decline|dies|timeout|optional-timeout|"
                "abort|abort-event|leader-fails|leader-fails-default|leader-fails-across|"
                "leader-fails-across-default|leader-fails-abort|leader-fails-abort-node0|"
                "leader-fails-timeout|leader-fails-timeout-node0|leader-fails-voter-dies|"
                "leader-fails-three-servers|leader-fails-abort-three-servers\n");
        return 2;
    }
    mode = argv[1];
    alarm(60); /* every wait below is bounded */
    group_init();
    if (strcmp(mode, "accept") == 0) {
        /* Committed before anyone joins (odd ranks join from their handler). */
        pmix_value_t v;
        v.type = PMIX_UINT32;
        v.data.uint32 = me.rank;
        CHECK(PMIx_Put(PMIX_GLOBAL, "inv.rank", &v), "Put");
        CHECK(PMIx_Commit(), "Commit");
    }
    register_all();
    /* Everyone is registered before anyone invites. */
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
    if (strcmp(mode, "accept") == 0) {
        mode_accept();
    } else if (strcmp(mode, "decline") == 0) {
        mode_decline();
    } else if (strcmp(mode, "dies") == 0) {
        mode_dies();
    } else if (strcmp(mode, "timeout") == 0) {
        mode_timeout(0);
    } else if (strcmp(mode, "optional-timeout") == 0) {
        mode_timeout(1);
    } else if (strcmp(mode, "abort") == 0) {
        mode_abort();
    } else if (strcmp(mode, "abort-event") == 0) {
        mode_abort_event();
    } else if (strcmp(mode, "leader-fails") == 0) {
        mode_leader_fails(1, 0, 0);
    } else if (strcmp(mode, "leader-fails-default") == 0) {
        mode_leader_fails(0, 0, 0);
    } else if (strcmp(mode, "leader-fails-voter-dies") == 0) {
        mode_leader_fails_voter_dies();
    } else if (strcmp(mode, "leader-fails-across") == 0) {
        mode_leader_fails(1, 1, 0);
    } else if (strcmp(mode, "leader-fails-across-default") == 0) {
        mode_leader_fails(0, 1, 0);
    } else if (strcmp(mode, "leader-fails-three-servers") == 0) {
        mode_leader_fails(1, 1, 1);
    } else if (strcmp(mode, "leader-fails-abort") == 0) {
        mode_leader_fails_abort(3, 0);
    } else if (strcmp(mode, "leader-fails-abort-node0") == 0) {
        mode_leader_fails_abort(1, 0);
    } else if (strcmp(mode, "leader-fails-abort-three-servers") == 0) {
        mode_leader_fails_abort(4, 1);
    } else if (strncmp(mode, "leader-fails-timeout", 20) == 0) {
        mode_leader_fails_timeout();
    } else {
        FAIL("unknown mode %s", mode);
    }
    CHECK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
