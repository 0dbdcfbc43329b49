/* Fences over a group spanning the two servers of twonode_host after a
 * member died (docs/groups.md, "For host writers"; groupsft, issue 14).
 * The group is ranks 0 (node0), 2 and 3 (node1); rank 1 only takes part in
 * the job. Rank 3 dies once the group is formed; the survivors 0 and 2 fence
 * over {group, PMIX_RANK_WILDCARD} without PMIX_TIMEOUT (only alarm() bounds
 * the wait), so a fence the host cannot complete fails the test.
 *
 * usage: group_fence_client ft         - the group has PMIX_GROUP_FT_COLLECTIVE:
 *                                        the fence completes on both servers,
 *                                        each survivor reads the other's data
 *                                        (direct modex), a second fence ends it
 *        group_fence_client ft-collect - the same with PMIX_COLLECT_DATA: the
 *                                        other survivor's data is local
 *        group_fence_client plain      - the group has no fault tolerance: the
 *                                        fence ends with an error on both
 *                                        servers, not a hang; then a fence of
 *                                        ranks 0 and 2 keeps node1 up until
 *                                        rank 0's fence returned
 *        group_fence_client timeout-late - no group: a fence's latecomer on
 *                                        the server where it timed out */
#include <pmix.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "group_common.h"

static const char *kGroup = "fence-grp";

static void put_commit(const char *key, const char *text) {
    pmix_value_t v;
    v.type = PMIX_STRING;
    v.data.string = (char *)text;
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &v), "Put");
    CHECK(PMIx_Commit(), "Commit");
}

/* `who`'s "fence.key"; with `local_only`, from this process's own store. */
static void expect_key(pmix_rank_t who, int local_only) {
    pmix_proc_t p;
    pmix_value_t *val = NULL;
    pmix_info_t opt;
    bool yes = true;
    char text[32];
    PMIX_LOAD_PROCID(&p, me.nspace, who);
    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    pmix_status_t rc =
        PMIx_Get(&p, "fence.key", local_only ? &opt : NULL, local_only ? 1 : 0, &val);
    if (rc != PMIX_SUCCESS) FAIL("Get fence.key of rank %u: %s", who, PMIx_Error_string(rc));
    snprintf(text, sizeof text, "rank %u", who);
    if (val->type != PMIX_STRING || strcmp(val->data.string, text) != 0)
        FAIL("fence.key of rank %u is not \"%s\"", who, text);
    PMIX_VALUE_RELEASE(val);
}

static pmix_status_t group_fence(int collect) {
    pmix_proc_t grp;
    pmix_info_t info;
    bool yes = true;
    PMIX_LOAD_PROCID(&grp, kGroup, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    return PMIx_Fence(&grp, 1, collect ? &info : NULL, collect ? 1 : 0);
}

/* A job-wide fence with PMIX_TIMEOUT that rank 3 (node1) joins only after
 * the others' timed out: node1's server told the host of its failed part
 * once, and rank 3's late call gets that status at once, without a second
 * hand-over (a second part over the same participants would be one the
 * other node never matches). Rank 3 learns that the others gave up from a
 * fence of ranks 2 and 3 that rank 2 joins afterwards. */
static void mode_timeout_late(void) {
    pmix_proc_t pair[2];
    PMIX_LOAD_PROCID(&pair[0], me.nspace, 2);
    PMIX_LOAD_PROCID(&pair[1], me.nspace, 3);
    pmix_status_t rc;
    if (me.rank == 3) {
        CHECK(PMIx_Fence(pair, 2, NULL, 0), "fence of ranks 2 and 3");
        rc = PMIx_Fence(NULL, 0, NULL, 0); /* no timeout of its own */
        if (rc != PMIX_ERR_TIMEOUT) FAIL("the latecomer got %s", PMIx_Error_string(rc));
        printf("fence latecomer ok: %s\n", PMIx_Error_string(rc));
        return;
    }
    pmix_info_t info;
    int timeout = 2;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    if (rc != PMIX_ERR_TIMEOUT) FAIL("fence without rank 3: %s", PMIx_Error_string(rc));
    if (me.rank == 2) CHECK(PMIx_Fence(pair, 2, NULL, 0), "fence of ranks 2 and 3");
    printf("fence timed out ok: rank %u\n", me.rank);
}

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "ft") != 0 && strcmp(argv[1], "ft-collect") != 0 &&
                      strcmp(argv[1], "plain") != 0 && strcmp(argv[1], "timeout-late") != 0)) {
        fprintf(stderr, "usage: group_fence_client ft|ft-collect|plain|timeout-late\n");
        return 2;
    }
    alarm(60); /* every wait below is bounded */
    group_init();
    if (nprocs != 4) FAIL("wants the 4 ranks of twonode_host");
    if (strcmp(argv[1], "timeout-late") == 0) {
        mode_timeout_late();
        CHECK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
        return 0;
    }
    const int ft = strncmp(argv[1], "ft", 2) == 0;
    const int collect = strcmp(argv[1], "ft-collect") == 0;
    if (me.rank != 1) {
        pmix_proc_t procs[3];
        PMIX_LOAD_PROCID(&procs[0], me.nspace, 0);
        PMIX_LOAD_PROCID(&procs[1], me.nspace, 2);
        PMIX_LOAD_PROCID(&procs[2], me.nspace, 3);
        pmix_info_t dirs[2];
        bool yes = true;
        int timeout = 30;
        PMIX_INFO_LOAD(&dirs[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
        PMIX_INFO_LOAD(&dirs[1], PMIX_GROUP_FT_COLLECTIVE, &yes, PMIX_BOOL);
        CHECK(PMIx_Group_construct(kGroup, procs, 3, dirs, ft ? 2 : 1, NULL, NULL), "construct");
        if (me.rank == 3) raise(SIGKILL);
        char text[32];
        snprintf(text, sizeof text, "rank %u", me.rank);
        put_commit("fence.key", text);
        const pmix_rank_t other = me.rank == 0 ? 2 : 0;
        pmix_status_t rc = group_fence(collect);
        if (ft) {
            CHECK(rc, "fault-tolerant fence over the group");
            expect_key(other, collect);
            /* Nobody leaves before the other survivor read its data. */
            CHECK(group_fence(0), "second fault-tolerant fence over the group");
            printf("group fence across ok: rank %u (%s)\n", me.rank, argv[1]);
        } else {
            if (rc == PMIX_SUCCESS) FAIL("a fence over the group completed without rank 3");
            /* Node1 stays up (rank 2 waits here) until rank 0's fence
             * returned: rank 0's answer comes from the host, not from node1
             * leaving. */
            pmix_proc_t pair[2];
            PMIX_LOAD_PROCID(&pair[0], me.nspace, 0);
            PMIX_LOAD_PROCID(&pair[1], me.nspace, 2);
            CHECK(PMIx_Fence(pair, 2, NULL, 0), "fence of the survivors");
            printf("group plain fence across ok: rank %u got %s\n", me.rank, PMIx_Error_string(rc));
        }
    }
    CHECK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
