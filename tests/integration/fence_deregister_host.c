/* A host embedding the server API: a fence that can no longer complete
 * because the host deregistered one of its participants fails at once with
 * PMIX_ERR_LOST_CONNECTION instead of waiting for its timeout.
 * - job fdA has ranks 0 and 1; only rank 0 runs and fences the whole job;
 *   the host then deregisters rank 1 (PMIx_server_deregister_client);
 * - job fdB rank 0 fences with {fdB:0, fdC:WILDCARD}; fdC's one rank never
 *   runs; the host then deregisters the namespace fdC.
 * Each client fences with PMIX_TIMEOUT 20 s and wants LOST_CONNECTION well
 * before that. usage: fence_deregister_host   (forks itself as the clients) */
#include <pmix.h>
#include <pmix_server.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(...) HOST_CHECK("fence_deregister_host", __VA_ARGS__)

/* ------------------------------------------------------------------ client */
static int client_main(void) {
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "client init");
    pmix_proc_t procs[2];
    size_t nprocs = 0;
    if (strcmp(me.nspace, "fdB") == 0) {
        PMIX_LOAD_PROCID(&procs[0], "fdB", 0);
        PMIX_LOAD_PROCID(&procs[1], "fdC", PMIX_RANK_WILDCARD);
        nprocs = 2;
    }
    pmix_info_t timeout;
    int seconds = 20;
    PMIX_INFO_LOAD(&timeout, PMIX_TIMEOUT, &seconds, PMIX_INT);
    /* Tell the host we are about to fence. */
    const char *fd = getenv("FENCE_DEREGISTER_READY_FD");
    CHECK(fd != NULL && write(atoi(fd), "x", 1) == 1, "ready pipe");
    const double start = host_now();
    pmix_status_t rc = PMIx_Fence(nprocs ? procs : NULL, nprocs, &timeout, 1);
    const double took = host_now() - start;
    CHECK(rc == PMIX_ERR_LOST_CONNECTION, "%s: fence returned %s after %.1f s", me.nspace,
          PMIx_Error_string(rc), took);
    CHECK(took < 15, "%s: the fence failed only after %.1f s", me.nspace, took);
    printf("fence_deregister client %s ok\n", me.nspace);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* -------------------------------------------------------------------- host */
static void register_job(const char *nspace, int size) {
    pmix_status_t rc = host_register_job(nspace, size);
    CHECK(rc == PMIX_SUCCESS, "register job %s: %s", nspace, PMIx_Error_string(rc));
}

static pid_t start_client(const char *self, const char *nspace, int ready_fd) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, 0);
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork %s", nspace);
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        char fd[16];
        snprintf(fd, sizeof fd, "%d", ready_fd);
        setenv("FENCE_DEREGISTER_READY_FD", fd, 1);
        execl("/proc/self/exe", self, "client", (char *)NULL);
        _exit(127);
    }
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    return pid;
}

/* Waits for the client's "about to fence" byte, then gives its fence
 * request time to reach the server. */
static void await_fence(int ready_read_fd) {
    char c;
    CHECK(read(ready_read_fd, &c, 1) == 1, "client did not reach its fence");
    usleep(500000);
}

static void deregister_nspace(const char *nspace) {
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, nspace);
    PMIx_server_deregister_nspace(ns, NULL, NULL);
}

static void reap(pid_t pid, const char *what) {
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid %s", what);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "client %s failed", what);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "client") == 0) return client_main();
    alarm(60); /* a hang is a failure, not a stuck test */
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    register_job("fdA", 2);
    register_job("fdB", 1);
    register_job("fdC", 1);
    int ready[2];
    CHECK(pipe(ready) == 0, "pipe");

    pid_t a = start_client(argv[0], "fdA", ready[1]);
    await_fence(ready[0]);
    pmix_proc_t a1;
    PMIX_LOAD_PROCID(&a1, "fdA", 1);
    PMIx_server_deregister_client(&a1, NULL, NULL);
    reap(a, "fdA:0");

    pid_t b = start_client(argv[0], "fdB", ready[1]);
    await_fence(ready[0]);
    deregister_nspace("fdC");
    reap(b, "fdB:0");

    deregister_nspace("fdA");
    deregister_nspace("fdB");
    PMIx_server_finalize();
    printf("fence_deregister host ok\n");
    return 0;
}
