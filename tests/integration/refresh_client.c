/* PMIX_GET_REFRESH_CACHE (issue 19 item 6): rank 1 puts "refresh.key" = 1,
 * commits, and both fence with the data collected; rank 0 reads 1. Rank 1
 * puts 2 and commits; a fence without data orders that commit before rank
 * 0's next Get. A plain Get may still read the cached 1; a Get with
 * PMIX_GET_REFRESH_CACHE must read 2. Prints "refresh ok" on rank 0. */
#include <pmix.h>

#include <stdio.h>
#include <string.h>

static int fail(const char *what, pmix_status_t rc) {
    fprintf(stderr, "refresh_client: %s: %s\n", what, PMIx_Error_string(rc));
    return 1;
}

static pmix_status_t get_int(const pmix_proc_t *peer, int refresh, int *out) {
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(peer, "refresh.key", refresh ? &info : NULL, refresh ? 1 : 0, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_SUCCESS) {
        *out = v->type == PMIX_INT ? v->data.integer : -1;
        PMIX_VALUE_RELEASE(v);
    }
    return rc;
}

int main(void) {
    pmix_proc_t me, peer;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) return fail("init", rc);
    PMIX_LOAD_PROCID(&peer, me.nspace, 1);
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_value_t val = {.type = PMIX_INT};
    if (me.rank == 1) {
        val.data.integer = 1;
        if ((rc = PMIx_Put(PMIX_GLOBAL, "refresh.key", &val)) != PMIX_SUCCESS)
            return fail("put", rc);
        if ((rc = PMIx_Commit()) != PMIX_SUCCESS) return fail("commit", rc);
    }
    if ((rc = PMIx_Fence(NULL, 0, &collect, 1)) != PMIX_SUCCESS) return fail("fence 1", rc);
    int got = 0;
    if (me.rank == 0) {
        if ((rc = get_int(&peer, 0, &got)) != PMIX_SUCCESS || got != 1)
            return fail("first get (expected 1)", rc);
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) return fail("fence 2", rc);
    if (me.rank == 1) {
        val.data.integer = 2;
        if ((rc = PMIx_Put(PMIX_GLOBAL, "refresh.key", &val)) != PMIX_SUCCESS)
            return fail("put", rc);
        if ((rc = PMIx_Commit()) != PMIX_SUCCESS) return fail("commit", rc);
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) return fail("fence 3", rc);
    if (me.rank == 0) {
        if ((rc = get_int(&peer, 1, &got)) != PMIX_SUCCESS) return fail("refreshed get", rc);
        if (got != 2) {
            fprintf(stderr, "refresh_client: PMIX_GET_REFRESH_CACHE read %d, expected 2\n", got);
            return 1;
        }
        printf("refresh ok\n");
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) return fail("fence 4", rc);
    PMIX_INFO_DESTRUCT(&collect);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
