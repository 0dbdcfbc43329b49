/* A tool whose current server goes (docs/tools.md, "Several servers"):
 *
 *   tool_lost_current RDV_HOST
 * Starts two session servers (RDV_HOST: nspaces cur-a and cur-b) in a
 * private directory, connects to cur-a (current) and attaches to cur-b, then
 * ends cur-a (closes its stdin: it finalizes). Once PMIX_ERR_LOST_CONNECTION
 * from cur-a arrived (bounded, 30 s), a call that needs the current server
 * (a query) fails with it, and cur-b is not used behind the tool's back.
 * PMIx_tool_disconnect of the lost cur-a makes cur-b current: the query
 * succeeds again. Then cur-b ends: the query fails with
 * PMIX_ERR_LOST_CONNECTION again, and PMIx_tool_finalize returns.
 * Prints "tool_lost_current ok". */
#define _GNU_SOURCE
#include <pmix_tool.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, pmix_status_t rc) {
    printf("tool_lost_current FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

#include "tool_servers.h"

/* The n-th loss (bounded, 30 s) must come from `nspace`. */
static void expect_lost(int n, const char *nspace) {
    const char *src = wait_lost(n);
    if (src == NULL || strcmp(src, nspace) != 0) {
        printf("tool_lost_current FAILED: no PMIX_ERR_LOST_CONNECTION from %s\n", nspace);
        exit(1);
    }
}

static pmix_status_t query_namespaces(void) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NAMESPACES);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    PMIX_QUERY_DESTRUCT(&q);
    if (results != NULL) PMIX_INFO_FREE(results, nresults);
    return rc;
}

/* A query answers `want` (SUCCESS or LOST_CONNECTION). */
static void expect_calls(pmix_status_t want, const char *when) {
    char what[160];
    pmix_status_t rc = query_namespaces();
    snprintf(what, sizeof what, "query %s (want %s)", when, PMIx_Error_string(want));
    if (rc != want) fail(what, rc);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2) return 2;
    signal(SIGPIPE, SIG_IGN);
    char dir[] = "/tmp/pmixpp-tool-lost-current-XXXXXX";
    if (mkdtemp(dir) == NULL) fail("mkdtemp", PMIX_ERROR);
    struct host a = start_host(argv[1], "cur-a", dir);
    struct host b = start_host(argv[1], "cur-b", dir);

    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_NSPACE, "cur-a", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SERVER_TMPDIR, dir, PMIX_STRING);
    pmix_proc_t me, srv_a, srv_b;
    pmix_status_t rc = PMIx_tool_init(&me, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init to cur-a", rc);
    pmix_proc_t *servers = NULL;
    size_t nservers = 0;
    if ((rc = PMIx_tool_get_servers(&servers, &nservers)) != PMIX_SUCCESS || nservers != 1)
        fail("PMIx_tool_get_servers with cur-a", rc);
    srv_a = servers[0];
    PMIX_PROC_FREE(servers, nservers);
    pmix_status_t code = PMIX_ERR_LOST_CONNECTION;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_lost, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_NSPACE, "cur-b", PMIX_STRING);
    rc = PMIx_tool_attach_to_server(&me, &srv_b, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc != PMIX_SUCCESS || strcmp(srv_b.nspace, "cur-b") != 0)
        fail("PMIx_tool_attach_to_server cur-b", rc);
    expect_calls(PMIX_SUCCESS, "with cur-a current");

    stop_host(&a);
    expect_lost(1, "cur-a");
    expect_calls(PMIX_ERR_LOST_CONNECTION, "after cur-a, the current server, went");

    rc = PMIx_tool_disconnect(&srv_a);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_disconnect of the lost cur-a", rc);
    expect_calls(PMIX_SUCCESS, "with cur-b current after disconnecting cur-a");

    stop_host(&b);
    expect_lost(2, "cur-b");
    expect_calls(PMIX_ERR_LOST_CONNECTION, "after cur-b went too");
    PMIx_tool_finalize();
    rmdir(dir);
    printf("tool_lost_current ok\n");
    return 0;
}
