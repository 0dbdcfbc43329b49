/* A process a debugger starts stopped in PMIx_Init (tool_debug.c): prints
 * "debuggee released rank N" once PMIx_Init returns. */
#include <pmix.h>

#include <stdio.h>

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("debuggee FAILED: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("debuggee released rank %u\n", me.rank);
    PMIx_Finalize(NULL, 0);
    return 0;
}
