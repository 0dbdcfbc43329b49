/* PMIx_Register_attributes in a host embedding the server (docs/tools.md,
 * "Attribute support"), and the host querying its own attribute support:
 * - before PMIx_server_init: PMIX_ERR_INIT;
 * - "spawn" with a name ("PMIX_WDIR"), a key ("pmix.timeout") and a host's
 *   own attribute ("acme.fast"): success; "spawn" again, or "PMIx_Spawn"
 *   (the same function): PMIX_ERR_REPEAT_ATTR_REGISTRATION; "no_such_upcall":
 *   PMIX_ERR_BAD_PARAM; a NULL function: PMIX_ERR_BAD_PARAM;
 * - the host's PMIx_Query_info of PMIX_HOST_ATTRIBUTES = "PMIx_Spawn" and
 *   PMIX_HOST_FUNCTIONS: PMIx_Spawn with PMIX_WDIR (PMIX_STRING), PMIX_TIMEOUT
 *   (found by its key: name PMIX_TIMEOUT) and acme.fast (PMIX_UNDEF); the
 *   functions are those of the upcalls it provides (PMIx_Spawn, PMIx_Log),
 *   not one it lacks (PMIx_Job_control).
 * Prints "attrs_host ok". */
#include <pmix.h>
#include <pmix_server.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, what)                            \
    do {                                             \
        if (!(cond)) {                               \
            printf("attrs_host FAILED: %s\n", what); \
            fflush(stdout);                          \
            exit(1);                                 \
        }                                            \
    } while (0)

static pmix_status_t spawn_fn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                              void *cbdata) {
    (void)proc, (void)job_info, (void)ninfo, (void)apps, (void)napps, (void)cbfunc, (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

static void log_fn(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
                   const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                   void *cbdata) {
    (void)client, (void)data, (void)ndata, (void)directives, (void)ndirs;
    if (cbfunc != NULL) cbfunc(PMIX_ERR_NOT_SUPPORTED, cbdata);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    char *spawn_attrs[] = {"PMIX_WDIR", "pmix.timeout", "acme.fast", NULL};
    CHECK(PMIx_Register_attributes("spawn", spawn_attrs) == PMIX_ERR_INIT, "before init");
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.spawn = spawn_fn;
    module.log = log_fn;
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    CHECK(PMIx_Register_attributes("spawn", spawn_attrs) == PMIX_SUCCESS, "spawn");
    CHECK(PMIx_Register_attributes("spawn", spawn_attrs) == PMIX_ERR_REPEAT_ATTR_REGISTRATION,
          "spawn again");
    CHECK(PMIx_Register_attributes("PMIx_Spawn", spawn_attrs) == PMIX_ERR_REPEAT_ATTR_REGISTRATION,
          "PMIx_Spawn after spawn");
    CHECK(PMIx_Register_attributes("no_such_upcall", spawn_attrs) == PMIX_ERR_BAD_PARAM,
          "unknown upcall");
    CHECK(PMIx_Register_attributes(NULL, spawn_attrs) == PMIX_ERR_BAD_PARAM, "NULL function");

    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc;
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_ATTRIBUTE_SUPPORT);
    bool yes = true;
    PMIX_INFO_CREATE(q.qualifiers, 2);
    q.nqual = 2;
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_HOST_ATTRIBUTES, "PMIx_Spawn", PMIX_STRING);
    PMIX_INFO_LOAD(&q.qualifiers[1], PMIX_HOST_FUNCTIONS, &yes, PMIX_BOOL);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    PMIX_QUERY_DESTRUCT(&q);
    CHECK(rc == PMIX_SUCCESS && nresults == 1, "the host's own query");
    const pmix_data_array_t *r = results[0].value.data.darray;
    const pmix_info_t *ri = (const pmix_info_t *)r->array;
    CHECK(r->size == 2 && PMIX_CHECK_KEY(&ri[1], PMIX_QUERY_ATTRIBUTE_SUPPORT),
          "qualifiers then the answer");
    const pmix_data_array_t *levels = ri[1].value.data.darray;
    const pmix_info_t *lv = (const pmix_info_t *)levels->array;
    CHECK(levels->size == 2 && PMIX_CHECK_KEY(&lv[0], PMIX_HOST_ATTRIBUTES) &&
              PMIX_CHECK_KEY(&lv[1], PMIX_HOST_FUNCTIONS),
          "host attributes and functions");
    const pmix_data_array_t *fns = lv[0].value.data.darray;
    const pmix_info_t *fn = (const pmix_info_t *)fns->array;
    CHECK(fns->size == 1 && PMIX_CHECK_KEY(&fn[0], "PMIx_Spawn") &&
              fn[0].value.data.darray->type == PMIX_REGATTR && fn[0].value.data.darray->size == 3,
          "PMIx_Spawn's three attributes");
    const pmix_regattr_t *a = (const pmix_regattr_t *)fn[0].value.data.darray->array;
    CHECK(strcmp(a[0].name, "PMIX_WDIR") == 0 && strcmp(a[0].string, PMIX_WDIR) == 0 &&
              a[0].type == PMIX_STRING,
          "PMIX_WDIR by name");
    CHECK(strcmp(a[1].name, "PMIX_TIMEOUT") == 0 && a[1].type == PMIX_INT, "PMIX_TIMEOUT by key");
    CHECK(strcmp(a[2].name, "acme.fast") == 0 && a[2].type == PMIX_UNDEF, "the host's own");
    const char *list = lv[1].value.data.string;
    CHECK(lv[1].value.type == PMIX_STRING && strstr(list, "PMIx_Spawn") != NULL &&
              strstr(list, "PMIx_Log") != NULL && strstr(list, "PMIx_Job_control") == NULL,
          "the host's functions");
    PMIX_INFO_FREE(results, nresults);
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS, "server finalize");
    printf("attrs_host ok\n");
    return 0;
}
