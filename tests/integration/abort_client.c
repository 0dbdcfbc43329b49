/* Rank 1 aborts with status 7; the others wait in a fence (pmixrun kills them).
 * usage: abort_client */
#include <pmix.h>

#include <stdio.h>

int main(void) {
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    if (me.rank == 1) {
        PMIx_Abort(7, "abort_client: rank 1 gives up", NULL, 0);
        return 99; /* only if the host did not kill us */
    }
    pmix_info_t t;
    int timeout = 60;
    PMIX_INFO_LOAD(&t, PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIx_Fence(NULL, 0, &t, 1);
    PMIx_Finalize(NULL, 0);
    return 0;
}
