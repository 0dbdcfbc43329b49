/* A host that uses the server API the way Slurm's mpi/pmix_v4 plugin does
 * (docs/dropin.md, "Slurm"), so its contract is checked without Slurm:
 * - PMIx_server_setup_fork is called in the forked child, before exec (the
 *   child has no progress thread);
 * - the superseded client_connected upcall returns PMIX_SUCCESS and never
 *   calls the callback it is handed;
 * - fence_nb answers inline, holding a lock its release function takes
 *   again: the release function must not run inside that callback.
 * Job "sl" has 2 ranks; rank 0 runs here, rank 1 is "on another node", so the
 * client's fence of the whole job goes to fence_nb.
 * usage: slurm_like_host   (forks itself as the client) */
#include <pmix.h>
#include <pmix_server.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(cond, ...)                                 \
    do {                                                 \
        if (!(cond)) {                                   \
            fprintf(stdout, "slurm_like_host FAILED: "); \
            fprintf(stdout, __VA_ARGS__);                \
            fprintf(stdout, "\n");                       \
            fflush(stdout);                              \
            exit(1);                                     \
        }                                                \
    } while (0)

/* Atomic: the upcalls run on the progress thread, main reads after waitpid. */
static _Atomic int connected_calls, fence_calls;
static _Atomic int released, released_inside;
static pthread_mutex_t coll_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int inside_fence_completion;

static pmix_status_t client_connected(const pmix_proc_t *proc, void *server_object,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)proc, (void)server_object, (void)cbfunc, (void)cbdata;
    ++connected_calls;
    return PMIX_SUCCESS; /* as Slurm: accepted, and no callback */
}

static void release_fence_data(void *cbdata) {
    /* Slurm's release function locks the collective again. */
    if (inside_fence_completion) {
        released_inside = 1; /* with Slurm: a deadlock */
    } else {
        pthread_mutex_lock(&coll_lock);
        pthread_mutex_unlock(&coll_lock);
    }
    free(cbdata);
    released = 1;
}

static pmix_status_t fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                              void *cbdata) {
    (void)procs, (void)nprocs, (void)info, (void)ninfo;
    ++fence_calls;
    char *copy = malloc(ndata ? ndata : 1);
    if (ndata) memcpy(copy, data, ndata);
    pthread_mutex_lock(&coll_lock);
    inside_fence_completion = 1;
    cbfunc(PMIX_SUCCESS, copy, ndata, cbdata, release_fence_data, copy);
    inside_fence_completion = 0;
    pthread_mutex_unlock(&coll_lock);
    return PMIX_SUCCESS;
}

static int client_main(void) {
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "client init");
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "client fence: %s", PMIx_Error_string(rc));
    printf("slurm_like client ok\n");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "client") == 0) return client_main();
    alarm(60); /* a hang is a failure, not a stuck test */
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.client_connected = client_connected;
    module.fence_nb = fence_nb;
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");

    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "sl", 0);
    pmix_status_t rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "register client");
    pmix_info_t info;
    uint32_t size = 2;
    PMIX_INFO_LOAD(&info, PMIX_JOB_SIZE, &size, PMIX_UINT32);
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, "sl");
    rc = PMIx_server_register_nspace(ns, 1, &info, 1, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "register nspace");

    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        /* As slurmstepd: setup_fork in the child, then exec. */
        alarm(20);
        char **env = NULL;
        if (PMIx_server_setup_fork(&p, &env) != PMIX_SUCCESS) _exit(3);
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        alarm(0);
        execl("/proc/self/exe", argv[0], "client", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "client failed (%s %d)%s",
          WIFEXITED(status) ? "exit" : "signal",
          WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
          WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM
              ? ": setup_fork hung in the forked child"
              : "");
    CHECK(connected_calls == 1, "client_connected called %d times", connected_calls);
    CHECK(fence_calls == 1, "fence_nb called %d times", fence_calls);
    CHECK(!released_inside, "the fence data was released inside the host's callback");
    PMIx_server_deregister_nspace(ns, NULL, NULL);
    PMIx_server_finalize();
    CHECK(released, "the fence data was never released");
    printf("slurm_like host ok\n");
    return 0;
}
