/* A debugger daemon a tool spawns next to its target (tool_debug.c):
 * reads PMIX_DEBUG_TARGET from its job data, asks the target's proc table
 * and prints "daemon rank N target NS procs M". */
#include <pmix.h>

#include <stdio.h>
#include <string.h>

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("daemon FAILED: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&wild, PMIX_DEBUG_TARGET, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v->type != PMIX_PROC) {
        printf("daemon FAILED: PMIX_DEBUG_TARGET: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t target = *v->data.proc;
    PMIX_VALUE_RELEASE(v);
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    PMIX_ARGV_APPEND(rc, q.keys, PMIX_QUERY_PROC_TABLE);
    PMIX_INFO_CREATE(q.qualifiers, 1);
    q.nqual = 1;
    PMIX_INFO_LOAD(&q.qualifiers[0], PMIX_NSPACE, target.nspace, PMIX_STRING);
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    rc = PMIx_Query_info(&q, 1, &results, &nresults);
    PMIX_QUERY_DESTRUCT(&q);
    size_t procs = 0;
    if (rc == PMIX_SUCCESS && nresults == 1) {
        const pmix_data_array_t *d = results[0].value.data.darray;
        const pmix_info_t *a = (const pmix_info_t *)d->array;
        for (size_t i = 0; i < d->size; ++i)
            if (PMIX_CHECK_KEY(&a[i], PMIX_QUERY_PROC_TABLE)) procs = a[i].value.data.darray->size;
    }
    if (results != NULL) PMIX_INFO_FREE(results, nresults);
    printf("daemon rank %u target %s procs %zu\n", me.rank, target.nspace, procs);
    PMIx_Finalize(NULL, 0);
    return 0;
}
