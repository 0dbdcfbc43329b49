/* A host embedding the server registers one big namespace whose placement is
 * given only by PMIX_NODE_MAP and PMIX_PROC_MAP (made with the library's own
 * PMIx_generate_regex / PMIx_generate_ppn; no per-process data, as a resource
 * manager of a large job registers it), then forks one local client (rank 0)
 * that Inits and Gets PMIX_HOSTNAME, PMIX_NODEID, PMIX_LOCAL_RANK and
 * PMIX_NODE_RANK of remote ranks, the node keys PMIX_LOCAL_SIZE /
 * PMIX_LOCALLDR / PMIX_LOCAL_PEERS by host name, and PMIX_NUM_NODES, and
 * checks each answer against the layout below (computed here, not read back
 * from the library). The host checks the same keys through its own PMIx_Get.
 *
 * Layout: NODES nodes named node%05d; ranks are dealt in chunks of CHUNK,
 * round robin over the nodes, so that a node's ranks are many separate runs
 * and a rank's local rank is not rank % ppn:
 *   node(r)       = (r / 7) % NODES
 *   local_rank(r) = (r / (7 * NODES)) * 7 + r % 7   (the node's ranks, ascending)
 *
 * usage: map_scale [PROCS [NODES [CHUNK]]]  (default 100000 over 1000 nodes, chunks of 7;
 *        CHUNK = PROCS / NODES places the ranks by block, as most launchers do)
 * Prints "map_scale host ok" and "map_scale client ok" when every answer is
 * right, and figures (registration time, server memory per process, the
 * client's Init time, the cost of a Get) as "FIGURE name value unit" lines.
 * Nothing is asserted on time. */
#include <pmix.h>
#include <pmix_server.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned g_procs = 100000, g_nodes = 1000, g_chunk = 7;
static const char *g_who = "host";

#define CHECK(cond, ...)                                     \
    do {                                                     \
        if (!(cond)) {                                       \
            fprintf(stdout, "map_scale %s FAILED: ", g_who); \
            fprintf(stdout, __VA_ARGS__);                    \
            fprintf(stdout, "\n");                           \
            fflush(stdout);                                  \
            exit(1);                                         \
        }                                                    \
    } while (0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ------------------------------------------------------------- the truth */
static unsigned node_of(unsigned r) {
    return (r / g_chunk) % g_nodes;
}
static unsigned local_rank_of(unsigned r) {
    return (r / (g_chunk * g_nodes)) * g_chunk + r % g_chunk;
}
static void node_name(unsigned n, char *out, size_t len) {
    snprintf(out, len, "node%05u", n);
}
static unsigned local_size_of(unsigned n) {
    unsigned count = 0;
    for (unsigned first = n * g_chunk; first < g_procs; first += g_chunk * g_nodes)
        count += first + g_chunk <= g_procs ? g_chunk : g_procs - first;
    return count;
}

/* Appends to a growing string. */
typedef struct {
    char *s;
    size_t len, cap;
} text_t;
static void text_add(text_t *t, const char *s) {
    size_t n = strlen(s);
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        CHECK(t->s != NULL, "out of memory");
    }
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

/* "node00000,node00001,..." and "0-6,7000-7006,...;7-13,...": PMIx_generate_*'s inputs. */
static void layout_lists(text_t *nodes, text_t *ranks) {
    char buf[64];
    for (unsigned n = 0; n < g_nodes; ++n) {
        node_name(n, buf, sizeof buf);
        if (n > 0) text_add(nodes, ",");
        text_add(nodes, buf);
        if (n > 0) text_add(ranks, ";");
        int first_run = 1;
        for (unsigned first = n * g_chunk; first < g_procs; first += g_chunk * g_nodes) {
            unsigned last = first + g_chunk - 1 < g_procs ? first + g_chunk - 1 : g_procs - 1;
            snprintf(buf, sizeof buf, "%s%u-%u", first_run ? "" : ",", first, last);
            text_add(ranks, buf);
            first_run = 0;
        }
    }
}

/* ---------------------------------------------------------------- checks */
static pmix_status_t get(const char *nspace, pmix_rank_t rank, const char *key,
                         const pmix_info_t *quals, size_t nquals, pmix_value_t **v) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, rank);
    *v = NULL;
    return PMIx_Get(&p, key, quals, nquals, v);
}

static void check_rank(const char *nspace, unsigned r) {
    char want_host[64];
    node_name(node_of(r), want_host, sizeof want_host);
    pmix_value_t *v;
    pmix_status_t rc = get(nspace, r, PMIX_HOSTNAME, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v != NULL && v->type == PMIX_STRING &&
              strcmp(v->data.string, want_host) == 0,
          "rank %u PMIX_HOSTNAME: %s, %s (want %s)", r, PMIx_Error_string(rc),
          rc == PMIX_SUCCESS && v->type == PMIX_STRING ? v->data.string : "-", want_host);
    PMIX_VALUE_RELEASE(v);
    rc = get(nspace, r, PMIX_NODEID, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_UINT32 && v->data.uint32 == node_of(r),
          "rank %u PMIX_NODEID: %s (want %u)", r, PMIx_Error_string(rc), node_of(r));
    PMIX_VALUE_RELEASE(v);
    const char *keys[2] = {PMIX_LOCAL_RANK, PMIX_NODE_RANK};
    for (int k = 0; k < 2; ++k) {
        rc = get(nspace, r, keys[k], NULL, 0, &v);
        CHECK(rc == PMIX_SUCCESS && v->type == PMIX_UINT16 && v->data.uint16 == local_rank_of(r),
              "rank %u %s: %s, %u (want %u)", r, keys[k], PMIx_Error_string(rc),
              rc == PMIX_SUCCESS ? (unsigned)v->data.uint16 : 0u, local_rank_of(r));
        PMIX_VALUE_RELEASE(v);
    }
}

static void check_node(const char *nspace, unsigned n) {
    char host[64];
    node_name(n, host, sizeof host);
    pmix_info_t q;
    PMIX_INFO_LOAD(&q, PMIX_HOSTNAME, host, PMIX_STRING);
    pmix_value_t *v;
    pmix_status_t rc = get(nspace, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, &q, 1, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_UINT32 && v->data.uint32 == local_size_of(n),
          "%s PMIX_LOCAL_SIZE: %s (want %u)", host, PMIx_Error_string(rc), local_size_of(n));
    PMIX_VALUE_RELEASE(v);
    rc = get(nspace, PMIX_RANK_WILDCARD, PMIX_LOCALLDR, &q, 1, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_PROC_RANK && v->data.rank == n * g_chunk,
          "%s PMIX_LOCALLDR: %s (want %u)", host, PMIx_Error_string(rc), n * g_chunk);
    PMIX_VALUE_RELEASE(v);
    rc = get(nspace, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, &q, 1, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_STRING, "%s PMIX_LOCAL_PEERS: %s", host,
          PMIx_Error_string(rc));
    /* Every listed peer is on that node, and there are LOCAL_SIZE of them. */
    unsigned count = 0;
    for (char *s = v->data.string; *s != '\0';) {
        char *end;
        unsigned long r = strtoul(s, &end, 10);
        CHECK(end != s && node_of((unsigned)r) == n, "%s PMIX_LOCAL_PEERS lists %lu", host, r);
        ++count;
        s = *end == ',' ? end + 1 : end;
    }
    CHECK(count == local_size_of(n), "%s PMIX_LOCAL_PEERS has %u ranks (want %u)", host, count,
          local_size_of(n));
    PMIX_VALUE_RELEASE(v);
    PMIX_INFO_DESTRUCT(&q);
}

/* Ranks spread over the job: both ends, chunk and cycle boundaries, the last node. */
static void check_all(const char *nspace) {
    const unsigned cycle = g_chunk * g_nodes;
    unsigned ranks[] = {0,
                        1,
                        g_chunk - 1,
                        g_chunk,
                        cycle - 1,
                        cycle,
                        cycle + g_chunk + 3,
                        g_procs / 2,
                        g_procs / 3,
                        g_procs - g_chunk,
                        g_procs - 1};
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; ++i)
        if (ranks[i] < g_procs) check_rank(nspace, ranks[i]);
    check_node(nspace, 0);
    check_node(nspace, g_nodes / 2);
    check_node(nspace, g_nodes - 1);
    pmix_value_t *v;
    pmix_status_t rc = get(nspace, PMIX_RANK_WILDCARD, PMIX_NUM_NODES, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_UINT32 && v->data.uint32 == g_nodes,
          "PMIX_NUM_NODES: %s (want %u)", PMIx_Error_string(rc), g_nodes);
    PMIX_VALUE_RELEASE(v);
    /* A rank the maps do not place is not invented. */
    rc = get(nspace, g_procs, PMIX_HOSTNAME, NULL, 0, &v);
    CHECK(rc != PMIX_SUCCESS, "rank %u (beyond the job) has a PMIX_HOSTNAME", g_procs);
}

/* ---------------------------------------------------------------- client */
static int client_main(void) {
    g_who = "client";
    pmix_proc_t me;
    double t0 = now();
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    double init = now() - t0;
    CHECK(rc == PMIX_SUCCESS, "PMIx_Init: %s", PMIx_Error_string(rc));
    check_rank(me.nspace, me.rank);
    check_all(me.nspace);
    /* Cost of a Get of a remote rank's host: distinct ranks, after a first one. */
    unsigned n = g_procs < 200000 ? g_procs : 200000;
    if (getenv("MAP_SCALE_GETS") != NULL)
        n = (unsigned)atoi(getenv("MAP_SCALE_GETS")); /* profiling */
    if (n == 0) n = 1;
    pmix_value_t *v;
    CHECK(get(me.nspace, 1, PMIX_HOSTNAME, NULL, 0, &v) == PMIX_SUCCESS, "first Get");
    PMIX_VALUE_RELEASE(v);
    t0 = now();
    for (unsigned i = 0; i < n; ++i) {
        unsigned r = (unsigned)(((uint64_t)i * 7919u) % g_procs);
        CHECK(get(me.nspace, r, PMIX_HOSTNAME, NULL, 0, &v) == PMIX_SUCCESS, "Get rank %u", r);
        PMIX_VALUE_RELEASE(v);
    }
    double per_get = (now() - t0) / n;
    printf("FIGURE client_init %.3f ms\n", init * 1e3);
    printf("FIGURE get_remote_hostname %.3f us\n", per_get * 1e6);
    printf("map_scale client ok\n");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* ------------------------------------------------------------------ host */
static long rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
    if (f != NULL) fclose(f);
    return kib;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "client") == 0) {
        g_procs = (unsigned)strtoul(argv[2], NULL, 10);
        g_nodes = (unsigned)strtoul(argv[3], NULL, 10);
        g_chunk = (unsigned)strtoul(argv[4], NULL, 10);
        return client_main();
    }
    if (argc > 1) g_procs = (unsigned)strtoul(argv[1], NULL, 10);
    if (argc > 2) g_nodes = (unsigned)strtoul(argv[2], NULL, 10);
    if (argc > 3) g_chunk = (unsigned)strtoul(argv[3], NULL, 10);
    CHECK(g_procs > 0 && g_nodes > 0 && g_chunk > 0 && g_procs >= g_nodes * g_chunk,
          "usage: map_scale [PROCS [NODES [CHUNK]]]");
    alarm(240); /* a hang is a failure, not a stuck test */

    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    const char *nspace = "mapscale";

    text_t nodes = {0}, ranks = {0};
    layout_lists(&nodes, &ranks);
    char *node_map = NULL, *proc_map = NULL;
    CHECK(PMIx_generate_regex(nodes.s, &node_map) == PMIX_SUCCESS, "PMIx_generate_regex");
    CHECK(PMIx_generate_ppn(ranks.s, &proc_map) == PMIX_SUCCESS, "PMIx_generate_ppn");
    free(nodes.s);
    free(ranks.s);

    /* Rank 0 is the one local client (node 0). */
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, 0);
    pmix_status_t rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "register_client: %s",
          PMIx_Error_string(rc));

    pmix_info_t info[3];
    uint32_t size = g_procs;
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[1], PMIX_NODE_MAP, node_map, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_PROC_MAP, proc_map, PMIX_STRING);
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, nspace);
    long rss0 = rss_kib();
    double t0 = now();
    rc = PMIx_server_register_nspace(ns, 1, info, 3, NULL, NULL);
    double reg = now() - t0;
    long rss1 = rss_kib();
    CHECK(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "register_nspace: %s",
          PMIx_Error_string(rc));
    printf("FIGURE registration %.3f ms\n", reg * 1e3);
    printf("FIGURE server_memory_per_process %.2f B\n",
           (double)(rss1 - rss0) * 1024.0 / (double)g_procs);
    printf("FIGURE maps_size %zu B\n", strlen(node_map) + strlen(proc_map));
    fflush(stdout);
    for (int i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    free(node_map);
    free(proc_map);

    /* The server's own view answers the same way. */
    check_all(nspace);

    /* This program's path, read before forking (under valgrind the child's
     * /proc/self/exe would be the tool). */
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(len > 0, "readlink /proc/self/exe");
    self[len] = '\0';
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        char a[16], b[16], c[16];
        snprintf(a, sizeof a, "%u", g_procs);
        snprintf(b, sizeof b, "%u", g_nodes);
        snprintf(c, sizeof c, "%u", g_chunk);
        execl(self, argv[0], "client", a, b, c, (char *)NULL);
        _exit(127);
    }
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the client failed");
    printf("FIGURE server_memory_per_process_after_init %.2f B\n",
           (double)(rss_kib() - rss0) * 1024.0 / (double)g_procs);
    PMIx_server_deregister_nspace(ns, NULL, NULL);
    PMIx_server_finalize();
    printf("map_scale host ok\n");
    return 0;
}
