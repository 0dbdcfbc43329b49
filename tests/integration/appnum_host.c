/* PMIX_APPNUM of a job whose host registered none (docs/dropin.md,
 * "PMIX_APPNUM"): the standard lets a host omit it when the job has one
 * application, so every process is in app 0.
 *
 * usage: appnum_host one | two     (forks itself as the two ranks)
 *   one   a job registered with PMIX_JOB_SIZE only (as Open MPI's ORTE does
 *         for a single app): each rank's PMIx_Get of PMIX_APPNUM, for itself
 *         and for its peer, is 0
 *   two   the same, registered with PMIX_JOB_NUM_APPS 2: nothing tells which
 *         app a rank is in, so PMIX_ERR_NOT_FOUND
 * Prints "appnum rank R ok" per rank and "appnum host ok". */
#include <pmix.h>
#include <pmix_server.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(...) HOST_CHECK("appnum", __VA_ARGS__)

static int rank_main(const char *mode) {
    alarm(30);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Init: %s", PMIx_Error_string(rc));
    for (pmix_rank_t r = 0; r < 2; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        pmix_value_t *v = NULL;
        rc = PMIx_Get(&p, PMIX_APPNUM, NULL, 0, &v);
        if (strcmp(mode, "one") == 0) {
            CHECK(rc == PMIX_SUCCESS && v != NULL && v->type == PMIX_UINT32 && v->data.uint32 == 0,
                  "rank %u: PMIX_APPNUM of rank %u: %s (want the uint32 0)", me.rank, r,
                  PMIx_Error_string(rc));
        } else {
            CHECK(rc == PMIX_ERR_NOT_FOUND,
                  "rank %u: PMIX_APPNUM of rank %u in a job of two apps: %s", me.rank, r,
                  PMIx_Error_string(rc));
        }
        if (v != NULL) PMIX_VALUE_RELEASE(v);
    }
    printf("appnum rank %u ok\n", me.rank);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

int main(int argc, char **argv) {
    CHECK(argc >= 2 && (strcmp(argv[1], "one") == 0 || strcmp(argv[1], "two") == 0),
          "usage: appnum_host one|two");
    if (argc > 2 && strcmp(argv[2], "rank") == 0) return rank_main(argv[1]);
    alarm(60); /* a hang is a failure */
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    const char *nspace = "appnum-job";
    for (pmix_rank_t r = 0; r < 2; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, nspace, r);
        CHECK(
            host_registered(PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL)),
            "register client");
    }
    pmix_info_t info[2];
    uint32_t size = 2, napps = 2;
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_JOB_NUM_APPS, &napps, PMIX_UINT32);
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, nspace);
    pmix_status_t rc =
        PMIx_server_register_nspace(ns, 2, info, strcmp(argv[1], "two") == 0 ? 2 : 1, NULL, NULL);
    CHECK(host_registered(rc), "register nspace: %s", PMIx_Error_string(rc));
    pid_t pids[2];
    for (pmix_rank_t r = 0; r < 2; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, nspace, r);
        char **env = NULL;
        CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
        pids[r] = fork();
        if (pids[r] == 0) {
            for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
            execl("/proc/self/exe", argv[0], argv[1], "rank", (char *)NULL);
            _exit(127);
        }
        for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
        free(env);
    }
    for (int r = 0; r < 2; ++r) {
        const int st = host_reap(pids[r]);
        CHECK(st == 0, "rank %d exited with %d", r, st);
    }
    PMIx_server_finalize();
    printf("appnum host ok\n");
    return 0;
}
