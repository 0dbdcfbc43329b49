/* A host embedding the server: pnet_tcp's ports and keys through
 * setup_application -> setup_local_support -> setup_fork, and back at
 * deregistration. The pool is 6 ports (PMIX_MCA_pnet_tcp_ports, set below);
 * each job asks for 2 ports per process.
 *   job A (2 procs): disjoint ports in the pool, one key for both;
 *   job B (2 procs): rank 0 gets the last 2 ports and another key, rank 1
 *     finds the pool exhausted (OUT_OF_RESOURCE); after job A is
 *     deregistered, rank 1 gets ports A had;
 *   a PMIX_ALLOC_FABRIC without an id: BAD_PARAM; one asking
 *     PMIX_ALLOC_FABRIC_ENDPTS_NODE: NOT_SUPPORTED (not built).
 * Then jobs set up with their node and proc maps (this machine as the one
 * node), whose ports are reserved for every rank at setup_application:
 *   job C (2 procs) and job D (1 proc): disjoint ports, two keys; every
 *     rank's PMIX_FABRIC_ENDPT (read here, through the server's datastore)
 *     is the ports its setup_fork gives it, PMIX_ALLOC_FABRIC_SEC_KEY the key;
 *   job E (1 proc): the pool is exhausted, setup_application answers
 *     OUT_OF_RESOURCE; after C is deregistered, E gets C's ports;
 *   a plane no interface is on: NOT_FOUND; a plane this machine has (an IPv4
 *     network of one of its interfaces): the child is told that interface. */
#include <pmix.h>
#include <pmix_server.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

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

/* setup_application with a PMIX_ALLOC_FABRIC request (id NULL: left out;
 * plane NULL: none), with the job's node and proc maps when `procs` is not
 * NULL, then setup_local_support with its answer. Returns
 * setup_application's status. */
static uint32_t endpts_node = 0; /* > 0: the request asks PMIX_ALLOC_FABRIC_ENDPTS_NODE */

static pmix_status_t set_up_with(const char *name, const char *id, uint32_t endpts,
                                 const char *node, const char *procs, const char *plane) {
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, name);
    pmix_info_t req[5];
    size_t n = 0;
    if (endpts_node > 0)
        PMIX_INFO_LOAD(&req[n++], PMIX_ALLOC_FABRIC_ENDPTS_NODE, &endpts_node, PMIX_UINT32);
    if (id != NULL) PMIX_INFO_LOAD(&req[n++], PMIX_ALLOC_FABRIC_ID, id, PMIX_STRING);
    PMIX_INFO_LOAD(&req[n++], PMIX_ALLOC_FABRIC_TYPE, "tcp", PMIX_STRING);
    PMIX_INFO_LOAD(&req[n++], PMIX_ALLOC_FABRIC_ENDPTS, &endpts, PMIX_UINT32);
    if (plane != NULL) PMIX_INFO_LOAD(&req[n++], PMIX_ALLOC_FABRIC_PLANE, plane, PMIX_STRING);
    pmix_data_array_t arr = {PMIX_INFO, n, req};
    pmix_info_t info[3];
    size_t ninfo = 0;
    PMIX_INFO_LOAD(&info[ninfo++], PMIX_ALLOC_FABRIC, &arr, PMIX_DATA_ARRAY);
    if (procs != NULL) {
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_NODE_MAP, node, PMIX_STRING);
        PMIX_INFO_LOAD(&info[ninfo++], PMIX_PROC_MAP, procs, PMIX_STRING);
    }
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&req[i]);
    done = 0;
    pmix_status_t rc = PMIx_server_setup_application(ns, info, ninfo, on_app, NULL);
    for (size_t i = 0; i < ninfo; ++i) PMIX_INFO_DESTRUCT(&info[i]);
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

static pmix_status_t set_up(const char *name, const char *id, uint32_t endpts) {
    return set_up_with(name, id, endpts, NULL, NULL, NULL);
}

struct endpoint {
    int port, range;
    char key[128];
    char ifname[IF_NAMESIZE + 1];
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
        if (strncmp(*e, "OMPI_MCA_btl_tcp_if_include=", 28) == 0)
            snprintf(out->ifname, sizeof out->ifname, "%s", *e + 28);
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

static void deregister(const char *name) {
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, name);
    done = 0;
    PMIx_server_deregister_nspace(ns, on_deregistered, NULL);
    pthread_mutex_lock(&lock);
    while (!done) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

/* The IPv4 network ("192.0.2.0/24") of interface `ifname` (NULL: the first
 * interface that is up, not loopback and has one; its name in `found`). */
static int ipv4_network(const char *ifname, char *out, size_t len, char *found) {
    struct ifaddrs *list = NULL, *a;
    int ok = 0;
    if (getifaddrs(&list) != 0) return 0;
    for (a = list; a != NULL && !ok; a = a->ifa_next) {
        if (a->ifa_addr == NULL || a->ifa_netmask == NULL || a->ifa_addr->sa_family != AF_INET)
            continue;
        if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
        if (ifname != NULL && strcmp(a->ifa_name, ifname) != 0) continue;
        struct in_addr net = ((struct sockaddr_in *)a->ifa_addr)->sin_addr;
        uint32_t mask = ntohl(((struct sockaddr_in *)a->ifa_netmask)->sin_addr.s_addr);
        int prefix = 0;
        while (prefix < 32 && (mask & (0x80000000u >> prefix)) != 0) ++prefix;
        net.s_addr &= htonl(mask);
        char text[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &net, text, sizeof text);
        snprintf(out, len, "%s/%d", text, prefix);
        if (found != NULL) snprintf(found, IF_NAMESIZE + 1, "%s", a->ifa_name);
        ok = 1;
    }
    freeifaddrs(list);
    return ok;
}

/* PMIX_FABRIC_ENDPT of `rank` (read through the server's datastore): 2
 * endpoints whose texts end in ":<port>" and ":<port+1>". */
static void expect_fabric_endpt(const char *name, int rank, int port) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, name, (pmix_rank_t)rank);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&p, PMIX_FABRIC_ENDPT, NULL, 0, &val);
    CHECK(rc == PMIX_SUCCESS, "Get PMIX_FABRIC_ENDPT of %s.%d: %s", name, rank,
          PMIx_Error_string(rc));
    CHECK(val->type == PMIX_DATA_ARRAY && val->data.darray->type == PMIX_ENDPOINT &&
              val->data.darray->size == 2,
          "%s.%d: PMIX_FABRIC_ENDPT is not 2 pmix_endpoint_t", name, rank);
    const pmix_endpoint_t *e = val->data.darray->array;
    for (int k = 0; k < 2; ++k) {
        char text[128] = "";
        memcpy(text, e[k].endpt.bytes, e[k].endpt.size < 127 ? e[k].endpt.size : 127);
        const char *colon = strrchr(text, ':');
        CHECK(colon != NULL && atoi(colon + 1) == port + k, "%s.%d: endpoint %d is '%s', not %d",
              name, rank, k, text, port + k);
    }
    PMIX_VALUE_RELEASE(val);
}

static void expect_key(const char *name, const char *key) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, name, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(&p, PMIX_ALLOC_FABRIC_SEC_KEY, NULL, 0, &val);
    CHECK(rc == PMIX_SUCCESS, "Get PMIX_ALLOC_FABRIC_SEC_KEY of %s: %s", name,
          PMIx_Error_string(rc));
    CHECK(val->type == PMIX_BYTE_OBJECT && val->data.bo.size == strlen(key) &&
              memcmp(val->data.bo.bytes, key, strlen(key)) == 0,
          "%s: PMIX_ALLOC_FABRIC_SEC_KEY is not its children's key", name);
    PMIX_VALUE_RELEASE(val);
}

/* The jobs planned with their maps (see the top of the file). */
static void planned_jobs(void) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    register_job("pnet-c", 2);
    register_job("pnet-d", 1);
    register_job("pnet-e", 1);
    register_job("pnet-f", 1);
    CHECK(set_up_with("pnet-c", "fabric-c", 2, host, "0,1", NULL) == PMIX_SUCCESS, "job C");
    CHECK(set_up_with("pnet-d", "fabric-d", 2, host, "0", NULL) == PMIX_SUCCESS, "job D");
    struct endpoint c0, c1, d0, e0, f0;
    CHECK(fork_one("pnet-c", 0, &c0) == PMIX_SUCCESS, "fork C0");
    CHECK(fork_one("pnet-c", 1, &c1) == PMIX_SUCCESS, "fork C1");
    CHECK(fork_one("pnet-d", 0, &d0) == PMIX_SUCCESS, "fork D0");
    expect_endpoint(&c0, "C0");
    expect_endpoint(&c1, "C1");
    expect_endpoint(&d0, "D0");
    CHECK(c0.port + 2 <= c1.port || c1.port + 2 <= c0.port, "C0 %d and C1 %d overlap", c0.port,
          c1.port);
    CHECK(d0.port + 2 <= c0.port || c0.port + 2 <= d0.port, "D0 %d and C0 %d overlap", d0.port,
          c0.port);
    CHECK(d0.port + 2 <= c1.port || c1.port + 2 <= d0.port, "D0 %d and C1 %d overlap", d0.port,
          c1.port);
    CHECK(strcmp(c0.key, c1.key) == 0 && strcmp(c0.key, d0.key) != 0, "keys of C and D");
    expect_fabric_endpt("pnet-c", 0, c0.port);
    expect_fabric_endpt("pnet-c", 1, c1.port);
    expect_fabric_endpt("pnet-d", 0, d0.port);
    expect_key("pnet-c", c0.key);
    expect_key("pnet-d", d0.key);

    pmix_status_t rc = set_up_with("pnet-e", "fabric-e", 2, host, "0", NULL);
    CHECK(rc == PMIX_ERR_OUT_OF_RESOURCE, "job E with the pool exhausted: %s",
          PMIx_Error_string(rc));
    deregister("pnet-c");
    CHECK(set_up_with("pnet-e", "fabric-e", 2, host, "0", NULL) == PMIX_SUCCESS, "job E after C");
    CHECK(fork_one("pnet-e", 0, &e0) == PMIX_SUCCESS, "fork E0");
    CHECK(e0.port == c0.port || e0.port == c1.port, "E0 got %d, not one of C's", e0.port);
    expect_fabric_endpt("pnet-e", 0, e0.port);

    rc = set_up_with("pnet-f", "fabric-f", 2, host, "0", "203.0.113.0/24");
    CHECK(rc == PMIX_ERR_NOT_FOUND, "a plane this machine is not on: %s", PMIx_Error_string(rc));
    char plane[64], ifname[IF_NAMESIZE + 1] = "";
    deregister("pnet-d");
    if (ipv4_network(NULL, plane, sizeof plane, ifname)) {
        rc = set_up_with("pnet-f", "fabric-f", 2, host, "0", plane);
        CHECK(rc == PMIX_SUCCESS, "plane %s of %s: %s", plane, ifname, PMIx_Error_string(rc));
        CHECK(fork_one("pnet-f", 0, &f0) == PMIX_SUCCESS, "fork F0");
        char theirs[64] = "";
        CHECK(f0.ifname[0] != '\0' && ipv4_network(f0.ifname, theirs, sizeof theirs, NULL) &&
                  strcmp(theirs, plane) == 0,
              "plane %s: the child was told interface '%s' (on %s)", plane, f0.ifname, theirs);
        printf("pnet planned: plane %s is %s\n", plane, f0.ifname);
    }
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
    /* Per-node endpoints are not built: refused, never ignored. */
    endpts_node = 1;
    rc = set_up("pnet-a", "fabric-a", 2);
    CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "PMIX_ALLOC_FABRIC_ENDPTS_NODE: %s", PMIx_Error_string(rc));
    endpts_node = 0;

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
    deregister("pnet-b");

    planned_jobs();

    PMIx_server_finalize();
    printf("pnet ok: A %d,%d B %d,%d\n", a0.port, a1.port, b0.port, b1.port);
    return 0;
}
