/* A tool connected to two pmixrun instances at once (docs/tools.md,
 * "Several servers"), started by the inner of two nested tool_target jobs:
 *
 *   tool_multi PID_A NSPACE_A PID_B NSPACE_B
 * Connects to A (PMIx_tool_init), attaches to B, lists both servers, and
 * switches: PMIx_Query_info(PMIX_QUERY_NAMESPACES) and PMIx_Get of the job
 * size answer from the current server only. Disconnects from B, then A.
 * Prints "tool_multi ok". */
#include <pmix_tool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, pmix_status_t rc) {
    printf("tool_multi FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

/* The current server's namespaces (comma list), malloc'd. */
static char *namespaces(void) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NAMESPACES);
    pmix_info_t *results = NULL;
    size_t n = 0;
    rc = PMIx_Query_info(&q, 1, &results, &n);
    PMIX_QUERY_DESTRUCT(&q);
    if (rc != PMIX_SUCCESS || n != 1 || results[0].value.type != PMIX_DATA_ARRAY)
        fail("PMIx_Query_info", rc);
    const pmix_data_array_t *d = results[0].value.data.darray;
    const pmix_info_t *a = (const pmix_info_t *)d->array;
    if (d->type != PMIX_INFO || d->size != 1 || a[0].value.type != PMIX_STRING)
        fail("namespaces answer", PMIX_ERROR);
    char *out = strdup(a[0].value.data.string);
    PMIX_INFO_FREE(results, n);
    return out;
}

static void expect_current(const char *mine, const char *other, const char *when) {
    char *ns = namespaces();
    if (strstr(ns, mine) == NULL || strstr(ns, other) != NULL) {
        printf("tool_multi FAILED: %s: namespaces %s, want %s and not %s\n", when, ns, mine, other);
        exit(1);
    }
    free(ns);
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, mine, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) fail(when, rc);
    PMIX_VALUE_RELEASE(v);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 5) return 2;
    const char *nsA = argv[2], *nsB = argv[4];
    pid_t pidA = (pid_t)atoi(argv[1]), pidB = (pid_t)atoi(argv[3]);
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pidA, PMIX_PID);
    pmix_proc_t me, me2, srvA, srvB;
    pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init to A", rc);
    pmix_proc_t *servers = NULL;
    size_t nservers = 0;
    if ((rc = PMIx_tool_get_servers(&servers, &nservers)) != PMIX_SUCCESS || nservers != 1)
        fail("get_servers with one", rc);
    srvA = servers[0];
    PMIX_PROC_FREE(servers, nservers);
    expect_current(nsA, nsB, "A at first");

    PMIX_INFO_CONSTRUCT(&info);
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pidB, PMIX_PID);
    rc = PMIx_tool_attach_to_server(&me2, &srvB, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_attach_to_server B", rc);
    if (strcmp(me.nspace, me2.nspace) != 0) fail("the tool's identity changed", PMIX_ERROR);
    if (PMIX_CHECK_PROCID(&srvA, &srvB)) fail("A and B are the same server", PMIX_ERROR);
    if ((rc = PMIx_tool_get_servers(&servers, &nservers)) != PMIX_SUCCESS || nservers != 2)
        fail("get_servers with two", rc);
    int seenA = 0, seenB = 0;
    for (size_t i = 0; i < nservers; ++i) {
        seenA += PMIX_CHECK_PROCID(&servers[i], &srvA);
        seenB += PMIX_CHECK_PROCID(&servers[i], &srvB);
    }
    PMIX_PROC_FREE(servers, nservers);
    if (seenA != 1 || seenB != 1) fail("get_servers lists A and B", PMIX_ERROR);
    expect_current(nsA, nsB, "A still current after attaching B");

    if ((rc = PMIx_tool_set_server(&srvB, NULL, 0)) != PMIX_SUCCESS) fail("set_server B", rc);
    expect_current(nsB, nsA, "B after set_server");
    if ((rc = PMIx_tool_set_server(&srvA, NULL, 0)) != PMIX_SUCCESS) fail("set_server A", rc);
    expect_current(nsA, nsB, "A after set_server");
    pmix_proc_t nobody;
    PMIX_LOAD_PROCID(&nobody, "no-such-server", 0);
    if (PMIx_tool_set_server(&nobody, NULL, 0) != PMIX_ERR_NOT_FOUND)
        fail("set_server unknown", PMIX_ERROR);

    if ((rc = PMIx_tool_disconnect(&srvB)) != PMIX_SUCCESS) fail("disconnect B", rc);
    if ((rc = PMIx_tool_get_servers(&servers, &nservers)) != PMIX_SUCCESS || nservers != 1 ||
        !PMIX_CHECK_PROCID(&servers[0], &srvA))
        fail("get_servers after disconnecting B", rc);
    PMIX_PROC_FREE(servers, nservers);
    if (PMIx_tool_set_server(&srvB, NULL, 0) != PMIX_ERR_NOT_FOUND)
        fail("set_server to gone B", PMIX_ERROR);
    expect_current(nsA, nsB, "A after disconnecting B");
    if ((rc = PMIx_tool_disconnect(&srvA)) != PMIX_SUCCESS) fail("disconnect A", rc);
    if ((rc = PMIx_tool_get_servers(&servers, &nservers)) != PMIX_SUCCESS || nservers != 0)
        fail("get_servers after disconnecting both", rc);
    PMIx_tool_finalize();
    printf("tool_multi ok\n");
    return 0;
}
