/* A job (under pmixrun) that a tool outside it inspects (tool_api.c,
 * pmix_ps, python3-pmix).
 *
 *   tool_target PROGRAM [ARGS...]
 * Every rank puts "tt.rank" = 10 * rank + 7, commits and fences. Rank 0 then
 * runs PROGRAM with ARGS, "%PID%" replaced by pmixrun's pid and "%NS%" by the
 * job's namespace, a leading '@' removed (escaping them for a nested
 * tool_target), with every PMIX_* variable but PMIX_MCA_* removed (the
 * program is not part of the job), and waits (at most 60 s) for it to exit 0.
 * A final fence, then "target ok rank N" per rank. */
#include <pmix.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void fail(const char *what, pmix_status_t rc) {
    printf("target FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

static pid_t start(char **argv, int argc, const char *nspace) {
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getppid()); /* pmixrun */
    pid_t child = fork();
    if (child != 0) return child;
    for (;;) {
        char *victim = NULL;
        for (char **e = environ; *e != NULL; ++e) {
            if (strncmp(*e, "PMIX", 4) == 0 && strncmp(*e, "PMIX_MCA_", 9) != 0) {
                victim = *e;
                break;
            }
        }
        if (victim == NULL) break;
        char name[256];
        size_t n = strcspn(victim, "=");
        if (n >= sizeof name) n = sizeof name - 1;
        memcpy(name, victim, n);
        name[n] = '\0';
        unsetenv(name);
    }
    char **args = calloc((size_t)argc + 1, sizeof(char *));
    for (int i = 0; i < argc; ++i) {
        if (strcmp(argv[i], "%PID%") == 0) {
            args[i] = pid;
        } else if (strcmp(argv[i], "%NS%") == 0) {
            args[i] = (char *)nspace;
        } else if (argv[i][0] == '@') {
            args[i] = argv[i] + 1; /* one level of escaping, for a nested tool_target */
        } else {
            args[i] = argv[i];
        }
    }
    execvp(args[0], args);
    perror("exec");
    _exit(127);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: tool_target PROGRAM [ARGS...]\n");
        return 2;
    }
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_Init", rc);
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_INT;
    v.data.integer = 10 * (int)me.rank + 7;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "tt.rank", &v)) != PMIX_SUCCESS) fail("PMIx_Put", rc);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) fail("PMIx_Commit", rc);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Fence", rc);
    if (me.rank == 0) {
        pid_t child = start(argv + 1, argc - 1, me.nspace);
        int status = 0;
        pid_t w = 0;
        for (int i = 0; i < 1200 && (w = waitpid(child, &status, WNOHANG)) == 0; ++i) usleep(50000);
        if (w != child) {
            kill(child, SIGKILL);
            fail("the program did not exit", PMIX_ERR_TIMEOUT);
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("the program failed", PMIX_ERROR);
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("final fence", rc);
    printf("target ok rank %u\n", me.rank);
    PMIx_Finalize(NULL, 0);
    return 0;
}
