// clang-format off
/* A tool for the rendezvous and connection tests (tool_rendezvous.py).
 * Arguments, any order, each one PMIx_tool_init attribute:
 *   sys | sysfirst | optional      PMIX_CONNECT_TO_SYSTEM / _SYSTEM_FIRST / PMIX_TOOL_CONNECT_OPTIONAL
 *   pid=N | nspace=NS | uri=U | file=F
 *                                  PMIX_SERVER_PIDINFO / _NSPACE / _URI / PMIX_TOOL_ATTACHMENT_FILE
 *   tmpdir=D | systmpdir=D         PMIX_SERVER_TMPDIR / PMIX_SYSTEM_TMPDIR
 *   retries=N | delay=S            PMIX_CONNECT_MAX_RETRIES / _RETRY_DELAY
 *   servers                        once connected, PMIx_Query_info(PMIX_QUERY_AVAIL_SERVERS)
 *                                  with the tmpdirs as qualifiers; prints
 *                                  "rdv_tool servers <status> <nspace>[*],..." (*: system server)
 * Prints "rdv_tool init <status name> <own nspace or ->" and exits 0 (the
 * driver judges the status). */
// clang-format on
#include <pmix_tool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_info_t info[12];
    size_t n = 0;
    bool yes = true;
    int servers = 0;
    pmix_info_t dirs[2];
    size_t ndirs = 0;
    for (int a = 1; a < argc; ++a) {
        const char *arg = argv[a];
        if (n == 12) return 2;
        PMIX_INFO_CONSTRUCT(&info[n]);
        if (strcmp(arg, "servers") == 0) {
            servers = 1;
        } else if (strcmp(arg, "sys") == 0) {
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
            PMIX_INFO_CONSTRUCT(&dirs[ndirs]);
            PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_SERVER_TMPDIR, arg + 7, PMIX_STRING);
        } else if (strncmp(arg, "systmpdir=", 10) == 0) {
            PMIX_INFO_LOAD(&info[n++], PMIX_SYSTEM_TMPDIR, arg + 10, PMIX_STRING);
            PMIX_INFO_CONSTRUCT(&dirs[ndirs]);
            PMIX_INFO_LOAD(&dirs[ndirs++], PMIX_SYSTEM_TMPDIR, arg + 10, PMIX_STRING);
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
    if (rc == PMIX_SUCCESS && servers) {
        pmix_query_t q;
        PMIX_QUERY_CONSTRUCT(&q);
        pmix_status_t qrc;
        PMIX_ARGV_APPEND(qrc, q.keys, PMIX_QUERY_AVAIL_SERVERS);
        q.qualifiers = dirs;
        q.nqual = ndirs;
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        qrc = PMIx_Query_info(&q, 1, &results, &nresults);
        q.qualifiers = NULL;
        q.nqual = 0;
        PMIX_QUERY_DESTRUCT(&q);
        char list[4096] = "";
        if (qrc == PMIX_SUCCESS && nresults == 1) {
            const pmix_data_array_t *d = results[0].value.data.darray;
            const pmix_info_t *a = (const pmix_info_t *)d->array;
            for (size_t k = 0; k < d->size; ++k) {
                if (!PMIX_CHECK_KEY(&a[k], PMIX_QUERY_AVAIL_SERVERS)) continue;
                const pmix_data_array_t *s = a[k].value.data.darray;
                const pmix_info_t *srv = (const pmix_info_t *)s->array;
                for (size_t j = 0; s != NULL && j < s->size; ++j) {
                    const pmix_data_array_t *f = srv[j].value.data.darray;
                    const pmix_info_t *fields = (const pmix_info_t *)f->array;
                    const char *ns = NULL;
                    int sys = 0;
                    for (size_t m = 0; m < f->size; ++m) {
                        if (PMIX_CHECK_KEY(&fields[m], PMIX_NSPACE))
                            ns = fields[m].value.data.string;
                        if (PMIX_CHECK_KEY(&fields[m], PMIX_SERVER_SYSTEM_SUPPORT))
                            sys = fields[m].value.data.flag;
                    }
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s%s",
                             list[0] ? "," : "", ns ? ns : "?", sys ? "*" : "");
                }
            }
        }
        printf("rdv_tool servers %s %s\n", PMIx_Error_string(qrc), list);
        if (results != NULL) PMIX_INFO_FREE(results, nresults);
    }
    for (size_t i = 0; i < ndirs; ++i) PMIX_INFO_DESTRUCT(&dirs[i]);
    if (rc == PMIX_SUCCESS) PMIx_tool_finalize();
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    return 0;
}
