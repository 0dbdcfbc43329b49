/* A launch that fails part-way (issue 19, deliverable 4; README.md here).
 * usage: partial_launch_client GOOD BAD
 * Rank 0 spawns a job of two apps: 2 processes of GOOD (a client that fences
 * its whole job with data, like hello), then 1 of BAD (a file marked
 * executable that is no program: pmixrun accepts it, its exec fails with
 * ENOEXEC). The first app's processes start; the third cannot. PMIx_Spawn
 * must fail, and pmixrun must kill the two started processes (they would
 * wait in their fence for ever, and pmixrun, which waits for every process it
 * started, would never end) without taking them for a failure of this job.
 * Prints "partial launch refused: <status>". alarm() bounds the wait. */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    alarm(60);
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    int rc = 0;
    if (me.rank == 0) {
        pmix_app_t apps[2];
        PMIX_APP_CONSTRUCT(&apps[0]);
        PMIX_APP_CONSTRUCT(&apps[1]);
        apps[0].cmd = strdup(argv[1]);
        apps[0].maxprocs = 2;
        apps[1].cmd = strdup(argv[2]);
        apps[1].maxprocs = 1;
        char ns[PMIX_MAX_NSLEN + 1] = {0};
        pmix_status_t st = PMIx_Spawn(NULL, 0, apps, 2, ns);
        PMIX_APP_DESTRUCT(&apps[0]);
        PMIX_APP_DESTRUCT(&apps[1]);
        if (st == PMIX_SUCCESS) {
            fprintf(stderr, "partial_launch_client: the spawn of %s succeeded\n", ns);
            rc = 1;
        } else {
            printf("partial launch refused: %s\n", PMIx_Error_string(st));
        }
    }
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return rc;
}
