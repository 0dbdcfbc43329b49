/* A tool attached to two servers loses the one that is not its current
 * server (docs/tools.md, "Several servers"):
 *
 *   tool_lost RDV_HOST
 * Starts two session servers (RDV_HOST, embedding the server: nspaces
 * lost-a and lost-b) in a private directory, connects to lost-a, attaches to
 * lost-b, and ends lost-b (closes its stdin: it finalizes). The tool must get
 * PMIX_ERR_LOST_CONNECTION with lost-b as the source (bounded, 30 s); lost-a
 * stays current and the only server listed, and answers a query. Then lost-a
 * ends and the event comes with lost-a as the source. Prints "tool_lost ok". */
#define _GNU_SOURCE
#include <pmix_tool.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, pmix_status_t rc) {
    printf("tool_lost FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

#include "tool_servers.h"

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2) return 2;
    signal(SIGPIPE, SIG_IGN);
    char dir[] = "/tmp/pmixpp-tool-lost-XXXXXX";
    if (mkdtemp(dir) == NULL) fail("mkdtemp", PMIX_ERROR);
    struct host a = start_host(argv[1], "lost-a", dir);
    struct host b = start_host(argv[1], "lost-b", dir);

    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_NSPACE, "lost-a", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SERVER_TMPDIR, dir, PMIX_STRING);
    pmix_proc_t me, server;
    pmix_status_t rc = PMIx_tool_init(&me, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init to lost-a", rc);
    pmix_status_t code = PMIX_ERR_LOST_CONNECTION;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_lost, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_NSPACE, "lost-b", PMIX_STRING);
    rc = PMIx_tool_attach_to_server(&me, &server, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc != PMIX_SUCCESS || strcmp(server.nspace, "lost-b") != 0)
        fail("PMIx_tool_attach_to_server lost-b", rc);

    stop_host(&b);
    const char *src = wait_lost(1);
    if (src == NULL || strcmp(src, "lost-b") != 0)
        fail("PMIX_ERR_LOST_CONNECTION from lost-b", PMIX_ERR_TIMEOUT);
    pmix_proc_t *servers = NULL;
    size_t nservers = 0;
    rc = PMIx_tool_get_servers(&servers, &nservers);
    if (rc != PMIX_SUCCESS || nservers != 1 || strcmp(servers[0].nspace, "lost-a") != 0)
        fail("lost-a alone, current", rc);
    PMIX_PROC_FREE(servers, nservers);
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_NAMESPACES);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    PMIX_QUERY_DESTRUCT(&q);
    if (rc != PMIX_SUCCESS) fail("a query of lost-a after lost-b went", rc);
    PMIX_INFO_FREE(results, nresults);

    stop_host(&a);
    src = wait_lost(2);
    if (src == NULL || strcmp(src, "lost-a") != 0)
        fail("PMIX_ERR_LOST_CONNECTION from lost-a", PMIX_ERR_TIMEOUT);
    PMIx_tool_finalize();
    rmdir(dir);
    printf("tool_lost ok\n");
    return 0;
}
