/* PMIx_Allocation_request(_nb) through the server to the host's allocate
 * upcall (framework/server/allocation.cpp). A host embedding the server API;
 * it forks itself as the client (nspace "al", rank 0).
 * usage: alloc_host none|upcall
 *  none:   the host has no allocate upcall: PMIX_ERR_NOT_SUPPORTED.
 *  upcall: the upcall gets the client as requestor, the directive and the
 *          info plus PMIX_USERID/PMIX_GRPID; NEW: answered through the
 *          callback with results (blocking and non-blocking forms); EXTEND:
 *          refused by the upcall's return (no callback); RELEASE: refused
 *          through the callback with a reason that reaches the client.
 *  Both: a directive outside the standard's and the host's ranges is
 *  PMIX_ERR_BAD_PARAM at the client. Prints "alloc client ok: <what>". */
#include <pmix.h>
#include <pmix_server.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(cond, ...)                            \
    do {                                            \
        if (!(cond)) {                              \
            fprintf(stdout, "alloc_host FAILED: "); \
            fprintf(stdout, __VA_ARGS__);           \
            fprintf(stdout, "\n");                  \
            fflush(stdout);                         \
            exit(1);                                \
        }                                           \
    } while (0)

/* ------------------------------------------------------------------ client */
static const char *text_of(const pmix_info_t *info, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i) {
        if (PMIX_CHECK_KEY(&info[i], key) && info[i].value.type == PMIX_STRING)
            return info[i].value.data.string;
    }
    return "";
}

static _Atomic int nb_fired = 0;
static pmix_status_t nb_status;
static char nb_id[64];

static void on_alloc(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)cbdata;
    nb_status = status;
    snprintf(nb_id, sizeof nb_id, "%s", text_of(info, ninfo, PMIX_ALLOC_ID));
    if (release_fn != NULL) release_fn(release_cbdata);
    atomic_store(&nb_fired, 1);
}

static int client_main(const char *mode) {
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "client init");
    pmix_info_t info;
    uint64_t nodes = 4;
    PMIX_INFO_LOAD(&info, PMIX_ALLOC_NUM_NODES, &nodes, PMIX_UINT64);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Allocation_request(0, &info, 1, &results, &nresults);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "directive 0: %s", PMIx_Error_string(rc));
    rc = PMIx_Allocation_request_nb(77, &info, 1, on_alloc, NULL);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "directive 77: %s", PMIx_Error_string(rc));
    printf("alloc client ok: bad directive\n");
    if (strcmp(mode, "none") == 0) {
        rc = PMIx_Allocation_request(PMIX_ALLOC_NEW, &info, 1, &results, &nresults);
        CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "no upcall: %s", PMIx_Error_string(rc));
        printf("alloc client ok: no upcall\n");
    } else {
        rc = PMIx_Allocation_request(PMIX_ALLOC_NEW, &info, 1, &results, &nresults);
        CHECK(rc == PMIX_SUCCESS, "new: %s", PMIx_Error_string(rc));
        CHECK(strcmp(text_of(results, nresults, PMIX_ALLOC_ID), "alloc-4") == 0, "new: id '%s'",
              text_of(results, nresults, PMIX_ALLOC_ID));
        CHECK(strcmp(text_of(results, nresults, PMIX_EVENT_TEXT_MESSAGE),
                     "requestor, directive, uid and gid as expected") == 0,
              "new: the host saw '%s'", text_of(results, nresults, PMIX_EVENT_TEXT_MESSAGE));
        PMIX_INFO_FREE(results, nresults);
        printf("alloc client ok: new\n");

        rc = PMIx_Allocation_request_nb(PMIX_ALLOC_NEW, &info, 1, on_alloc, NULL);
        CHECK(rc == PMIX_SUCCESS, "new nb: %s", PMIx_Error_string(rc));
        for (int i = 0; i < 30000 && !atomic_load(&nb_fired); ++i) usleep(1000);
        CHECK(nb_fired && nb_status == PMIX_SUCCESS && strcmp(nb_id, "alloc-4") == 0,
              "new nb: fired %d %s id '%s'", nb_fired, PMIx_Error_string(nb_status), nb_id);
        printf("alloc client ok: new nb\n");

        rc = PMIx_Allocation_request(PMIX_ALLOC_EXTEND, &info, 1, &results, &nresults);
        CHECK(rc == PMIX_ERR_JOB_ALLOC_FAILED && nresults == 0, "extend: %s",
              PMIx_Error_string(rc));
        printf("alloc client ok: refused by the upcall's return\n");

        rc = PMIx_Allocation_request(PMIX_ALLOC_RELEASE, &info, 1, &results, &nresults);
        CHECK(rc == PMIX_ERR_JOB_ALLOC_FAILED &&
                  strcmp(text_of(results, nresults, PMIX_EVENT_TEXT_MESSAGE),
                         "nothing to release") == 0,
              "release: %s '%s'", PMIx_Error_string(rc),
              text_of(results, nresults, PMIX_EVENT_TEXT_MESSAGE));
        PMIX_INFO_FREE(results, nresults);
        printf("alloc client ok: refused with a reason\n");
    }
    PMIX_INFO_DESTRUCT(&info);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* -------------------------------------------------------------------- host */
struct answer {
    pmix_info_t info[2];
    size_t n;
};

static void release_answer(void *cbdata) {
    struct answer *a = cbdata;
    for (size_t i = 0; i < a->n; ++i) PMIX_INFO_DESTRUCT(&a->info[i]);
    free(a);
}

static pmix_status_t on_allocate(const pmix_proc_t *client, pmix_alloc_directive_t directive,
                                 const pmix_info_t data[], size_t ndata, pmix_info_cbfunc_t cbfunc,
                                 void *cbdata) {
    if (directive == PMIX_ALLOC_EXTEND) return PMIX_ERR_JOB_ALLOC_FAILED;
    struct answer *a = calloc(1, sizeof *a);
    if (directive == PMIX_ALLOC_RELEASE) {
        PMIX_INFO_LOAD(&a->info[0], PMIX_EVENT_TEXT_MESSAGE, "nothing to release", PMIX_STRING);
        a->n = 1;
        cbfunc(PMIX_ERR_JOB_ALLOC_FAILED, a->info, a->n, cbdata, release_answer, a);
        return PMIX_SUCCESS;
    }
    uint64_t nodes = 0;
    int uid_ok = 0, gid_ok = 0;
    for (size_t i = 0; i < ndata; ++i) {
        if (PMIX_CHECK_KEY(&data[i], PMIX_ALLOC_NUM_NODES) && data[i].value.type == PMIX_UINT64)
            nodes = data[i].value.data.uint64;
        if (PMIX_CHECK_KEY(&data[i], PMIX_USERID) && data[i].value.type == PMIX_UINT32)
            uid_ok = data[i].value.data.uint32 == (uint32_t)getuid();
        if (PMIX_CHECK_KEY(&data[i], PMIX_GRPID) && data[i].value.type == PMIX_UINT32)
            gid_ok = data[i].value.data.uint32 == (uint32_t)getgid();
    }
    const int who_ok = client != NULL && strcmp(client->nspace, "al") == 0 && client->rank == 0;
    char id[32];
    snprintf(id, sizeof id, "alloc-%llu", (unsigned long long)nodes);
    PMIX_INFO_LOAD(&a->info[0], PMIX_ALLOC_ID, id, PMIX_STRING);
    PMIX_INFO_LOAD(&a->info[1], PMIX_EVENT_TEXT_MESSAGE,
                   who_ok && directive == PMIX_ALLOC_NEW && uid_ok && gid_ok
                       ? "requestor, directive, uid and gid as expected"
                       : "unexpected requestor, directive, uid or gid",
                   PMIX_STRING);
    a->n = 2;
    cbfunc(PMIX_SUCCESS, a->info, a->n, cbdata, release_answer, a);
    return PMIX_SUCCESS;
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "client") == 0) return client_main(argv[2]);
    CHECK(argc == 2 && (strcmp(argv[1], "none") == 0 || strcmp(argv[1], "upcall") == 0),
          "usage: alloc_host none|upcall");
    alarm(60); /* a hang is a failure, not a stuck test */
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    if (strcmp(argv[1], "upcall") == 0) module.allocate = on_allocate;
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    CHECK(host_register_job("al", 1) == PMIX_SUCCESS, "register job");
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "al", 0);
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        execl("/proc/self/exe", argv[0], "client", argv[1], (char *)NULL);
        _exit(127);
    }
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the client failed");
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, "al");
    PMIx_server_deregister_nspace(ns, NULL, NULL);
    PMIx_server_finalize();
    printf("alloc host ok\n");
    return 0;
}
