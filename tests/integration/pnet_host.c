/* A host embedding the server: pnet_tcp's ports and keys through
 * setup_application -> setup_local_support -> setup_fork, and back at
 * deregistration. The pool is 6 ports (PMIX_MCA_pnet_tcp_ports, set below);
 * each job asks for 2 ports per process.
 *   job A (2 procs): disjoint ports in the pool, one key for both;
 *   job B (2 procs): rank 0 gets the last 2 ports and another key, rank 1
 *     finds the pool exhausted (OUT_OF_RESOURCE); after job A is
 *     deregistered, rank 1 gets ports A had;
 *   a PMIX_ALLOC_FABRIC without an id: BAD_PARAM. */
#include <pmix_server.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond, ...)                    \
    do {                                    \
        if (!(cond)) {                      \
            fprintf(stderr, "pnet_host: "); \
            fprintf(stderr, __VA_ARGS__);   \
            fprintf(stderr, "\n");          \
            exit(1);                        \
        }                                   \
    } while (0)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int done;
static pmix_status_t app_status;
static pmix_info_t *answer;
static size_t nanswer;
static pmix_op_cbfunc_t answer_release;
static void *answer_release_data;

static void on_app(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *cbdata,
                   pmix_op_cbfunc_t release, void *release_data) {
    (void)cbdata;
    pthread_mutex_lock(&lock);
    app_status = status;
    answer = info;
    nanswer = ninfo;
    answer_release = release;
    answer_release_data = release_data;
    done = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void on_deregistered(pmix_status_t status, void *cbdata) {
    (void)status;
    (void)cbdata;
    pthread_mutex_lock(&lock);
    done = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void register_job(const char *name, int nprocs) {
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, name);
    for (int r = 0; r < nprocs; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, ns, (pmix_rank_t)r);
        pmix_status_t rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
        CHECK(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "register_client: %s",
              PMIx_Error_string(rc));
    }
    uint32_t n = (uint32_t)nprocs;
    pmix_info_t size;
    PMIX_INFO_LOAD(&size, PMIX_JOB_SIZE, &n, PMIX_UINT32);
    pmix_status_t rc = PMIx_server_register_nspace(ns, nprocs, &size, 1, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "register_nspace: %s",
          PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&size);
}

/* setup_application with a PMIX_ALLOC_FABRIC request (id NULL: left out), then
 * setup_local_support with its answer. Returns setup_application's status. */
static pmix_status_t set_up(const char *name, const char *id, uint32_t endpts) {
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, name);
    pmix_info_t req[3];
    size_t n = 0;
    if (id != NULL) PMIX_INFO_LOAD(&req[n++], PMIX_ALLOC_FABRIC_ID, id, PMIX_STRING);
    PMIX_INFO_LOAD(&req[n++], PMIX_ALLOC_FABRIC_TYPE, "tcp", PMIX_STRING);
    PMIX_INFO_LOAD(&req[n++], PMIX_ALLOC_FABRIC_ENDPTS, &endpts, PMIX_UINT32);
    pmix_data_array_t arr = {PMIX_INFO, n, req};
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_ALLOC_FABRIC, &arr, PMIX_DATA_ARRAY);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&req[i]);
    done = 0;
    pmix_status_t rc = PMIx_server_setup_application(ns, &info, 1, on_app, NULL);
    PMIX_INFO_DESTRUCT(&info);
    CHECK(rc == PMIX_SUCCESS, "setup_application returned %s", PMIx_Error_string(rc));
    pthread_mutex_lock(&lock);
    while (!done) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    if (app_status != PMIX_SUCCESS) return app_status;
    rc = PMIx_server_setup_local_support(ns, answer, nanswer, NULL, NULL);
    CHECK(rc == PMIX_OPERATION_SUCCEEDED, "setup_local_support: %s", PMIx_Error_string(rc));
    if (answer_release != NULL) answer_release(PMIX_SUCCESS, answer_release_data);
    return PMIX_SUCCESS;
}

struct endpoint {
    int port, range;
    char key[128];
};

static pmix_status_t fork_one(const char *name, int rank, struct endpoint *out) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, name, (pmix_rank_t)rank);
    char **env = calloc(1, sizeof(char *));
    pmix_status_t rc = PMIx_server_setup_fork(&p, &env);
    memset(out, 0, sizeof *out);
    for (char **e = env; *e != NULL; ++e) {
        if (strncmp(*e, "OMPI_MCA_btl_tcp_port_min_v4=", 29) == 0) out->port = atoi(*e + 29);
        if (strncmp(*e, "OMPI_MCA_btl_tcp_port_range_v4=", 31) == 0) out->range = atoi(*e + 31);
        if (strncmp(*e, "PMIX_FABRIC_SEC_KEY=", 20) == 0)
            snprintf(out->key, sizeof out->key, "%s", *e + 20);
        free(*e);
    }
    free(env);
    return rc;
}

static void expect_endpoint(const struct endpoint *e, const char *what) {
    CHECK(e->port >= 40000 && e->port + e->range - 1 <= 40005 && e->range == 2,
          "%s: ports %d+%d outside 40000-40005 or not 2", what, e->port, e->range);
    CHECK(strlen(e->key) >= 32, "%s: key '%s' too short", what, e->key);
}

int main(void) {
    setenv("PMIX_MCA_pnet_tcp_ports", "40000-40005", 1);
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    pmix_status_t rc = PMIx_server_init(&module, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "server_init: %s", PMIx_Error_string(rc));
    register_job("pnet-a", 2);
    register_job("pnet-b", 2);

    rc = set_up("pnet-a", NULL, 2);
    CHECK(rc == PMIX_ERR_BAD_PARAM, "no PMIX_ALLOC_FABRIC_ID: %s", PMIx_Error_string(rc));

    struct endpoint a0, a1, b0, b1;
    CHECK(set_up("pnet-a", "fabric-a", 2) == PMIX_SUCCESS, "job A set-up failed");
    CHECK(fork_one("pnet-a", 0, &a0) == PMIX_SUCCESS, "fork A0");
    CHECK(fork_one("pnet-a", 1, &a1) == PMIX_SUCCESS, "fork A1");
    expect_endpoint(&a0, "A0");
    expect_endpoint(&a1, "A1");
    CHECK(a0.port + 2 <= a1.port || a1.port + 2 <= a0.port, "A0 %d and A1 %d overlap", a0.port,
          a1.port);
    CHECK(strcmp(a0.key, a1.key) == 0, "job A has two keys");

    CHECK(set_up("pnet-b", "fabric-b", 2) == PMIX_SUCCESS, "job B set-up failed");
    CHECK(fork_one("pnet-b", 0, &b0) == PMIX_SUCCESS, "fork B0");
    expect_endpoint(&b0, "B0");
    CHECK(b0.port + 2 <= a0.port || a0.port + 2 <= b0.port, "B0 overlaps A0");
    CHECK(b0.port + 2 <= a1.port || a1.port + 2 <= b0.port, "B0 overlaps A1");
    CHECK(strcmp(a0.key, b0.key) != 0, "jobs A and B share a key");
    rc = fork_one("pnet-b", 1, &b1);
    CHECK(rc == PMIX_ERR_OUT_OF_RESOURCE, "B1 with the pool exhausted: %s", PMIx_Error_string(rc));

    pmix_nspace_t a;
    PMIX_LOAD_NSPACE(a, "pnet-a");
    done = 0;
    PMIx_server_deregister_nspace(a, on_deregistered, NULL);
    pthread_mutex_lock(&lock);
    while (!done) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    rc = fork_one("pnet-b", 1, &b1);
    CHECK(rc == PMIX_SUCCESS, "B1 after job A left: %s", PMIx_Error_string(rc));
    expect_endpoint(&b1, "B1");
    CHECK(b1.port == a0.port || b1.port == a1.port, "B1 got %d, not one of A's", b1.port);
    CHECK(strcmp(b1.key, b0.key) == 0, "job B has two keys");

    PMIx_server_finalize();
    printf("pnet ok: A %d,%d B %d,%d\n", a0.port, a1.port, b0.port, b1.port);
    return 0;
}
