/* The legitimate client of the security tests (hostile_peer.py): PMIx_Init,
 * then PMIx_Finalize. Prints "init ok RANK"; exits 1 when PMIx_Init fails. */
#include <pmix.h>

#include <stdio.h>

int main(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "init_client: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("init ok %u\n", me.rank);
    fflush(stdout);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
