/* The highest rank dies (SIGKILL) before the fence; every other rank must see
 * its fence fail (PMIX_ERR_LOST_CONNECTION or PMIX_ERR_TIMEOUT) and says so.
 * usage: killed_client */
#include <pmix.h>

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    pmix_proc_t me, wild;
    pmix_value_t *val = NULL;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val) != PMIX_SUCCESS) return 1;
    uint32_t n = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    if (me.rank == n - 1) {
        usleep(200000); /* let the others enter the fence first (not required) */
        raise(SIGKILL);
    }
    pmix_info_t t;
    int timeout = 30;
    PMIX_INFO_LOAD(&t, PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &t, 1);
    if (rc == PMIX_ERR_LOST_CONNECTION || rc == PMIX_ERR_TIMEOUT) {
        printf("fence failed as expected: rank %u: %s\n", me.rank, PMIx_Error_string(rc));
        fflush(stdout);
        PMIx_Finalize(NULL, 0);
        return 3;
    }
    printf("fence unexpectedly returned %s\n", PMIx_Error_string(rc));
    return 1;
}
