/* PMIx_Query_info of PMIX_QUERY_STABLE_ABI_VERSION /
 * PMIX_QUERY_PROVISIONAL_ABI_VERSION, answered by the library itself: a
 * blocking query made of those keys alone works before PMIx_Init, after it
 * (alone, mixed with a key the server answers, and non-blocking) and after
 * PMIx_Finalize (Chap_API_Query). Outside a job only the "before" part runs.
 * Prints "abi query ok: <when>" once per part that passed.
 * usage: abi_query_client <expected stable> <expected provisional> */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;
static const char *expect_stable, *expect_provisional;

#define EXPECT(cond, ...)                   \
    do {                                    \
        if (!(cond)) {                      \
            fprintf(stderr, "abi query: "); \
            fprintf(stderr, __VA_ARGS__);   \
            fprintf(stderr, "\n");          \
            ++failures;                     \
        }                                   \
    } while (0)

/* The value of `key` in the PMIX_QUERY_RESULTS of query `q`, or NULL. */
static const pmix_value_t *result(const pmix_info_t *res, size_t nres, size_t q, const char *key) {
    if (q >= nres || !PMIX_CHECK_KEY(&res[q], PMIX_QUERY_RESULTS) ||
        res[q].value.type != PMIX_DATA_ARRAY)
        return NULL;
    const pmix_data_array_t *da = res[q].value.data.darray;
    const pmix_info_t *arr = (const pmix_info_t *)da->array;
    for (size_t i = 0; i < da->size; ++i) {
        if (PMIX_CHECK_KEY(&arr[i], key)) return &arr[i].value;
    }
    return NULL;
}

static void check_string(const pmix_value_t *v, const char *expected, const char *what,
                         const char *when) {
    EXPECT(v != NULL, "%s: no %s in the results", when, what);
    if (v == NULL) return;
    EXPECT(
        v->type == PMIX_STRING && v->data.string != NULL && strcmp(v->data.string, expected) == 0,
        "%s: %s is '%s', expected '%s'", when, what,
        v->type == PMIX_STRING && v->data.string != NULL ? v->data.string : "(not a string)",
        expected);
}

/* Both keys in one query, and again each in a query of its own. */
static void query_abi(const char *when) {
    pmix_query_t *q = NULL;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc;
    PMIX_QUERY_CREATE(q, 3);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_STABLE_ABI_VERSION);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_PROVISIONAL_ABI_VERSION);
    PMIX_ARGV_APPEND(rc, q[1].keys, PMIX_QUERY_PROVISIONAL_ABI_VERSION);
    PMIX_ARGV_APPEND(rc, q[2].keys, PMIX_QUERY_STABLE_ABI_VERSION);
    rc = PMIx_Query_info(q, 3, &res, &nres);
    EXPECT(rc == PMIX_SUCCESS && nres == 3, "%s: Query_info: %s, %zu results", when,
           PMIx_Error_string(rc), nres);
    if (rc == PMIX_SUCCESS) {
        check_string(result(res, nres, 0, PMIX_QUERY_STABLE_ABI_VERSION), expect_stable,
                     "the stable ABI version", when);
        check_string(result(res, nres, 0, PMIX_QUERY_PROVISIONAL_ABI_VERSION), expect_provisional,
                     "the provisional ABI version", when);
        check_string(result(res, nres, 1, PMIX_QUERY_PROVISIONAL_ABI_VERSION), expect_provisional,
                     "the provisional ABI version (query 2)", when);
        check_string(result(res, nres, 2, PMIX_QUERY_STABLE_ABI_VERSION), expect_stable,
                     "the stable ABI version (query 3)", when);
    }
    if (res != NULL) PMIX_INFO_FREE(res, nres);
    PMIX_QUERY_FREE(q, 3);
}

/* A query that is not made of those keys alone still needs init. */
static void query_mixed_before_init(void) {
    pmix_query_t *q = NULL;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc;
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_STABLE_ABI_VERSION);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    rc = PMIx_Query_info(q, 1, &res, &nres);
    EXPECT(rc == PMIX_ERR_INIT && res == NULL, "before init: mixed query: %s",
           PMIx_Error_string(rc));
    PMIX_QUERY_FREE(q, 1);
}

static _Atomic int nb_done = 0; /* set last by the callback (progress thread) */
static pmix_status_t nb_status = PMIX_ERROR;
static char nb_value[64];
static void nb_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                  pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)cbdata;
    nb_status = status;
    const pmix_value_t *v = result(info, ninfo, 0, PMIX_QUERY_STABLE_ABI_VERSION);
    if (v != NULL && v->type == PMIX_STRING && v->data.string != NULL)
        snprintf(nb_value, sizeof nb_value, "%s", v->data.string);
    if (release_fn != NULL) release_fn(release_cbdata);
    nb_done = 1;
}

static void while_initialized(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    EXPECT(rc == PMIX_SUCCESS, "PMIx_Init: %s", PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS) return;
    query_abi("after init");

    /* Mixed with a key the server answers: both found. */
    pmix_query_t *q = NULL;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_NAMESPACES);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_PROVISIONAL_ABI_VERSION);
    rc = PMIx_Query_info(q, 1, &res, &nres);
    EXPECT(rc == PMIX_SUCCESS, "after init: mixed query: %s", PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS) {
        const pmix_value_t *ns = result(res, nres, 0, PMIX_QUERY_NAMESPACES);
        EXPECT(ns != NULL && ns->type == PMIX_STRING && strstr(ns->data.string, me.nspace),
               "after init: mixed query: no namespaces with %s", me.nspace);
        check_string(result(res, nres, 0, PMIX_QUERY_PROVISIONAL_ABI_VERSION), expect_provisional,
                     "the provisional ABI version", "after init (mixed)");
    }
    if (res != NULL) PMIX_INFO_FREE(res, nres);
    PMIX_QUERY_FREE(q, 1);

    /* Non-blocking. */
    PMIX_QUERY_CREATE(q, 1);
    PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_STABLE_ABI_VERSION);
    rc = PMIx_Query_info_nb(q, 1, nb_cb, NULL);
    EXPECT(rc == PMIX_SUCCESS, "after init: Query_info_nb: %s", PMIx_Error_string(rc));
    for (int i = 0; rc == PMIX_SUCCESS && i < 10000 && !nb_done; ++i) usleep(1000);
    EXPECT(nb_done && nb_status == PMIX_SUCCESS && strcmp(nb_value, expect_stable) == 0,
           "after init: Query_info_nb: done %d, %s, '%s'", nb_done, PMIx_Error_string(nb_status),
           nb_value);
    PMIX_QUERY_FREE(q, 1);

    rc = PMIx_Finalize(NULL, 0);
    EXPECT(rc == PMIX_SUCCESS, "PMIx_Finalize: %s", PMIx_Error_string(rc));
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: abi_query_client <expected stable> <expected provisional>\n");
        return 2;
    }
    expect_stable = argv[1];
    expect_provisional = argv[2];

    /* Each part runs whatever the one before gave. */
    int before = failures;
    query_abi("before init");
    query_mixed_before_init();
    EXPECT(PMIx_Initialized() == 0, "before init: a query initialized the library");
    if (failures == before) printf("abi query ok: before init\n");

    if (getenv("PMIX_NAMESPACE") == NULL) return failures == 0 ? 0 : 1; /* not in a job */
    before = failures;
    while_initialized();
    if (failures == before) printf("abi query ok: after init\n");
    before = failures;
    query_abi("after finalize");
    if (failures == before) printf("abi query ok: after finalize\n");
    return failures == 0 ? 0 : 1;
}
