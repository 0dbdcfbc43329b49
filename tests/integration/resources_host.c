/* PMIx_server_register_resources / _deregister_resources (server/resources.hpp,
 * docs/resources.md).
 * usage: resources_host host   a host embedding the server API:
 *   1. registers resources "site.gpu" = "A100" and "site.fabric" = "ib0";
 *   2. registers job "ra" (no overrides) and job "rb" whose own "site.gpu" is
 *      "H100";
 *   3. registers more resources while both jobs are registered: "site.gpu" =
 *      "B200" and "site.late" = 7 (non-blocking form);
 *   4. deregisters "site.fabric";
 *   5. registers job "rc";
 *   6. forks one client of each job, told what its job must answer.
 * What each job sees: ra: B200, ib0, 7 (registered before the removal, it
 * keeps ib0); rb: its own H100 whatever the resources say, ib0, 7; rc: B200,
 * no site.fabric, 7. The refusals are checked before and after init.
 *        resources_host client GPU FABRIC LATE   a client: PMIx_Get of the
 *   job-level keys ("-": must be NOT_FOUND). Prints "resources ok: <what>". */
#include <pmix.h>
#include <pmix_server.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(cond, ...) HOST_CHECK("resources_host", cond, __VA_ARGS__)

static pmix_proc_t me;

/* PMIx_Get of job-level `key` as a string ("-": NOT_FOUND wanted). */
static void expect_string(const char *key, const char *want) {
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&wild, key, NULL, 0, &v);
    if (strcmp(want, "-") == 0) {
        CHECK(rc == PMIX_ERR_NOT_FOUND, "%s: %s of %s: %s, wanted NOT_FOUND", me.nspace, key,
              me.nspace, PMIx_Error_string(rc));
        return;
    }
    CHECK(rc == PMIX_SUCCESS, "%s: Get %s: %s", me.nspace, key, PMIx_Error_string(rc));
    CHECK(v->type == PMIX_STRING && strcmp(v->data.string, want) == 0,
          "%s: %s is not '%s' (type %d)", me.nspace, key, want, v->type);
    PMIX_VALUE_RELEASE(v);
}

static int client_main(const char *gpu, const char *fabric, const char *late) {
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "client init");
    expect_string("site.gpu", gpu);
    expect_string("site.fabric", fabric);
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&wild, "site.late", NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_UINT32 && v->data.uint32 == (uint32_t)atoi(late),
          "%s: site.late: %s", me.nspace, PMIx_Error_string(rc));
    PMIX_VALUE_RELEASE(v);
    /* The job's own registration is still there beside the resources. */
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v->data.uint32 == 1, "%s: job size: %s", me.nspace,
          PMIx_Error_string(rc));
    PMIX_VALUE_RELEASE(v);
    printf("resources ok: %s sees %s %s %s\n", me.nspace, gpu, fabric, late);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

static _Atomic int op_done = 0;
static _Atomic pmix_status_t op_status = PMIX_ERR_TIMEOUT;

static void on_op(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    op_status = status;
    op_done = 1;
}

/* Registers job `nspace` of one local rank with PMIX_JOB_SIZE and, when
 * `gpu` is given, its own "site.gpu". */
static void register_job(const char *nspace, const char *gpu) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, 0);
    CHECK(host_registered(PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL)),
          "register client of %s", nspace);
    pmix_info_t info[2];
    uint32_t one = 1;
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &one, PMIX_UINT32);
    size_t n = 1;
    if (gpu != NULL) PMIX_INFO_LOAD(&info[n++], "site.gpu", gpu, PMIX_STRING);
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, nspace);
    CHECK(host_registered(PMIx_server_register_nspace(ns, 1, info, n, NULL, NULL)),
          "register nspace %s", nspace);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
}

static pid_t launch(const char *self, const char *nspace, const char *gpu, const char *fabric,
                    const char *late) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, 0);
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork %s", nspace);
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        execl("/proc/self/exe", self, "client", gpu, fabric, late, (char *)NULL);
        _exit(127);
    }
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    CHECK(pid > 0, "fork");
    return pid;
}

static int host_main(const char *self) {
    pmix_info_t res[2];
    PMIX_INFO_LOAD(&res[0], "site.gpu", "A100", PMIX_STRING);
    PMIX_INFO_LOAD(&res[1], "site.fabric", "ib0", PMIX_STRING);
    CHECK(PMIx_server_register_resources(res, 2, NULL, NULL) == PMIX_ERR_INIT, "before init");

    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    CHECK(PMIx_server_register_resources(NULL, 2, NULL, NULL) == PMIX_ERR_BAD_PARAM,
          "NULL info with a count");
    pmix_info_t nokey;
    PMIX_INFO_CONSTRUCT(&nokey);
    CHECK(PMIx_server_register_resources(&nokey, 1, NULL, NULL) == PMIX_ERR_BAD_PARAM,
          "an entry without a key");
    CHECK(host_registered(PMIx_server_register_resources(res, 2, NULL, NULL)), "register");
    printf("resources ok: the refusals\n");

    register_job("ra", NULL);
    register_job("rb", "H100");
    /* The host itself, a server process, reads what its store holds. */
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, "ra", PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    CHECK(PMIx_Get(&wild, "site.gpu", NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_STRING &&
              strcmp(v->data.string, "A100") == 0,
          "the host's Get of ra's site.gpu");
    PMIX_VALUE_RELEASE(v);

    pmix_info_t more[2];
    uint32_t seven = 7;
    PMIX_INFO_LOAD(&more[0], "site.gpu", "B200", PMIX_STRING);
    PMIX_INFO_LOAD(&more[1], "site.late", &seven, PMIX_UINT32);
    CHECK(PMIx_server_register_resources(more, 2, on_op, NULL) == PMIX_SUCCESS, "register more");
    while (!op_done) usleep(1000); /* bounded by alarm() */
    CHECK(op_status == PMIX_SUCCESS, "register more: %s", PMIx_Error_string(op_status));

    pmix_info_t gone;
    PMIX_INFO_LOAD(&gone, "site.fabric", NULL, PMIX_UNDEF);
    CHECK(host_registered(PMIx_server_deregister_resources(&gone, 1, NULL, NULL)), "deregister");
    CHECK(PMIx_server_deregister_resources(&gone, 1, NULL, NULL) == PMIX_ERR_NOT_FOUND,
          "deregister twice");
    CHECK(PMIx_server_deregister_resources(NULL, 0, NULL, NULL) == PMIX_ERR_BAD_PARAM,
          "deregister nothing");
    register_job("rc", NULL);

    pid_t pids[3];
    pids[0] = launch(self, "ra", "B200", "ib0", "7");
    pids[1] = launch(self, "rb", "H100", "ib0", "7");
    pids[2] = launch(self, "rc", "B200", "-", "7");
    for (int i = 0; i < 3; ++i) CHECK(host_reap(pids[i]) == 0, "client %d failed", i);

    for (int i = 0; i < 2; ++i) {
        PMIX_INFO_DESTRUCT(&res[i]);
        PMIX_INFO_DESTRUCT(&more[i]);
    }
    PMIX_INFO_DESTRUCT(&gone);
    PMIx_server_finalize();
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    alarm(90); /* a hang is a failure, not a stuck test */
    if (argc > 4 && strcmp(argv[1], "client") == 0) return client_main(argv[2], argv[3], argv[4]);
    CHECK(argc > 1 && strcmp(argv[1], "host") == 0, "usage: resources_host host");
    return host_main(argv[0]);
}
