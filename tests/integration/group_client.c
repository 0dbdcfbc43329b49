/* PMIx process groups (docs/groups.md), one rule per mode, every process of
 * the job taking part. Each wait is bounded: PMIX_TIMEOUT on the calls,
 * alarm() for events, pmixrun --timeout and the ctest TIMEOUT around it.
 *
 * usage: group_client construct   - collective construct of every rank (in
 *                                   reverse order: group rank = position),
 *                                   context ids, local cids, the members'
 *                                   data and group keys; the group as an
 *                                   address in Get and Fence; destruct, and
 *                                   construct again under the same id
 *        group_client concurrent  - two non-blocking constructs with the
 *                                   same members and different ids, and a
 *                                   fence over the same procs, at once
 *        group_client timeout     - the last rank arrives after the others'
 *                                   PMIX_TIMEOUT: they get PMIX_ERR_TIMEOUT,
 *                                   it gets an error too, nothing hangs
 *        group_client badids      - empty, too long, a namespace, a live
 *                                   group: PMIX_ERR_BAD_PARAM; directives not
 *                                   built yet: PMIX_ERR_NOT_SUPPORTED
 *        group_client leave       - the last rank leaves; the others get
 *                                   PMIX_GROUP_LEFT and
 *                                   PMIX_GROUP_MEMBERSHIP_UPDATE, the group
 *                                   goes on without it (destruct of the rest)
 *        group_client query       - PMIX_QUERY_NUM_GROUPS, _GROUP_NAMES,
 *                                   _GROUP_MEMBERSHIP
 *        group_client optional-dead / optional-late - PMIX_GROUP_OPTIONAL:
 *                                   the last rank dies / comes too late;
 *                                   PMIX_ERR_PARTIAL_SUCCESS without it
 *        group_client ft-dead     - PMIX_GROUP_FT_COLLECTIVE: as optional-dead,
 *                                   the construct goes on with the survivors
 *        group_client ft-fence    - PMIX_GROUP_FT_COLLECTIVE for fences: rank
 *                                   3 dies; a fence over a group built
 *                                   without it fails, one built with it
 *                                   completes with the survivors
 *        group_client notify      - PMIX_GROUP_NOTIFY_TERMINATION: the last
 *                                   rank ends without destruct; the others
 *                                   get PMIX_GROUP_MEMBER_FAILED and
 *                                   PMIX_GROUP_MEMBERSHIP_UPDATE, and destruct
 *        group_client notify-group - PMIx_Notify_event to {group, rank}
 *                                   and {group, WILDCARD}
 *        group_client local-only  - PMIX_GROUP_LOCAL_ONLY: a construct of
 *                                   every rank with it fails with
 *                                   PMIX_ERR_BAD_PARAM where some rank is
 *                                   served elsewhere; one over this server's
 *                                   own ranks (PMIX_LOCAL_PEERS) forms
 *                                   without the host, and destructs
 *        group_client parent      - rank 0 spawns 2 children; parent and
 *                                   children form one group across the two
 *                                   namespaces (child: the spawned role) */
#include <pmix.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "group_common.h"

static uint32_t job_size(const char *nspace) {
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    pmix_info_t opt;
    bool yes = true;
    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    PMIX_LOAD_PROCID(&wild, nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, &opt, 1, &val), "Get job size");
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

/* The value of `key` of `who`, from this process's own store only
 * (PMIX_OPTIONAL): it must have come with the construct. */
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

static size_t get_size_t(const pmix_proc_t *who, const char *key, const char *grp) {
    pmix_value_t *val = NULL;
    pmix_info_t q;
    PMIX_INFO_LOAD(&q, PMIX_GROUP_ID, grp, PMIX_STRING);
    pmix_status_t rc = PMIx_Get(who, key, &q, 1, &val);
    PMIX_INFO_DESTRUCT(&q);
    if (rc != PMIX_SUCCESS) FAIL("Get %s: %s", key, PMIx_Error_string(rc));
    if (val->type != PMIX_SIZE) FAIL("%s has type %d", key, val->type);
    size_t v = val->data.size;
    PMIX_VALUE_RELEASE(val);
    return v;
}

/* Whether `grp` is among PMIX_GROUP_NAMES of this process. */
static int in_group_names(const char *grp) {
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&me, PMIX_GROUP_NAMES, NULL, 0, &val);
    if (rc == PMIX_ERR_NOT_FOUND) return 0;
    if (rc != PMIX_SUCCESS) FAIL("Get group names: %s", PMIx_Error_string(rc));
    if (val->type != PMIX_DATA_ARRAY || val->data.darray->type != PMIX_STRING)
        FAIL("group names have type %d", val->type);
    int found = 0;
    char **names = (char **)val->data.darray->array;
    for (size_t i = 0; i < val->data.darray->size; ++i) found |= strcmp(names[i], grp) == 0;
    PMIX_VALUE_RELEASE(val);
    return found;
}

static pmix_proc_t *all_ranks(int reverse) {
    pmix_proc_t *procs = calloc(nprocs, sizeof(pmix_proc_t));
    for (uint32_t i = 0; i < nprocs; ++i)
        PMIX_LOAD_PROCID(&procs[i], me.nspace, reverse ? nprocs - 1 - i : i);
    return procs;
}

/* Checks the construct's results: id, membership in `procs` order, and
 * returns the context id (SIZE_MAX: none). */
static size_t check_results(const char *grp, const pmix_proc_t *procs, size_t n,
                            pmix_info_t *results, size_t nresults) {
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
            for (size_t k = 0; k < n; ++k)
                if (!PMIX_CHECK_PROCID(&m[k], &procs[k]))
                    FAIL("group rank %zu is %s:%u", k, m[k].nspace, m[k].rank);
            seen_members = 1;
        } else if (PMIX_CHECK_KEY(&results[i], PMIX_GROUP_CONTEXT_ID)) {
            cid = results[i].value.data.size;
        }
    }
    if (!seen_id || !seen_members) FAIL("construct results lack the id or the membership");
    return cid;
}

/* Every rank's context id equals mine: exchanged through a fence. */
static void same_context_id_everywhere(const char *grp, size_t cid) {
    char key[64], text[32];
    snprintf(key, sizeof key, "cid.%s", grp);
    snprintf(text, sizeof text, "%zu", cid);
    put_commit(key, text);
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Fence(NULL, 0, &collect, 1), "Fence");
    for (uint32_t r = 0; r < nprocs; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        expect_key(&p, key, text);
    }
}

/* Constructs `grp` over `procs`; `members`: the expected membership (NULL:
 * `procs` itself, `nmembers` entries). */
static size_t construct_as(const char *grp, const pmix_proc_t *procs, size_t n,
                           const pmix_proc_t *members, size_t nmembers, int assign,
                           size_t local_cid) {
    pmix_info_t info[3];
    size_t ninfo = 0;
    int timeout = 30;
    bool yes = true;
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    if (assign) PMIX_INFO_LOAD(&info[ninfo++], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    if (local_cid != SIZE_MAX)
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_GROUP_LOCAL_CID, &local_cid, PMIX_SIZE);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    CHECK(PMIx_Group_construct(grp, procs, n, info, ninfo, &results, &nresults), "construct");
    size_t cid = check_results(grp, members != NULL ? members : procs,
                               members != NULL ? nmembers : n, results, nresults);
    PMIX_INFO_FREE(results, nresults);
    if (assign && cid == SIZE_MAX) FAIL("no context id assigned");
    return cid;
}

static size_t construct(const char *grp, const pmix_proc_t *procs, size_t n, int assign,
                        size_t local_cid) {
    return construct_as(grp, procs, n, NULL, 0, assign, local_cid);
}

/* PMIx_Get_nb of `key` of `who`: its status, and the string or the array
 * size of its value. */
struct got {
    _Atomic int done; /* set last, on the progress thread */
    pmix_status_t status;
    char text[64];
    size_t size;
};

static void got_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    struct got *g = cbdata;
    g->status = status;
    if (status == PMIX_SUCCESS && kv->type == PMIX_STRING)
        snprintf(g->text, sizeof g->text, "%s", kv->data.string);
    if (status == PMIX_SUCCESS && kv->type == PMIX_DATA_ARRAY) g->size = kv->data.darray->size;
    g->done = 1;
}

static void get_nb(const pmix_proc_t *who, const char *key, const char *grp, struct got *g) {
    pmix_info_t q[2];
    bool yes = true;
    PMIX_INFO_LOAD(&q[0], PMIX_OPTIONAL, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&q[1], PMIX_GROUP_ID, grp, PMIX_STRING);
    memset(g, 0, sizeof *g);
    CHECK(PMIx_Get_nb(who, key, q, grp != NULL ? 2 : 1, got_cb, g), "Get_nb");
    while (!g->done) usleep(1000); /* bounded by alarm() */
    PMIX_INFO_DESTRUCT(&q[1]);
}

static void mode_construct(void) {
    char text[64];
    snprintf(text, sizeof text, "rank %u", me.rank);
    put_commit("member.key", text);
    pmix_proc_t *procs = all_ranks(1);
    size_t cid = construct("test-grp", procs, nprocs, 1, 100 + me.rank);
    same_context_id_everywhere("test-grp", cid);
    if (get_size_t(&me, PMIX_GROUP_CONTEXT_ID, "test-grp") != cid) FAIL("Get context id");
    if (!in_group_names("test-grp")) FAIL("test-grp not among my group names");
    for (uint32_t g = 0; g < nprocs; ++g) {
        /* group rank g is procs[g]: its committed key, by its real name and by the group's */
        pmix_proc_t by_group;
        PMIX_LOAD_PROCID(&by_group, "test-grp", g);
        snprintf(text, sizeof text, "rank %u", procs[g].rank);
        expect_key(&procs[g], "member.key", text);
        expect_key(&by_group, "member.key", text);
        /* The non-blocking Get translates the group address too. */
        struct got g_nb;
        get_nb(&by_group, "member.key", NULL, &g_nb);
        CHECK(g_nb.status, "Get_nb {group, rank}");
        if (strcmp(g_nb.text, text) != 0) FAIL("Get_nb of group rank %u: '%s'", g, g_nb.text);
        if (get_size_t(&procs[g], PMIX_GROUP_LOCAL_CID, "test-grp") != 100 + procs[g].rank)
            FAIL("local cid of %u", procs[g].rank);
    }
    struct got members_nb;
    get_nb(&me, PMIX_GROUP_MEMBERSHIP, "test-grp", &members_nb);
    CHECK(members_nb.status, "Get_nb membership");
    if (members_nb.size != nprocs) FAIL("Get_nb membership has %zu", members_nb.size);
    /* The group as a fence address. */
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, "test-grp", PMIX_RANK_WILDCARD);
    CHECK(PMIx_Fence(&wild, 1, NULL, 0), "Fence over the group");
    CHECK(PMIx_Group_destruct("test-grp", NULL, 0), "destruct");
    if (in_group_names("test-grp")) FAIL("test-grp still among my group names");
    /* A destroyed group's id names a new group (OpenPMIx 4.2 hangs here). */
    size_t again = construct("test-grp", procs, nprocs, 1, SIZE_MAX);
    if (again == cid) FAIL("the new group got the old context id %zu", cid);
    same_context_id_everywhere("test-grp-2", again);
    CHECK(PMIx_Group_destruct("test-grp", NULL, 0), "destruct again");
    free(procs);
    printf("group construct ok: context ids %zu then %zu\n", cid, again);
}

struct nb {
    _Atomic int done; /* set last, on the progress thread */
    pmix_status_t status;
    size_t cid;
};

static void construct_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                         pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    struct nb *s = cbdata;
    s->status = status;
    s->cid = SIZE_MAX;
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_CONTEXT_ID)) s->cid = info[i].value.data.size;
    if (release_fn != NULL) release_fn(release_cbdata);
    s->done = 1;
}

static void op_cb(pmix_status_t status, void *cbdata) {
    struct nb *s = cbdata;
    s->status = status;
    s->done = 1;
}

static void wait_for(struct nb *s) {
    while (!s->done) usleep(1000); /* bounded by alarm() */
}

static void mode_concurrent(void) {
    pmix_proc_t *procs = all_ranks(0);
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    struct nb a = {0}, b = {0}, f = {0};
    /* Odd ranks start them in the other order. */
    const char *first = me.rank % 2 ? "grp-b" : "grp-a";
    const char *second = me.rank % 2 ? "grp-a" : "grp-b";
    struct nb *sf = me.rank % 2 ? &b : &a, *ss = me.rank % 2 ? &a : &b;
    CHECK(PMIx_Group_construct_nb(first, procs, nprocs, &info, 1, construct_cb, sf),
          "construct_nb");
    CHECK(PMIx_Fence_nb(procs, nprocs, NULL, 0, op_cb, &f), "Fence_nb");
    CHECK(PMIx_Group_construct_nb(second, procs, nprocs, &info, 1, construct_cb, ss),
          "construct_nb");
    wait_for(&a);
    wait_for(&b);
    wait_for(&f);
    CHECK(a.status, "construct grp-a");
    CHECK(b.status, "construct grp-b");
    CHECK(f.status, "fence");
    if (a.cid == SIZE_MAX || b.cid == SIZE_MAX || a.cid == b.cid)
        FAIL("context ids %zu and %zu", a.cid, b.cid);
    same_context_id_everywhere("grp-a", a.cid);
    same_context_id_everywhere("grp-b", b.cid);
    struct nb da = {0}, db = {0};
    CHECK(PMIx_Group_destruct_nb("grp-b", NULL, 0, op_cb, &db), "destruct_nb");
    CHECK(PMIx_Group_destruct_nb("grp-a", NULL, 0, op_cb, &da), "destruct_nb");
    wait_for(&da);
    wait_for(&db);
    CHECK(da.status, "destruct grp-a");
    CHECK(db.status, "destruct grp-b");
    free(procs);
    printf("group concurrent ok\n");
}

static void mode_timeout(void) {
    pmix_proc_t *procs = all_ranks(0);
    pmix_info_t info;
    int timeout = 2;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_status_t rc;
    if (me.rank == nprocs - 1) {
        /* The latecomer: this fence completes once the others gave up. */
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
        /* No timeout of its own: the failed construct's status answers it. */
        rc = PMIx_Group_construct("late-grp", procs, nprocs, NULL, 0, NULL, NULL);
        if (rc != PMIX_ERR_TIMEOUT) FAIL("the latecomer got %s", PMIx_Error_string(rc));
        printf("group latecomer got %s\n", PMIx_Error_string(rc));
    } else {
        rc = PMIx_Group_construct("late-grp", procs, nprocs, &info, 1, NULL, NULL);
        if (rc != PMIX_ERR_TIMEOUT)
            FAIL("construct without the last rank: %s", PMIx_Error_string(rc));
        printf("group timed out as expected\n");
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
    }
    free(procs);
}

static void mode_badids(void) {
    pmix_proc_t *procs = all_ranks(0);
    char longid[PMIX_MAX_NSLEN + 8];
    memset(longid, 'x', sizeof longid - 1);
    longid[sizeof longid - 1] = '\0';
    pmix_status_t rc;
    if ((rc = PMIx_Group_construct("", procs, nprocs, NULL, 0, NULL, NULL)) != PMIX_ERR_BAD_PARAM)
        FAIL("empty id: %s", PMIx_Error_string(rc));
    if ((rc = PMIx_Group_construct(longid, procs, nprocs, NULL, 0, NULL, NULL)) !=
        PMIX_ERR_BAD_PARAM)
        FAIL("long id: %s", PMIx_Error_string(rc));
    if ((rc = PMIx_Group_construct(me.nspace, procs, nprocs, NULL, 0, NULL, NULL)) !=
        PMIX_ERR_BAD_PARAM)
        FAIL("namespace as id: %s", PMIx_Error_string(rc));
    if ((rc = PMIx_Group_destruct("never-made", NULL, 0)) != PMIX_ERR_BAD_PARAM)
        FAIL("destruct of an unknown group: %s", PMIx_Error_string(rc));
    /* PMIX_GROUP_ADD_MEMBERS without PMIX_GROUP_BOOTSTRAP: refused, not ignored. */
    pmix_info_t opt;
    pmix_data_array_t add = {PMIX_PROC, 1, &me};
    PMIX_INFO_LOAD(&opt, PMIX_GROUP_ADD_MEMBERS, &add, PMIX_DATA_ARRAY);
    rc = PMIx_Group_construct("boot-grp", procs, nprocs, &opt, 1, NULL, NULL);
    PMIX_INFO_DESTRUCT(&opt);
    if (rc != PMIX_ERR_NOT_SUPPORTED) FAIL("PMIX_GROUP_ADD_MEMBERS: %s", PMIx_Error_string(rc));
    construct("live-grp", procs, nprocs, 0, SIZE_MAX);
    if ((rc = PMIx_Group_construct("live-grp", procs, nprocs, NULL, 0, NULL, NULL)) !=
        PMIX_ERR_BAD_PARAM)
        FAIL("a live group's id: %s", PMIx_Error_string(rc));
    CHECK(PMIx_Group_destruct("live-grp", NULL, 0), "destruct");
    free(procs);
    printf("group bad ids ok\n");
}

/* PMIX_LOCAL_PEERS of this process: the ranks of its job on this server. */
static pmix_proc_t *local_peers(size_t *n) {
    pmix_value_t *val = NULL;
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &val), "Get local peers");
    if (val->type != PMIX_STRING) FAIL("PMIX_LOCAL_PEERS has type %d", val->type);
    pmix_proc_t *procs = calloc(nprocs, sizeof(pmix_proc_t));
    *n = 0;
    for (char *s = val->data.string; *s != '\0' && *n < nprocs;) {
        char *end = NULL;
        unsigned long r = strtoul(s, &end, 10);
        if (end == s) FAIL("PMIX_LOCAL_PEERS '%s' is not a list of ranks", val->data.string);
        PMIX_LOAD_PROCID(&procs[*n], me.nspace, (pmix_rank_t)r); /* a macro: no ++ inside */
        ++*n;
        s = *end == ',' ? end + 1 : end;
    }
    PMIX_VALUE_RELEASE(val);
    return procs;
}

static void mode_local_only(void) {
    pmix_proc_t *all = all_ranks(0);
    size_t nlocal = 0;
    pmix_proc_t *local = local_peers(&nlocal);
    pmix_info_t info[2];
    bool yes = true;
    int timeout = 30;
    PMIX_INFO_LOAD(&info[0], PMIX_GROUP_LOCAL_ONLY, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Group_construct("lo-all", all, nprocs, info, 2, &results, &nresults);
    PMIX_INFO_FREE(results, nresults);
    const int spans = nlocal < nprocs; /* some rank is served elsewhere */
    if (spans && rc != PMIX_ERR_BAD_PARAM)
        FAIL("LOCAL_ONLY naming a remote rank: %s", PMIx_Error_string(rc));
    if (!spans) {
        CHECK(rc, "LOCAL_ONLY construct of every rank (all local)");
        CHECK(PMIx_Group_destruct("lo-all", NULL, 0), "destruct lo-all");
    }
    /* This server's own ranks: one group per server, named by its lowest rank. */
    char grp[64];
    snprintf(grp, sizeof grp, "lo-node-of-%u", local[0].rank);
    results = NULL;
    nresults = 0;
    CHECK(PMIx_Group_construct(grp, local, nlocal, info, 2, &results, &nresults),
          "LOCAL_ONLY construct of the local peers");
    check_results(grp, local, nlocal, results, nresults);
    PMIX_INFO_FREE(results, nresults);
    if (!in_group_names(grp)) FAIL("%s is not among PMIX_GROUP_NAMES", grp);
    CHECK(PMIx_Group_destruct(grp, NULL, 0), "destruct local group");
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    free(local);
    free(all);
    printf("group local only ok: %zu local of %u%s\n", nlocal, nprocs,
           spans ? ", the whole job refused" : "");
}

static _Atomic int left_seen = 0; /* handlers run on the progress thread */
static pmix_proc_t left_source;
/* PMIX_GROUP_MEMBERSHIP_UPDATE: the size of the membership it carried. */
static _Atomic size_t update_size = 0;

static void on_update(size_t id, pmix_status_t status, const pmix_proc_t *source,
                      pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; ++i)
        if (status == PMIX_GROUP_MEMBERSHIP_UPDATE &&
            PMIX_CHECK_KEY(&info[i], PMIX_GROUP_MEMBERSHIP))
            update_size = info[i].value.data.darray->size;
    if (cbfunc != NULL) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void on_left(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)results, (void)nresults;
    int ours = 0;
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_GROUP_ID) &&
            strcmp(info[i].value.data.string, "leave-grp") == 0)
            ours = 1;
    if (status == PMIX_GROUP_LEFT && ours) {
        left_source = *source;
        left_seen = 1;
    }
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Registration completes on the progress thread: the status lands in a flag
 * that outlives the caller's frame, and the caller waits for it, so no event
 * sent after this returns is missed. */
static _Atomic int reg_done = 0;
static _Atomic pmix_status_t reg_status = PMIX_ERR_TIMEOUT;

static void registered(pmix_status_t status, size_t ref, void *cbdata) {
    (void)ref, (void)cbdata;
    reg_status = status;
    reg_done = 1;
}

static void register_handler(pmix_status_t *codes, size_t ncodes, pmix_notification_fn_t fn) {
    reg_done = 0;
    PMIx_Register_event_handler(codes, ncodes, NULL, 0, fn, registered, NULL);
    while (!reg_done) usleep(1000); /* bounded by alarm() */
    if (reg_status != PMIX_SUCCESS) FAIL("register handler: %s", PMIx_Error_string(reg_status));
}

static void mode_leave(void) {
    pmix_proc_t *procs = all_ranks(0);
    pmix_status_t code = PMIX_GROUP_LEFT, ucode = PMIX_GROUP_MEMBERSHIP_UPDATE;
    register_handler(&code, 1, on_left);
    register_handler(&ucode, 1, on_update);
    construct("leave-grp", procs, nprocs, 0, SIZE_MAX);
    const pmix_rank_t leaver = nprocs - 1;
    if (me.rank == leaver) {
        CHECK(PMIx_Group_leave("leave-grp", NULL, 0), "leave");
        if (in_group_names("leave-grp")) FAIL("still a member after leaving");
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
        printf("group left ok\n");
    } else {
        while (!left_seen) usleep(1000); /* bounded by alarm() */
        if (left_source.rank != leaver) FAIL("PMIX_GROUP_LEFT from rank %u", left_source.rank);
        while (update_size != nprocs - 1) usleep(1000); /* bounded by alarm() */
        pmix_value_t *val = NULL;
        pmix_info_t q;
        PMIX_INFO_LOAD(&q, PMIX_GROUP_ID, "leave-grp", PMIX_STRING);
        CHECK(PMIx_Get(&me, PMIX_GROUP_MEMBERSHIP, &q, 1, &val), "Get membership");
        PMIX_INFO_DESTRUCT(&q);
        if (val->data.darray->size != nprocs - 1)
            FAIL("membership has %zu", val->data.darray->size);
        PMIX_VALUE_RELEASE(val);
        /* The group goes on without the leaver. */
        CHECK(PMIx_Group_destruct("leave-grp", NULL, 0), "destruct of the rest");
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
        printf("group saw leave ok\n");
    }
    free(procs);
}

static void mode_query(void) {
    pmix_proc_t *procs = all_ranks(0);
    construct("query-grp", procs, nprocs, 0, SIZE_MAX);
    pmix_query_t q[3];
    PMIX_QUERY_CONSTRUCT(&q[0]);
    PMIX_QUERY_CONSTRUCT(&q[1]);
    PMIX_QUERY_CONSTRUCT(&q[2]);
    pmix_status_t arc;
    PMIX_ARGV_APPEND(arc, q[0].keys, PMIX_QUERY_NUM_GROUPS);
    PMIX_ARGV_APPEND(arc, q[1].keys, PMIX_QUERY_GROUP_NAMES);
    PMIX_ARGV_APPEND(arc, q[2].keys, PMIX_QUERY_GROUP_MEMBERSHIP);
    (void)arc;
    PMIX_INFO_CREATE(q[2].qualifiers, 1);
    q[2].nqual = 1;
    PMIX_INFO_LOAD(&q[2].qualifiers[0], PMIX_GROUP_ID, "query-grp", PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    CHECK(PMIx_Query_info(q, 3, &results, &nresults), "Query");
    int ok = 0;
    /* One PMIX_QUERY_RESULTS (an array of infos) per query. */
    for (size_t j = 0; j < nresults; ++j) {
        if (!PMIX_CHECK_KEY(&results[j], PMIX_QUERY_RESULTS)) continue;
        pmix_info_t *r = (pmix_info_t *)results[j].value.data.darray->array;
        size_t nr = results[j].value.data.darray->size;
        for (size_t i = 0; i < nr; ++i) {
            if (PMIX_CHECK_KEY(&r[i], PMIX_QUERY_NUM_GROUPS) && r[i].value.data.size >= 1) ok |= 1;
            if (PMIX_CHECK_KEY(&r[i], PMIX_QUERY_GROUP_NAMES)) {
                pmix_data_array_t *d = r[i].value.data.darray;
                for (size_t k = 0; k < d->size; ++k)
                    if (strcmp(((char **)d->array)[k], "query-grp") == 0) ok |= 2;
            }
            if (PMIX_CHECK_KEY(&r[i], PMIX_QUERY_GROUP_MEMBERSHIP) &&
                r[i].value.data.darray->size == nprocs)
                ok |= 4;
        }
    }
    if (ok != 7) FAIL("query answers incomplete (%d)", ok);
    PMIX_INFO_FREE(results, nresults);
    for (int i = 0; i < 3; ++i) PMIX_QUERY_DESTRUCT(&q[i]);
    CHECK(PMIx_Group_destruct("query-grp", NULL, 0), "destruct");
    free(procs);
    printf("group query ok\n");
}

/* PMIX_GROUP_OPTIONAL: the last rank dies after PMIx_Init ("dead") or comes
 * after the others' PMIX_TIMEOUT ("late"); the others' group forms without
 * it, PMIX_ERR_PARTIAL_SUCCESS with the reduced membership. */
static void mode_optional(int dead, const char *key) {
    pmix_proc_t *procs = all_ranks(0);
    const pmix_rank_t last = nprocs - 1;
    if (dead && me.rank == last) raise(SIGKILL);
    pmix_info_t info[2];
    bool yes = true;
    int timeout = dead ? 30 : 2;
    PMIX_INFO_LOAD(&info[0], key, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc;
    if (!dead && me.rank == last) {
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence"); /* the others are done */
        rc = PMIx_Group_construct("opt-grp", procs, nprocs, info, 2, &results, &nresults);
        if (rc != PMIX_ERR_TIMEOUT) FAIL("the optional latecomer got %s", PMIx_Error_string(rc));
        printf("group optional latecomer ok\n");
        free(procs);
        return;
    }
    rc = PMIx_Group_construct("opt-grp", procs, nprocs, info, 2, &results, &nresults);
    if (rc != PMIX_ERR_PARTIAL_SUCCESS) FAIL("optional construct: %s", PMIx_Error_string(rc));
    check_results("opt-grp", procs, nprocs - 1, results, nresults);
    PMIX_INFO_FREE(results, nresults);
    if (!dead) CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
    /* The group is the survivors: destruct does not wait for the missing one. */
    CHECK(PMIx_Group_destruct("opt-grp", NULL, 0), "destruct");
    free(procs);
    printf("group optional ok: %u members\n", nprocs - 1);
}

static _Atomic int failed_seen = 0;
static pmix_rank_t failed_rank = PMIX_RANK_UNDEF;

static void on_member_failed(size_t id, pmix_status_t status, const pmix_proc_t *source,
                             pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                             size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                             void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    for (size_t i = 0; i < ninfo; ++i)
        if (status == PMIX_GROUP_MEMBER_FAILED &&
            PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC))
            failed_rank = info[i].value.data.proc->rank;
    if (status == PMIX_GROUP_MEMBER_FAILED) failed_seen = 1;
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* PMIX_GROUP_NOTIFY_TERMINATION: the last rank ends (PMIx_Finalize) without
 * leaving or destructing; the others get PMIX_GROUP_MEMBER_FAILED and their
 * destruct completes without it. */
static void mode_notify(void) {
    pmix_proc_t *procs = all_ranks(0);
    pmix_status_t code = PMIX_GROUP_MEMBER_FAILED, ucode = PMIX_GROUP_MEMBERSHIP_UPDATE;
    register_handler(&code, 1, on_member_failed);
    register_handler(&ucode, 1, on_update);
    pmix_info_t info[2];
    bool yes = true;
    int timeout = 30;
    PMIX_INFO_LOAD(&info[0], PMIX_GROUP_NOTIFY_TERMINATION, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    CHECK(PMIx_Group_construct("notify-grp", procs, nprocs, info, 2, NULL, NULL), "construct");
    if (me.rank == nprocs - 1) {
        /* The others' destructs are under way once this fence completes
         * (each sent its destruct before the fence). */
        CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
        printf("group member ends without destruct\n");
        free(procs);
        return; /* main() finalizes */
    }
    struct nb d = {0};
    CHECK(PMIx_Group_destruct_nb("notify-grp", NULL, 0, op_cb, &d), "destruct_nb");
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
    wait_for(&d); /* bounded by alarm() */
    CHECK(d.status, "destruct of the survivors");
    while (!failed_seen) usleep(1000); /* bounded by alarm() */
    if (failed_rank != nprocs - 1) FAIL("PMIX_GROUP_MEMBER_FAILED about rank %u", failed_rank);
    while (update_size != nprocs - 1) usleep(1000); /* bounded by alarm() */
    free(procs);
    printf("group member failed ok\n");
}

static _Atomic int got_one = 0, got_all = 0;

static void on_group_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                           pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    if (status == -3200) got_one = 1;
    if (status == -3201) got_all = 1;
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void notify_group(pmix_status_t code, pmix_rank_t group_rank) {
    pmix_proc_t target;
    pmix_info_t info[2];
    bool yes = true;
    PMIX_LOAD_PROCID(&target, "ev-grp", group_rank);
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_CUSTOM_RANGE, &target, PMIX_PROC);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
    CHECK(PMIx_Notify_event(code, &me, PMIX_RANGE_CUSTOM, info, 2, NULL, NULL), "Notify");
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

/* The group as an event address: ranks 2, 1, 0 form "ev-grp" (group rank 0
 * is rank 2); rank 0 notifies {ev-grp, 0} (rank 2 only) and
 * {ev-grp, WILDCARD} (the members). Rank 3, not a member, only fences. */
static void mode_notify_group(void) {
    pmix_status_t codes[2] = {-3200, -3201};
    register_handler(codes, 2, on_group_event);
    if (me.rank <= 2) {
        pmix_proc_t procs[3];
        for (int i = 0; i < 3; ++i) PMIX_LOAD_PROCID(&procs[i], me.nspace, 2 - i);
        construct("ev-grp", procs, 3, 0, SIZE_MAX);
        if (me.rank == 0) {
            notify_group(-3200, 0);
            notify_group(-3201, PMIX_RANK_WILDCARD);
        } else {
            while (!got_all || (me.rank == 2 && !got_one)) usleep(1000); /* bounded by alarm() */
            printf("group event ok: rank %u\n", me.rank);
        }
    }
    CHECK(PMIx_Fence(NULL, 0, NULL, 0), "Fence");
    if (me.rank <= 2) CHECK(PMIx_Group_destruct("ev-grp", NULL, 0), "destruct");
}

/* Parent job (1 rank) and a spawned job (2 ranks) in one group. */
static void mode_parent(const char *self) {
    pmix_app_t app;
    pmix_nspace_t child;
    char *argv[] = {(char *)self, "child", NULL};
    put_commit("member.key", "parent");
    memset(&app, 0, sizeof app);
    app.cmd = (char *)self;
    app.argv = argv;
    app.maxprocs = 2;
    CHECK(PMIx_Spawn(NULL, 0, &app, 1, child), "Spawn");
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], me.nspace, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], child, PMIX_RANK_WILDCARD);
    pmix_proc_t members[3];
    PMIX_LOAD_PROCID(&members[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&members[1], child, 0);
    PMIX_LOAD_PROCID(&members[2], child, 1);
    construct_as("family-grp", procs, 2, members, 3, 1, SIZE_MAX);
    expect_key(&members[1], "member.key", "child 0");
    expect_key(&members[2], "member.key", "child 1");
    CHECK(PMIx_Group_destruct("family-grp", NULL, 0), "destruct");
    printf("group parent ok\n");
}

static void mode_child(void) {
    pmix_value_t *val = NULL;
    pmix_proc_t wild;
    char text[32], parent_ns[PMIX_MAX_NSLEN + 1];
    snprintf(text, sizeof text, "child %u", me.rank);
    put_commit("member.key", text);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&wild, PMIX_PARENT_ID, NULL, 0, &val), "Get parent id");
    PMIX_LOAD_NSPACE(parent_ns, val->data.proc->nspace);
    PMIX_VALUE_RELEASE(val);
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], parent_ns, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], me.nspace, PMIX_RANK_WILDCARD);
    pmix_proc_t members[3];
    PMIX_LOAD_PROCID(&members[0], parent_ns, 0);
    PMIX_LOAD_PROCID(&members[1], me.nspace, 0);
    PMIX_LOAD_PROCID(&members[2], me.nspace, 1);
    construct_as("family-grp", procs, 2, members, 3, 1, SIZE_MAX);
    pmix_proc_t parent0;
    PMIX_LOAD_PROCID(&parent0, parent_ns, 0);
    expect_key(&parent0, "member.key", "parent");
    if (job_size(parent_ns) != 1) FAIL("the parent job's size is not 1");
    CHECK(PMIx_Group_destruct("family-grp", NULL, 0), "destruct");
    printf("group child ok\n");
}

/* PMIX_GROUP_FT_COLLECTIVE for fences (4 ranks): plain-grp is every rank,
 * ft-grp is ranks 0, 1 and 3, built with PMIX_GROUP_FT_COLLECTIVE; rank 3
 * dies. A fence over plain-grp fails (never hangs); one over ft-grp
 * completes with ranks 0 and 1, their data collected; a collecting fence
 * over the job with the directive itself completes with ranks 0, 1, 2. */
static void mode_ft_fence(void) {
    if (nprocs != 4) FAIL("ft-fence wants 4 ranks");
    pmix_proc_t *procs = all_ranks(0);
    pmix_proc_t ft_procs[3];
    PMIX_LOAD_PROCID(&ft_procs[0], me.nspace, 0);
    PMIX_LOAD_PROCID(&ft_procs[1], me.nspace, 1);
    PMIX_LOAD_PROCID(&ft_procs[2], me.nspace, 3);
    pmix_info_t info[3];
    bool yes = true;
    int timeout = 30;
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_GROUP_FT_COLLECTIVE, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[2], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Group_construct("plain-grp", procs, nprocs, info, 1, NULL, NULL),
          "construct plain-grp");
    free(procs);
    if (me.rank != 2)
        CHECK(PMIx_Group_construct("ft-grp", ft_procs, 3, info, 2, NULL, NULL), "construct ft-grp");
    if (me.rank == 3) raise(SIGKILL);
    pmix_proc_t grp;
    PMIX_LOAD_PROCID(&grp, "plain-grp", PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Fence(&grp, 1, &info[0], 1);
    if (rc == PMIX_SUCCESS) FAIL("a fence over plain-grp completed without a member");
    char text[32];
    snprintf(text, sizeof text, "rank %u", me.rank);
    put_commit("ft.key", text);
    pmix_info_t dirs[2] = {info[0], info[2]};
    if (me.rank != 2) {
        PMIX_LOAD_PROCID(&grp, "ft-grp", PMIX_RANK_WILDCARD);
        CHECK(PMIx_Fence(&grp, 1, dirs, 2), "fence over ft-grp");
        for (pmix_rank_t r = 0; r < 2; ++r) {
            pmix_proc_t p;
            PMIX_LOAD_PROCID(&p, me.nspace, r);
            snprintf(text, sizeof text, "rank %u", r);
            expect_key(&p, "ft.key", text);
        }
    }
    /* The fence's own directive. */
    CHECK(PMIx_Fence(NULL, 0, info, 3), "fence over the job with PMIX_GROUP_FT_COLLECTIVE");
    for (pmix_rank_t r = 0; r < 3; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        snprintf(text, sizeof text, "rank %u", r);
        expect_key(&p, "ft.key", text);
    }
    printf("group ft fence ok: the plain fence got %s\n", PMIx_Error_string(rc));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr,
                "usage: group_client construct|concurrent|timeout|badids|leave|query|parent\n");
        return 2;
    }
    alarm(90); /* every wait below is bounded */
    CHECK(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    nprocs = job_size(me.nspace);
    const char *mode = argv[1];
    if (strcmp(mode, "construct") == 0) {
        mode_construct();
    } else if (strcmp(mode, "concurrent") == 0) {
        mode_concurrent();
    } else if (strcmp(mode, "timeout") == 0) {
        mode_timeout();
    } else if (strcmp(mode, "badids") == 0) {
        mode_badids();
    } else if (strcmp(mode, "leave") == 0) {
        mode_leave();
    } else if (strcmp(mode, "query") == 0) {
        mode_query();
    } else if (strcmp(mode, "optional-dead") == 0) {
        mode_optional(1, PMIX_GROUP_OPTIONAL);
    } else if (strcmp(mode, "optional-late") == 0) {
        mode_optional(0, PMIX_GROUP_OPTIONAL);
    } else if (strcmp(mode, "ft-dead") == 0) {
        mode_optional(1, PMIX_GROUP_FT_COLLECTIVE);
    } else if (strcmp(mode, "ft-fence") == 0) {
        mode_ft_fence();
    } else if (strcmp(mode, "notify") == 0) {
        mode_notify();
    } else if (strcmp(mode, "notify-group") == 0) {
        mode_notify_group();
    } else if (strcmp(mode, "local-only") == 0) {
        mode_local_only();
    } else if (strcmp(mode, "parent") == 0) {
        mode_parent(argv[0]);
    } else if (strcmp(mode, "child") == 0) {
        mode_child();
    } else {
        FAIL("unknown mode %s", mode);
    }
    CHECK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
