/* A tool outside a pmixrun job (started by tool_target.c) that uses the
 * request calls a tool has (docs/tools.md), each reaching pmixrun's server:
 *
 *   tool_api PMIXRUN_PID JOB_NSPACE
 * PMIx_Get of job-level (PMIX_JOB_SIZE) and committed ("tt.rank") data,
 * PMIx_Resolve_peers/_nodes, PMIx_Query_info (namespaces), PMIx_Process_monitor
 * (cancel of an unknown id: the server's NOT_FOUND); PMIx_Spawn refused
 * (PMIX_ERR_NOT_SUPPORTED) to a tool initialized without PMIX_LAUNCHER, then,
 * initialized again with it, PMIx_Spawn of a new job. Prints "tool_api ok". */
#include <pmix_tool.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fail(const char *what, pmix_status_t rc) {
    printf("tool_api FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3) return 2;
    const char *ns = argv[2];
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    pid_t pid = (pid_t)atoi(argv[1]);
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init", rc);

    pmix_proc_t wild, one;
    PMIX_LOAD_PROCID(&wild, ns, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&one, ns, 1);
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) fail("PMIx_Get PMIX_JOB_SIZE", rc);
    if (v->type != PMIX_UINT32 || v->data.uint32 != 2) fail("job size value", PMIX_ERROR);
    PMIX_VALUE_RELEASE(v);
    rc = PMIx_Get(&one, "tt.rank", NULL, 0, &v);
    if (rc != PMIX_SUCCESS) fail("PMIx_Get tt.rank of rank 1", rc);
    if (v->type != PMIX_INT || v->data.integer != 17) fail("tt.rank value", PMIX_ERROR);
    PMIX_VALUE_RELEASE(v);

    pmix_proc_t *peers = NULL;
    size_t npeers = 0;
    rc = PMIx_Resolve_peers(NULL, ns, &peers, &npeers);
    if (rc != PMIX_SUCCESS) fail("PMIx_Resolve_peers", rc);
    if (npeers != 2 || strcmp(peers[0].nspace, ns) != 0) fail("resolved peers", PMIX_ERROR);
    free(peers);
    char *nodes = NULL;
    rc = PMIx_Resolve_nodes(ns, &nodes);
    if (rc != PMIX_SUCCESS || nodes == NULL || nodes[0] == '\0') fail("PMIx_Resolve_nodes", rc);
    free(nodes);

    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NAMESPACES);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    /* One PMIX_QUERY_RESULTS per query, holding the answered keys. */
    if (rc != PMIX_SUCCESS || nresults != 1 || results[0].value.type != PMIX_DATA_ARRAY)
        fail("PMIx_Query_info", rc);
    const pmix_data_array_t *answers = results[0].value.data.darray;
    const pmix_info_t *a = answers->type == PMIX_INFO ? (const pmix_info_t *)answers->array : NULL;
    if (a == NULL || answers->size != 1 || !PMIX_CHECK_KEY(&a[0], PMIX_QUERY_NAMESPACES) ||
        a[0].value.type != PMIX_STRING || strstr(a[0].value.data.string, ns) == NULL)
        fail("PMIx_Query_info namespaces answer", PMIX_ERROR);
    PMIX_INFO_FREE(results, nresults);
    PMIX_QUERY_DESTRUCT(&q);

    /* PMIx_Process_monitor reaches the server's monitoring: cancelling an id
     * nobody registered is its PMIX_ERR_NOT_FOUND (an unconnected tool would
     * get PMIX_ERR_UNREACH). */
    pmix_info_t mon;
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_CANCEL, "pmixpp.tool.no.such.monitor", PMIX_STRING);
    rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, NULL, 0, NULL, NULL);
    PMIX_INFO_DESTRUCT(&mon);
    if (rc != PMIX_ERR_NOT_FOUND) fail("PMIx_Process_monitor cancel of an unknown id", rc);

    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup("true");
    PMIX_ARGV_APPEND(rc, app.argv, "true");
    app.maxprocs = 1;
    pmix_nspace_t child;
    /* Standard, "Launching Applications with Tools": tool-directed launches
     * require PMIX_LAUNCHER at PMIx_tool_init. */
    rc = PMIx_Spawn(NULL, 0, &app, 1, child);
    if (rc != PMIX_ERR_NOT_SUPPORTED) fail("PMIx_Spawn without PMIX_LAUNCHER", rc);
    if ((rc = PMIx_tool_finalize()) != PMIX_SUCCESS) fail("PMIx_tool_finalize", rc);
    pmix_info_t linfo[2];
    bool yes = true;
    PMIX_INFO_LOAD(&linfo[0], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    PMIX_INFO_LOAD(&linfo[1], PMIX_LAUNCHER, &yes, PMIX_BOOL);
    rc = PMIx_tool_init(&me, linfo, 2);
    PMIX_INFO_DESTRUCT(&linfo[0]);
    PMIX_INFO_DESTRUCT(&linfo[1]);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init with PMIX_LAUNCHER", rc);
    rc = PMIx_Spawn(NULL, 0, &app, 1, child);
    PMIX_APP_DESTRUCT(&app);
    if (rc != PMIX_SUCCESS) fail("PMIx_Spawn", rc);
    if (child[0] == '\0' || strcmp(child, ns) == 0) fail("spawned nspace", PMIX_ERROR);

    if ((rc = PMIx_tool_finalize()) != PMIX_SUCCESS) fail("PMIx_tool_finalize", rc);
    printf("tool_api ok (tool %s, spawned %s)\n", me.nspace, child);
    return 0;
}
