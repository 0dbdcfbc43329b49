/* Helpers shared by the integration tests' hosts that embed the server API
 * (departure_host.c, fence_deregister_host.c). */
#ifndef PMIXPP_TESTS_HOST_COMMON_H
#define PMIXPP_TESTS_HOST_COMMON_H

#include <pmix_server.h>

#include <time.h>
#include <unistd.h>

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

#endif
