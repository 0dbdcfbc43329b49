/* A host embedding a PMIx server for the rendezvous and connection tests
 * (tool_rendezvous.py; docs/tools.md). Arguments, any order:
 *   sys | session | tool       PMIX_SERVER_SYSTEM_SUPPORT / _SESSION_SUPPORT / _TOOL_SUPPORT
 *   nspace=NS                  PMIX_SERVER_NSPACE
 *   tmpdir=D | systmpdir=D     PMIX_SERVER_TMPDIR / PMIX_SYSTEM_TMPDIR
 *   mode=OCTAL                 PMIX_SOCKET_MODE
 * Accepts every tool, naming it "<server nspace>.tool.<n>". Prints
 * "rdv_host ready pid=<pid> nspace=<ns>", then serves until its stdin closes,
 * finalizes and prints "rdv_host done". A failed PMIx_server_init prints
 * "rdv_host init <status name>" and exits 3. */
#include <pmix_server.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char server_ns[PMIX_MAX_NSLEN + 1] = "rdv-host";
static int tools = 0;

static void on_tool(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                    void *cbdata) {
    (void)info, (void)ninfo;
    char name[PMIX_MAX_NSLEN + 1];
    snprintf(name, sizeof name, "%s.tool.%d", server_ns, tools++);
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, name, 0);
    cbfunc(PMIX_SUCCESS, &proc, cbdata);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_info_t info[8];
    size_t n = 0;
    bool yes = true;
    for (int a = 1; a < argc; ++a) {
        const char *arg = argv[a];
        if (n == 8) return 2;
        PMIX_INFO_CONSTRUCT(&info[n]);
        if (strcmp(arg, "sys") == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_SYSTEM_SUPPORT, &yes, PMIX_BOOL);
        } else if (strcmp(arg, "session") == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_SESSION_SUPPORT, &yes, PMIX_BOOL);
        } else if (strcmp(arg, "tool") == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
        } else if (strncmp(arg, "nspace=", 7) == 0) {
            snprintf(server_ns, sizeof server_ns, "%s", arg + 7);
            PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_NSPACE, arg + 7, PMIX_STRING);
        } else if (strncmp(arg, "tmpdir=", 7) == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_TMPDIR, arg + 7, PMIX_STRING);
        } else if (strncmp(arg, "systmpdir=", 10) == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_SYSTEM_TMPDIR, arg + 10, PMIX_STRING);
        } else if (strncmp(arg, "mode=", 5) == 0) {
            uint32_t mode = (uint32_t)strtoul(arg + 5, NULL, 8);
            PMIX_INFO_LOAD(&info[n++], PMIX_SOCKET_MODE, &mode, PMIX_UINT32);
        } else {
            fprintf(stderr, "rdv_host: unknown argument %s\n", arg);
            return 2;
        }
    }
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.tool_connected = on_tool;
    pmix_status_t rc = PMIx_server_init(&module, info, n);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    if (rc != PMIX_SUCCESS) {
        printf("rdv_host init %s\n", PMIx_Error_string(rc));
        return 3;
    }
    printf("rdv_host ready pid=%d nspace=%s\n", (int)getpid(), server_ns);
    char buf[256];
    while (fgets(buf, sizeof buf, stdin) != NULL) {
    }
    PMIx_server_finalize();
    printf("rdv_host done\n");
    return 0;
}
