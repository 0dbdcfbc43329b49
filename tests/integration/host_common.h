/* Helpers shared by the integration tests' hosts that embed the server API
 * (departure_host.c, departure_services_host.c, fence_deregister_host.c). */
#ifndef PMIXPP_TESTS_HOST_COMMON_H
#define PMIXPP_TESTS_HOST_COMMON_H

#include <pmix_server.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Prints "<program> FAILED: <message>" on stdout and exits 1 unless `cond`. */
#define HOST_CHECK(program, cond, ...)                 \
    do {                                               \
        if (!(cond)) {                                 \
            fprintf(stdout, "%s FAILED: ", (program)); \
            fprintf(stdout, __VA_ARGS__);              \
            fprintf(stdout, "\n");                     \
            fflush(stdout);                            \
            exit(1);                                   \
        }                                              \
    } while (0)

static inline double host_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline int host_registered(pmix_status_t rc) {
    return rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED;
}

/* Registers ranks 0..size-1 of `nspace` (this process's uid/gid) and the
 * nspace with PMIX_JOB_SIZE = size, all local. PMIX_SUCCESS or the first error. */
static inline pmix_status_t host_register_job(const char *nspace, int size) {
    for (int r = 0; r < size; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, nspace, (pmix_rank_t)r);
        pmix_status_t rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
        if (!host_registered(rc)) return rc;
    }
    pmix_info_t info;
    uint32_t n = (uint32_t)size;
    PMIX_INFO_LOAD(&info, PMIX_JOB_SIZE, &n, PMIX_UINT32);
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, nspace);
    pmix_status_t rc = PMIx_server_register_nspace(ns, size, &info, 1, NULL, NULL);
    return host_registered(rc) ? PMIX_SUCCESS : rc;
}

/* Waits for child `pid`: its exit status, 128 + the signal that ended it,
 * or -1 when it cannot be waited for. */
static inline int host_reap(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#endif
