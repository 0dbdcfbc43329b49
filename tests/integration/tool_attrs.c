/* PMIX_QUERY_ATTRIBUTE_SUPPORT (docs/tools.md, "Attribute support"):
 *
 *   tool_attrs PMIXRUN_PID
 * 1. before any init: the client level of PMIx_Get is answered in the
 *    caller's thread (PMIX_TIMEOUT, "pmix.timeout", PMIX_INT);
 * 2. a tool connected to pmixrun by its pid asks the client level of
 *    PMIx_Get, the whole tool level, the server's function list, and the host's
 *    level and functions: pmixrun registered (PMIx_Register_attributes) spawn
 *    (PMIX_WDIR) and tool_connected (PMIX_TOOL_NSPACE), reported under
 *    PMIx_Spawn and PMIx_tool_init, and its functions include PMIx_Spawn and
 *    PMIx_Query_info; every attribute the library lists is one the standard
 *    defines (a known type);
 * 3. no level qualifier: PMIX_ERR_NOT_FOUND;
 * 4. an unconnected tool (PMIX_TOOL_DO_NOT_CONNECT) gets the tool level.
 * Prints "tool_attrs ok". */
#include <pmix_tool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, pmix_status_t rc) {
    printf("tool_attrs FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

static const pmix_info_t *find(const pmix_info_t *a, size_t n, const char *key) {
    for (size_t i = 0; i < n; ++i)
        if (PMIX_CHECK_KEY(&a[i], key)) return &a[i];
    return NULL;
}

static const pmix_info_t *array_of(const pmix_info_t *i, size_t *n) {
    if (i == NULL || i->value.type != PMIX_DATA_ARRAY || i->value.data.darray == NULL ||
        i->value.data.darray->type != PMIX_INFO)
        return NULL;
    *n = i->value.data.darray->size;
    return (const pmix_info_t *)i->value.data.darray->array;
}

/* The regattr `name` of `function` in a level entry; checks every regattr of
 * the level has a type (unknown: PMIX_UNDEF) when `all_known`. */
static const pmix_regattr_t *regattr(const pmix_info_t *level, const char *function,
                                     const char *name, int all_known) {
    size_t nf = 0;
    const pmix_info_t *fns = array_of(level, &nf);
    if (fns == NULL) fail("a level is not an array of functions", PMIX_ERROR);
    const pmix_regattr_t *hit = NULL;
    for (size_t f = 0; f < nf; ++f) {
        if (fns[f].value.type != PMIX_DATA_ARRAY || fns[f].value.data.darray->type != PMIX_REGATTR)
            fail("a function's entry is not an array of REGATTR", PMIX_ERROR);
        const pmix_regattr_t *r = (const pmix_regattr_t *)fns[f].value.data.darray->array;
        for (size_t k = 0; k < fns[f].value.data.darray->size; ++k) {
            /* Not the standard's: no type and no description (a standard
             * attribute of varying type, PMIX_DEBUG_STOP_IN_APP, has one). */
            const int described = r[k].description != NULL && r[k].description[0] != NULL &&
                                  r[k].description[0][0] != '\0';
            if (all_known && r[k].type == PMIX_UNDEF && !described) {
                printf("tool_attrs FAILED: %s of %s is not a standard attribute\n", r[k].name,
                       fns[f].key);
                exit(1);
            }
            if (PMIX_CHECK_KEY(&fns[f], function) && strcmp(r[k].name, name) == 0) hit = &r[k];
        }
    }
    return hit;
}

static pmix_status_t ask(pmix_info_t *quals, size_t nquals, pmix_info_t **results, size_t *nresults,
                         const pmix_info_t **support, size_t *nsupport) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_ATTRIBUTE_SUPPORT);
    q.qualifiers = quals;
    q.nqual = nquals;
    rc = PMIx_Query_info(&q, 1, results, nresults);
    q.qualifiers = NULL;
    q.nqual = 0;
    PMIX_QUERY_DESTRUCT(&q);
    *support = NULL;
    *nsupport = 0;
    if (rc == PMIX_SUCCESS && *nresults == 1) {
        size_t n = 0;
        const pmix_info_t *r = array_of(&(*results)[0], &n);
        if (r != NULL) *support = array_of(find(r, n, PMIX_QUERY_ATTRIBUTE_SUPPORT), nsupport);
    }
    return rc;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2) return 2;
    pmix_info_t *results;
    size_t nresults, n;
    const pmix_info_t *s;
    bool yes = true;

    /* 1. before init */
    pmix_info_t q1[1];
    PMIX_INFO_LOAD(&q1[0], PMIX_CLIENT_ATTRIBUTES, "PMIx_Get", PMIX_STRING);
    pmix_status_t rc = ask(q1, 1, &results, &nresults, &s, &n);
    if (rc != PMIX_SUCCESS || s == NULL || n != 1) fail("client level before init", rc);
    const pmix_regattr_t *t =
        regattr(find(s, n, PMIX_CLIENT_ATTRIBUTES), "PMIx_Get", "PMIX_TIMEOUT", 1);
    if (t == NULL || strcmp(t->string, PMIX_TIMEOUT) != 0 || t->type != PMIX_INT)
        fail("PMIx_Get's PMIX_TIMEOUT before init", PMIX_ERROR);
    PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_DESTRUCT(&q1[0]);

    /* 2. connected to pmixrun */
    pmix_info_t info;
    pid_t pid = (pid_t)atoi(argv[1]);
    PMIX_INFO_LOAD(&info, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    pmix_proc_t me;
    rc = PMIx_tool_init(&me, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init", rc);
    pmix_info_t q2[5];
    PMIX_INFO_LOAD(&q2[0], PMIX_CLIENT_ATTRIBUTES, "PMIx_Get", PMIX_STRING);
    PMIX_INFO_LOAD(&q2[1], PMIX_TOOL_ATTRIBUTES, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&q2[2], PMIX_SERVER_FUNCTIONS, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&q2[3], PMIX_HOST_ATTRIBUTES, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&q2[4], PMIX_HOST_FUNCTIONS, &yes, PMIX_BOOL);
    rc = ask(q2, 5, &results, &nresults, &s, &n);
    if (rc != PMIX_SUCCESS || s == NULL || n != 5) {
        printf("tool_attrs: %zu entries\n", n);
        fail("five levels from a connected tool", rc);
    }
    if (regattr(find(s, n, PMIX_CLIENT_ATTRIBUTES), "PMIx_Get", "PMIX_IMMEDIATE", 1) == NULL)
        fail("PMIx_Get's PMIX_IMMEDIATE", PMIX_ERROR);
    t = regattr(find(s, n, PMIX_TOOL_ATTRIBUTES), "PMIx_tool_init", "PMIX_CONNECT_TO_SYSTEM", 1);
    if (t == NULL || strcmp(t->string, PMIX_CONNECT_TO_SYSTEM) != 0)
        fail("PMIx_tool_init's PMIX_CONNECT_TO_SYSTEM", PMIX_ERROR);
    const pmix_info_t *sf = find(s, n, PMIX_SERVER_FUNCTIONS);
    if (sf == NULL || sf->value.type != PMIX_STRING ||
        strstr(sf->value.data.string, "PMIx_server_init") == NULL)
        fail("server functions", PMIX_ERROR);
    const pmix_info_t *host = find(s, n, PMIX_HOST_ATTRIBUTES);
    t = regattr(host, "PMIx_Spawn", "PMIX_WDIR", 1);
    if (t == NULL || strcmp(t->string, PMIX_WDIR) != 0 || t->type != PMIX_STRING)
        fail("pmixrun's PMIx_Spawn PMIX_WDIR", PMIX_ERROR);
    if (regattr(host, "PMIx_tool_init", "PMIX_TOOL_NSPACE", 1) == NULL)
        fail("pmixrun's PMIx_tool_init PMIX_TOOL_NSPACE", PMIX_ERROR);
    const pmix_info_t *hf = find(s, n, PMIX_HOST_FUNCTIONS);
    if (hf == NULL || hf->value.type != PMIX_STRING ||
        strstr(hf->value.data.string, "PMIx_Spawn") == NULL ||
        strstr(hf->value.data.string, "PMIx_Query_info") == NULL)
        fail("host functions", PMIX_ERROR);
    PMIX_INFO_FREE(results, nresults);
    for (int i = 0; i < 5; ++i) PMIX_INFO_DESTRUCT(&q2[i]);

    /* 3. no level asked */
    rc = ask(NULL, 0, &results, &nresults, &s, &n);
    if (rc != PMIX_ERR_NOT_FOUND) fail("no level qualifier", rc);
    if (PMIx_tool_finalize() != PMIX_SUCCESS) fail("PMIx_tool_finalize", PMIX_ERROR);

    /* 4. unconnected */
    PMIX_INFO_LOAD(&info, PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
    rc = PMIx_tool_init(&me, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init unconnected", rc);
    pmix_info_t q4[1];
    PMIX_INFO_LOAD(&q4[0], PMIX_TOOL_FUNCTIONS, &yes, PMIX_BOOL);
    rc = ask(q4, 1, &results, &nresults, &s, &n);
    const pmix_info_t *tf = s != NULL ? find(s, n, PMIX_TOOL_FUNCTIONS) : NULL;
    if (rc != PMIX_SUCCESS || tf == NULL || tf->value.type != PMIX_STRING ||
        strstr(tf->value.data.string, "PMIx_tool_attach_to_server") == NULL)
        fail("tool functions, unconnected", rc);
    PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_DESTRUCT(&q4[0]);
    PMIx_tool_finalize();
    printf("tool_attrs ok\n");
    return 0;
}
