/* A tool outside a 2-rank pmixrun job (started by tool_target.c) that asks
 * the query keys of docs/tools.md, "Queries":
 *
 *   tool_query PMIXRUN_PID JOB_NSPACE TARGET_PROGRAM
 * PMIX_QUERY_PROC_TABLE / _LOCAL_PROC_TABLE (every field: proc, hostname,
 * executable, pid, state, exit code), PMIX_QUERY_JOB_STATUS,
 * PMIX_QUERY_SPAWN_SUPPORT, PMIX_QUERY_NAMESPACE_INFO, a query mixing known
 * and unknown keys (PMIX_ERR_PARTIAL_SUCCESS) and one of unknown keys only
 * (PMIX_ERR_NOT_FOUND); then spawns "sh -c 'exit 0'" and waits (bounded) for
 * its proc table to show it terminated with exit code 0. Prints
 * "tool_query ok". */
#include <pmix_tool.h>

#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fail(const char *what, pmix_status_t rc) {
    printf("tool_query FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

/* One query of `nkeys` keys with a PMIX_NSPACE qualifier (if ns). Returns the
 * status; *answers points into *results (one PMIX_QUERY_RESULTS entry). */
static pmix_status_t ask(const char **keys, size_t nkeys, const char *ns, pmix_info_t **results,
                         size_t *nresults, const pmix_info_t **answers, size_t *nanswers) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    for (size_t k = 0; k < nkeys; ++k) PMIX_ARGV_APPEND(rc, q.keys, keys[k]);
    if (ns != NULL) {
        PMIX_INFO_CREATE(q.qualifiers, 1);
        q.nqual = 1;
        PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, ns, PMIX_STRING);
    }
    rc = PMIx_Query_info(&q, 1, results, nresults);
    PMIX_QUERY_DESTRUCT(&q);
    *answers = NULL;
    *nanswers = 0;
    if ((rc == PMIX_SUCCESS || rc == PMIX_ERR_PARTIAL_SUCCESS) && *nresults == 1 &&
        PMIX_CHECK_KEY(&(*results)[0], PMIX_QUERY_RESULTS)) {
        const pmix_data_array_t *d = (*results)[0].value.data.darray;
        *answers = (const pmix_info_t *)d->array;
        *nanswers = d->size;
    }
    return rc;
}

static const pmix_info_t *find(const pmix_info_t *a, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i)
        if (PMIX_CHECK_KEY(&a[i], key)) return &a[i];
    return NULL;
}

/* Checks a proc table of `ns` with `size` entries; returns entry `rank`. */
static pmix_proc_info_t check_table(const pmix_info_t *entry, const char *ns, size_t size,
                                    const char *what) {
    if (entry == NULL || entry->value.type != PMIX_DATA_ARRAY ||
        entry->value.data.darray->type != PMIX_PROC_INFO || entry->value.data.darray->size != size)
        fail(what, PMIX_ERR_BAD_PARAM);
    const pmix_proc_info_t *t = (const pmix_proc_info_t *)entry->value.data.darray->array;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    for (size_t i = 0; i < size; ++i) {
        if (strcmp(t[i].proc.nspace, ns) != 0 || t[i].proc.rank != i || t[i].hostname == NULL ||
            strcmp(t[i].hostname, host) != 0 || t[i].executable_name == NULL || t[i].pid <= 0) {
            printf("tool_query FAILED: %s: entry %zu: %s:%u host %s exe %s pid %d\n", what, i,
                   t[i].proc.nspace, t[i].proc.rank, t[i].hostname ? t[i].hostname : "(null)",
                   t[i].executable_name ? t[i].executable_name : "(null)", (int)t[i].pid);
            exit(1);
        }
    }
    return t[0];
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 4) return 2;
    const char *ns = argv[2];
    char *target_copy = strdup(argv[3]);
    const char *target_base = basename(target_copy);
    pmix_info_t info, launch;
    PMIX_INFO_CONSTRUCT(&info);
    pid_t pid = (pid_t)atoi(argv[1]);
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    bool launcher = true; /* it spawns jobs */
    PMIX_INFO_LOAD(&launch, PMIX_LAUNCHER, &launcher, PMIX_BOOL);
    pmix_info_t init_info[2] = {info, launch};
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, init_info, 2);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init", rc);

    pmix_info_t *results;
    size_t nresults, n;
    const pmix_info_t *a;
    const char *tables[] = {PMIX_QUERY_PROC_TABLE, PMIX_QUERY_LOCAL_PROC_TABLE,
                            PMIX_QUERY_JOB_STATUS, PMIX_QUERY_SPAWN_SUPPORT,
                            PMIX_QUERY_NAMESPACE_INFO};
    rc = ask(tables, 5, ns, &results, &nresults, &a, &n);
    /* The qualifiers come back first (PMIX_QUERY_QUALIFIERS), then the five answers. */
    if (rc != PMIX_SUCCESS || n != 6 || !PMIX_CHECK_KEY(&a[0], PMIX_QUERY_QUALIFIERS))
        fail("proc tables, job status, spawn support", rc);
    for (int k = 0; k < 2; ++k) {
        pmix_proc_info_t first = check_table(find(a, n, tables[k]), ns, 2, tables[k]);
        if (strcmp(basename(first.executable_name), target_base) != 0 ||
            first.state != PMIX_PROC_STATE_RUNNING || first.exit_code != 0)
            fail("rank 0's executable/state/exit code", PMIX_ERROR);
    }
    const pmix_info_t *js = find(a, n, PMIX_QUERY_JOB_STATUS);
    if (js == NULL || js->value.type != PMIX_JOB_STATE ||
        js->value.data.jstate != PMIX_JOB_STATE_RUNNING)
        fail("job status", PMIX_ERROR);
    const pmix_info_t *ss = find(a, n, PMIX_QUERY_SPAWN_SUPPORT);
    if (ss == NULL || ss->value.type != PMIX_STRING ||
        strstr(ss->value.data.string, PMIX_WDIR) == NULL)
        fail("spawn support", PMIX_ERROR);
    const pmix_info_t *ni = find(a, n, PMIX_QUERY_NAMESPACE_INFO);
    if (ni == NULL || ni->value.type != PMIX_DATA_ARRAY || ni->value.data.darray->size != 1)
        fail("namespace info of one nspace", PMIX_ERROR);
    PMIX_INFO_FREE(results, nresults);

    /* Memory usage of the job (pmixrun's upcall), averaged. */
    {
        pmix_query_t mq;
        PMIX_QUERY_CONSTRUCT(&mq);
        PMIX_ARGV_APPEND(rc, mq.keys, PMIX_QUERY_MEMORY_USAGE);
        PMIX_INFO_CREATE(mq.qualifiers, 3);
        mq.nqual = 3;
        bool yes = true;
        PMIX_INFO_LOAD(&mq.qualifiers[0], PMIX_NSPACE, ns, PMIX_STRING);
        PMIX_INFO_LOAD(&mq.qualifiers[1], PMIX_QUERY_REPORT_AVG, &yes, PMIX_BOOL);
        PMIX_INFO_LOAD(&mq.qualifiers[2], PMIX_QUERY_LOCAL_ONLY, &yes, PMIX_BOOL);
        rc = PMIx_Query_info(&mq, 1, &results, &nresults);
        PMIX_QUERY_DESTRUCT(&mq);
        if (rc != PMIX_SUCCESS) fail("PMIX_QUERY_MEMORY_USAGE", rc);
        const pmix_data_array_t *d = results[0].value.data.darray;
        const pmix_info_t *mem =
            find((const pmix_info_t *)d->array, d->size, PMIX_QUERY_MEMORY_USAGE);
        if (mem == NULL || mem->value.type != PMIX_DATA_ARRAY) fail("memory answer", PMIX_ERROR);
        const pmix_data_array_t *f = mem->value.data.darray;
        const pmix_info_t *dm = find((const pmix_info_t *)f->array, f->size, PMIX_DAEMON_MEMORY);
        const pmix_info_t *cm =
            find((const pmix_info_t *)f->array, f->size, PMIX_CLIENT_AVG_MEMORY);
        if (dm == NULL || cm == NULL || dm->value.type != PMIX_FLOAT ||
            cm->value.type != PMIX_FLOAT || !(dm->value.data.fval > 0) ||
            !(cm->value.data.fval > 0))
            fail("daemon / client memory", PMIX_ERROR);
        if (find((const pmix_info_t *)f->array, f->size, PMIX_QUERY_REPORT_MINMAX) != NULL)
            fail("a minimum and maximum nobody asked for", PMIX_ERROR);
        PMIX_INFO_FREE(results, nresults);

        /* PMIX_QUERY_REPORT_MINMAX: an entry of that key, a DATA_ARRAY of two
         * FLOATs, the smallest and largest process, around the average. */
        PMIX_QUERY_CONSTRUCT(&mq);
        PMIX_ARGV_APPEND(rc, mq.keys, PMIX_QUERY_MEMORY_USAGE);
        PMIX_INFO_CREATE(mq.qualifiers, 2);
        mq.nqual = 2;
        PMIX_INFO_LOAD(&mq.qualifiers[0], PMIX_NSPACE, ns, PMIX_STRING);
        PMIX_INFO_LOAD(&mq.qualifiers[1], PMIX_QUERY_REPORT_MINMAX, &yes, PMIX_BOOL);
        rc = PMIx_Query_info(&mq, 1, &results, &nresults);
        PMIX_QUERY_DESTRUCT(&mq);
        if (rc != PMIX_SUCCESS) fail("PMIX_QUERY_MEMORY_USAGE with PMIX_QUERY_REPORT_MINMAX", rc);
        d = results[0].value.data.darray;
        mem = find((const pmix_info_t *)d->array, d->size, PMIX_QUERY_MEMORY_USAGE);
        if (mem == NULL || mem->value.type != PMIX_DATA_ARRAY) fail("minmax answer", PMIX_ERROR);
        f = mem->value.data.darray;
        cm = find((const pmix_info_t *)f->array, f->size, PMIX_CLIENT_AVG_MEMORY);
        const pmix_info_t *mm =
            find((const pmix_info_t *)f->array, f->size, PMIX_QUERY_REPORT_MINMAX);
        if (cm == NULL || cm->value.type != PMIX_FLOAT || mm == NULL ||
            mm->value.type != PMIX_DATA_ARRAY || mm->value.data.darray->type != PMIX_FLOAT ||
            mm->value.data.darray->size != 2)
            fail("the minimum and maximum entry", PMIX_ERROR);
        const float *range = (const float *)mm->value.data.darray->array;
        if (!(range[0] > 0) || range[0] > cm->value.data.fval || cm->value.data.fval > range[1])
            fail("minimum <= average <= maximum", PMIX_ERROR);
        printf("tool_query: memory min %.1f avg %.1f max %.1f MB\n", range[0], cm->value.data.fval,
               range[1]);
        PMIX_INFO_FREE(results, nresults);
    }

    const char *mixed[] = {PMIX_QUERY_NAMESPACES, "pmixpp.test.nobody.knows"};
    rc = ask(mixed, 2, NULL, &results, &nresults, &a, &n);
    if (rc != PMIX_ERR_PARTIAL_SUCCESS || n != 1 || find(a, n, PMIX_QUERY_NAMESPACES) == NULL)
        fail("partial success", rc);
    PMIX_INFO_FREE(results, nresults);
    rc = ask(mixed + 1, 1, NULL, &results, &nresults, &a, &n);
    if (rc != PMIX_ERR_NOT_FOUND) fail("unknown key only", rc);
    if (results != NULL) PMIX_INFO_FREE(results, nresults);

    /* A job that ends: its table shows it terminated, exit code 0. */
    pmix_app_t app;
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup("sh");
    PMIX_ARGV_APPEND(rc, app.argv, "sh");
    PMIX_ARGV_APPEND(rc, app.argv, "-c");
    PMIX_ARGV_APPEND(rc, app.argv, "exit 0");
    app.maxprocs = 1;
    pmix_nspace_t child;
    rc = PMIx_Spawn(NULL, 0, &app, 1, child);
    PMIX_APP_DESTRUCT(&app);
    if (rc != PMIX_SUCCESS) fail("PMIx_Spawn", rc);
    int done = 0;
    for (int i = 0; i < 600 && !done; ++i) { /* the bound: 30 s */
        const char *keys[] = {PMIX_QUERY_PROC_TABLE, PMIX_QUERY_JOB_STATUS};
        rc = ask(keys, 2, child, &results, &nresults, &a, &n);
        if (rc != PMIX_SUCCESS) fail("child's proc table", rc);
        pmix_proc_info_t p =
            check_table(find(a, n, PMIX_QUERY_PROC_TABLE), child, 1, "child table");
        const pmix_info_t *st = find(a, n, PMIX_QUERY_JOB_STATUS);
        if (p.state == PMIX_PROC_STATE_TERMINATED) {
            if (p.exit_code != 0 || strcmp(basename(p.executable_name), "sh") != 0 ||
                st->value.data.jstate != PMIX_JOB_STATE_TERMINATED)
                fail("the ended child's entry", PMIX_ERROR);
            done = 1;
        }
        PMIX_INFO_FREE(results, nresults);
        if (!done) usleep(50000);
    }
    if (!done) fail("the child never showed as terminated", PMIX_ERR_TIMEOUT);
    if ((rc = PMIx_tool_finalize()) != PMIX_SUCCESS) fail("PMIx_tool_finalize", rc);
    free(target_copy);
    printf("tool_query ok\n");
    return 0;
}
