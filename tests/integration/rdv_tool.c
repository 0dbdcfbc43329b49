/* A tool for the rendezvous and connection tests (tool_rendezvous.py).
 * Arguments, any order, each one PMIx_tool_init attribute:
 *   sys | sysfirst | optional      PMIX_CONNECT_TO_SYSTEM / _SYSTEM_FIRST /
 * PMIX_TOOL_CONNECT_OPTIONAL pid=N | nspace=NS | uri=U | file=F PMIX_SERVER_PIDINFO / _NSPACE /
 * _URI / PMIX_TOOL_ATTACHMENT_FILE tmpdir=D | systmpdir=D         PMIX_SERVER_TMPDIR /
 * PMIX_SYSTEM_TMPDIR retries=N | delay=S            PMIX_CONNECT_MAX_RETRIES / _RETRY_DELAY Prints
 * "rdv_tool init <status name> <own nspace or ->" and exits 0 (the driver judges the status). */
#include <pmix_tool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_info_t info[12];
    size_t n = 0;
    bool yes = true;
    for (int a = 1; a < argc; ++a) {
        const char *arg = argv[a];
        if (n == 12) return 2;
        PMIX_INFO_CONSTRUCT(&info[n]);
        if (strcmp(arg, "sys") == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
        } else if (strcmp(arg, "sysfirst") == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_CONNECT_SYSTEM_FIRST, &yes, PMIX_BOOL);
        } else if (strcmp(arg, "optional") == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_TOOL_CONNECT_OPTIONAL, &yes, PMIX_BOOL);
        } else if (strncmp(arg, "pid=", 4) == 0) {
            pid_t pid = (pid_t)atoi(arg + 4);
            PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
        } else if (strncmp(arg, "nspace=", 7) == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_NSPACE, arg + 7, PMIX_STRING);
        } else if (strncmp(arg, "uri=", 4) == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_URI, arg + 4, PMIX_STRING);
        } else if (strncmp(arg, "file=", 5) == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_TOOL_ATTACHMENT_FILE, arg + 5, PMIX_STRING);
        } else if (strncmp(arg, "tmpdir=", 7) == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_SERVER_TMPDIR, arg + 7, PMIX_STRING);
        } else if (strncmp(arg, "systmpdir=", 10) == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_SYSTEM_TMPDIR, arg + 10, PMIX_STRING);
        } else if (strncmp(arg, "retries=", 8) == 0) {
            uint32_t v = (uint32_t)atoi(arg + 8);
            PMIX_INFO_LOAD(&info[n++], PMIX_CONNECT_MAX_RETRIES, &v, PMIX_UINT32);
        } else if (strncmp(arg, "delay=", 6) == 0) {
            uint32_t v = (uint32_t)atoi(arg + 6);
            PMIX_INFO_LOAD(&info[n++], PMIX_CONNECT_RETRY_DELAY, &v, PMIX_UINT32);
        } else {
            fprintf(stderr, "rdv_tool: unknown argument %s\n", arg);
            return 2;
        }
    }
    pmix_proc_t me;
    PMIX_PROC_CONSTRUCT(&me);
    pmix_status_t rc = PMIx_tool_init(&me, info, n);
    printf("rdv_tool init %s %s\n", PMIx_Error_string(rc), me.nspace[0] != '\0' ? me.nspace : "-");
    if (rc == PMIX_SUCCESS) PMIx_tool_finalize();
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    return 0;
}
