/* Resolve_peers/nodes, Query_info and Log under pmixrun (3 ranks).
 * Prints "query ok: rank N"; rank 0 logs "log line from rank 0" to stderr.
 * usage: query_client */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;
static pmix_proc_t me;
#define EXPECT(cond, ...)                                \
    do {                                                 \
        if (!(cond)) {                                   \
            fprintf(stderr, "query rank %u: ", me.rank); \
            fprintf(stderr, __VA_ARGS__);                \
            fprintf(stderr, "\n");                       \
            ++failures;                                  \
        }                                                \
    } while (0)

/* The value of `key` in the PMIX_QUERY_RESULTS of query `q`, or NULL. */
static const pmix_value_t *result(const pmix_info_t *res, size_t nres, size_t q, const char *key) {
    if (q >= nres || !PMIX_CHECK_KEY(&res[q], PMIX_QUERY_RESULTS) ||
        res[q].value.type != PMIX_DATA_ARRAY)
        return NULL;
    const pmix_data_array_t *da = res[q].value.data.darray;
    const pmix_info_t *arr = (const pmix_info_t *)da->array;
    for (size_t i = 0; i < da->size; ++i) {
        if (PMIX_CHECK_KEY(&arr[i], key)) return &arr[i].value;
    }
    return NULL;
}

int main(void) {
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) return 1;
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    char host[256] = "";
    if (PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &val) == PMIX_SUCCESS) {
        snprintf(host, sizeof host, "%s", val->data.string);
        PMIX_VALUE_RELEASE(val);
    }

    /* Resolve. */
    pmix_proc_t *procs = NULL;
    size_t nprocs = 0;
    rc = PMIx_Resolve_peers(NULL, me.nspace, &procs, &nprocs);
    EXPECT(rc == PMIX_SUCCESS && nprocs == 3, "Resolve_peers(local): %s, %zu procs",
           PMIx_Error_string(rc), nprocs);
    for (size_t i = 0; rc == PMIX_SUCCESS && i < nprocs; ++i) {
        EXPECT(procs[i].rank == i && PMIX_CHECK_NSPACE(procs[i].nspace, me.nspace),
               "peer %zu is %s:%u", i, procs[i].nspace, procs[i].rank);
    }
    if (procs != NULL) PMIX_PROC_FREE(procs, nprocs);
    rc = PMIx_Resolve_peers(host, NULL, &procs, &nprocs);
    EXPECT(rc == PMIX_SUCCESS && nprocs == 3, "Resolve_peers(%s): %s, %zu procs", host,
           PMIx_Error_string(rc), nprocs);
    if (procs != NULL) PMIX_PROC_FREE(procs, nprocs);
    rc = PMIx_Resolve_peers("no-such-node.invalid", me.nspace, &procs, &nprocs);
    EXPECT(rc == PMIX_SUCCESS && nprocs == 0 && procs == NULL, "Resolve_peers(other node): %s",
           PMIx_Error_string(rc));
    char *nodes = NULL;
    rc = PMIx_Resolve_nodes(me.nspace, &nodes);
    EXPECT(rc == PMIX_SUCCESS && nodes != NULL && strcmp(nodes, host) == 0,
           "Resolve_nodes: %s '%s' (expected '%s')", PMIx_Error_string(rc),
           nodes ? nodes : "(null)", host);
    free(nodes);

    /* Query: namespaces, job size (cached and refreshed), proc tables, psets. */
    pmix_query_t q[4];
    PMIX_QUERY_CONSTRUCT(&q[0]);
    PMIX_QUERY_CONSTRUCT(&q[1]);
    PMIX_QUERY_CONSTRUCT(&q[2]);
    PMIX_QUERY_CONSTRUCT(&q[3]);
    char *k0[] = {PMIX_QUERY_NAMESPACES, PMIX_QUERY_NUM_PSETS, NULL};
    char *k1[] = {PMIX_JOB_SIZE, PMIX_QUERY_PROC_TABLE, PMIX_QUERY_LOCAL_PROC_TABLE, NULL};
    char *k2[] = {PMIX_JOB_SIZE, NULL};
    char *k3[] = {PMIX_QUERY_NAMESPACE_INFO, NULL};
    q[0].keys = k0;
    q[1].keys = k1;
    q[2].keys = k2;
    q[3].keys = k3;
    pmix_info_t qual1, qual2[2];
    PMIX_INFO_LOAD(&qual1, PMIX_NSPACE, me.nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&qual2[0], PMIX_NSPACE, me.nspace, PMIX_STRING);
    PMIX_INFO_LOAD(&qual2[1], PMIX_QUERY_REFRESH_CACHE, NULL, PMIX_BOOL);
    q[1].qualifiers = &qual1;
    q[1].nqual = 1;
    q[2].qualifiers = qual2;
    q[2].nqual = 2;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    rc = PMIx_Query_info(q, 4, &res, &nres);
    EXPECT(rc == PMIX_SUCCESS && nres == 4, "Query_info: %s, %zu results", PMIx_Error_string(rc),
           nres);
    if (rc == PMIX_SUCCESS && nres == 4) {
        const pmix_value_t *v = result(res, nres, 0, PMIX_QUERY_NAMESPACES);
        EXPECT(v != NULL && v->type == PMIX_STRING && strstr(v->data.string, me.nspace) != NULL,
               "namespaces");
        v = result(res, nres, 0, PMIX_QUERY_NUM_PSETS);
        EXPECT(v != NULL && v->type == PMIX_SIZE && v->data.size == 0, "num psets");
        EXPECT(result(res, nres, 1, PMIX_QUERY_QUALIFIERS) != NULL, "qualifiers echoed");
        v = result(res, nres, 1, PMIX_JOB_SIZE);
        EXPECT(v != NULL && v->type == PMIX_UINT32 && v->data.uint32 == 3, "job size");
        v = result(res, nres, 2, PMIX_JOB_SIZE);
        EXPECT(v != NULL && v->type == PMIX_UINT32 && v->data.uint32 == 3, "refreshed job size");
        v = result(res, nres, 1, PMIX_QUERY_PROC_TABLE);
        EXPECT(v != NULL && v->type == PMIX_DATA_ARRAY && v->data.darray->type == PMIX_PROC_INFO &&
                   v->data.darray->size == 3,
               "proc table");
        if (v != NULL && v->type == PMIX_DATA_ARRAY && v->data.darray->size == 3) {
            const pmix_proc_info_t *pi = (const pmix_proc_info_t *)v->data.darray->array;
            EXPECT(pi[me.rank].proc.rank == me.rank && pi[me.rank].pid == getpid() &&
                       pi[me.rank].hostname != NULL && strcmp(pi[me.rank].hostname, host) == 0,
                   "own proc table entry: rank %u pid %d host %s", pi[me.rank].proc.rank,
                   (int)pi[me.rank].pid, pi[me.rank].hostname ? pi[me.rank].hostname : "(null)");
        }
        v = result(res, nres, 1, PMIX_QUERY_LOCAL_PROC_TABLE);
        EXPECT(v != NULL && v->type == PMIX_DATA_ARRAY && v->data.darray->size == 3,
               "local proc table");
        v = result(res, nres, 3, PMIX_QUERY_NAMESPACE_INFO);
        EXPECT(v != NULL && v->type == PMIX_DATA_ARRAY && v->data.darray->size >= 1,
               "namespace info");
    }
    if (res != NULL) PMIX_INFO_FREE(res, nres);
    PMIX_INFO_DESTRUCT(&qual1);
    PMIX_INFO_DESTRUCT(&qual2[0]);
    PMIX_INFO_DESTRUCT(&qual2[1]);

    /* Unknown keys: not found; mixed: partial. */
    pmix_query_t u;
    PMIX_QUERY_CONSTRUCT(&u);
    char *ku[] = {"pmixpp.test.no.such.query", NULL};
    u.keys = ku;
    rc = PMIx_Query_info(&u, 1, &res, &nres);
    EXPECT(rc == PMIX_ERR_NOT_FOUND && res == NULL && nres == 0, "unknown query key: %s",
           PMIx_Error_string(rc));
    char *km[] = {"pmixpp.test.no.such.query", PMIX_QUERY_NAMESPACES, NULL};
    u.keys = km;
    rc = PMIx_Query_info(&u, 1, &res, &nres);
    EXPECT(rc == PMIX_ERR_PARTIAL_SUCCESS && nres == 1 &&
               result(res, nres, 0, PMIX_QUERY_NAMESPACES) != NULL,
           "mixed query: %s", PMIx_Error_string(rc));
    if (res != NULL) PMIX_INFO_FREE(res, nres);

    /* Log to pmixrun's stderr. */
    if (me.rank == 0) {
        pmix_info_t d;
        PMIX_INFO_LOAD(&d, PMIX_LOG_STDERR, "log line from rank 0\n", PMIX_STRING);
        rc = PMIx_Log(&d, 1, NULL, 0);
        EXPECT(rc == PMIX_SUCCESS, "Log: %s", PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&d);
        PMIX_INFO_LOAD(&d, PMIX_LOG_SYSLOG, "not served by pmixrun", PMIX_STRING);
        rc = PMIx_Log(&d, 1, NULL, 0);
        EXPECT(rc == PMIX_ERR_NOT_SUPPORTED, "Log to syslog: %s", PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&d);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
    PMIx_Finalize(NULL, 0);
    if (failures == 0) printf("query ok: rank %u\n", me.rank);
    return failures == 0 ? 0 : 1;
}
