/* A rank that initializes, says "ready PID" and then waits to be ended
 * (pmixrun_signal.py). usage: idle_client [stubborn]; stubborn ignores
 * SIGTERM, so only SIGKILL ends it. */
#include <pmix.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "stubborn") == 0) signal(SIGTERM, SIG_IGN);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "idle_client: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    for (;;) pause();
}
