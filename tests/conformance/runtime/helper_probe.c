/* helper_probe: the behaviour of the library functions that the 4.2 header
 * macros expand into and that bindings call without initializing PMIx (the
 * PMIX_INFO_* / PMIX_VALUE_* macros, the info-list helpers, the *_string
 * functions, Open MPI's version check).
 *
 * The runtime_probe test (probe_compare.py) builds this one file twice: against
 * the OpenPMIx 4.2.2 headers, linked to Debian's OpenPMIx libpmix.so, and
 * against our headers, linked to our libpmix.so.2. It runs both and requires
 * the same output. argv[1] names the directory the library must be loaded
 * from; the probe exits 2 if the loader took another one, so the comparison
 * is never ours against ours.
 *
 * Output: one "<what>: <observed>" line per behaviour; nothing in it may
 * depend on addresses, time or the product's name.
 */
#define _GNU_SOURCE /* dladdr; the 4.2.2 headers' inline helpers call strdup */
#include <dlfcn.h>
#include <limits.h>
#include <pmix.h>
#include <pmix_server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int loaded_from(const char *want_dir) {
    Dl_info where;
    if (dladdr((void *)PMIx_Get_version, &where) == 0 || where.dli_fname == NULL) {
        fprintf(stderr, "helper_probe: dladdr cannot place PMIx_Get_version\n");
        return 0;
    }
    char lib[PATH_MAX], want[PATH_MAX];
    if (realpath(where.dli_fname, lib) == NULL || realpath(want_dir, want) == NULL) {
        fprintf(stderr, "helper_probe: cannot resolve %s or %s\n", where.dli_fname, want_dir);
        return 0;
    }
    char *slash = strrchr(lib, '/');
    if (slash != NULL) {
        *slash = '\0';
    }
    if (strcmp(lib, want) != 0) {
        fprintf(stderr, "helper_probe: libpmix loaded from %s, wanted %s\n", lib, want);
        return 0;
    }
    return 1;
}

static const char *text(const char *s) {
    return s != NULL ? s : "(null)";
}

static void version(void) {
    const char *v = PMIx_Get_version();
    /* Open MPI 4.1's ext3x compares the first character with '3'. */
    printf("version string present: %s\n", v != NULL && v[0] != '\0' ? "yes" : "no");
    printf("version first character >= '3': %s\n", v != NULL && v[0] >= '3' ? "yes" : "no");
    printf("initialized before init: %d\n", (int)PMIx_Initialized());
}

static void info_macros(void) {
    pmix_info_t *info = NULL;
    PMIX_INFO_CREATE(info, 4);
    printf("info create(4): flags %u %u %u %u, array end flag %u\n", (unsigned)info[0].flags,
           (unsigned)info[1].flags, (unsigned)info[2].flags, (unsigned)info[3].flags,
           (unsigned)PMIX_INFO_ARRAY_END);
    printf("info create(4): value types %u %u\n", (unsigned)info[0].value.type,
           (unsigned)info[3].value.type);

    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, NULL, PMIX_BOOL);
    printf("info load bool NULL: key %s type %u flag %d\n", info[0].key,
           (unsigned)info[0].value.type, (int)info[0].value.data.flag);

    char word[] = "probe";
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_HDLR_NAME, word, PMIX_STRING);
    printf("info load string: type %u copied %s value %s\n", (unsigned)info[1].value.type,
           info[1].value.data.string != word ? "yes" : "no", text(info[1].value.data.string));

    uint32_t size = 7;
    PMIX_INFO_REQUIRED(&info[2]);
    PMIX_INFO_LOAD(&info[2], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    printf("info load uint32 after REQUIRED: value %u flags %u required %d\n",
           (unsigned)info[2].value.data.uint32, (unsigned)info[2].flags,
           (int)PMIX_INFO_IS_REQUIRED(&info[2]));

    pmix_info_t copy;
    PMIX_INFO_CONSTRUCT(&copy);
    pmix_status_t rc = PMIx_Info_xfer(&copy, &info[1]);
    printf("info xfer string: status %d key %s deep %s value %s flags %u\n", (int)rc, copy.key,
           copy.value.data.string != info[1].value.data.string ? "yes" : "no",
           text(copy.value.data.string), (unsigned)copy.flags);
    /* Info_xfer does not release what the target held (neither library does):
       the string copy goes first, the target is then loaded with a value that
       owns no memory, so the transfer over a loaded info leaks nothing. */
    PMIX_INFO_DESTRUCT(&copy);
    PMIX_INFO_CONSTRUCT(&copy);
    int32_t held = 5;
    PMIX_INFO_LOAD(&copy, "pmixpp.probe.held", &held, PMIX_INT32);
    rc = PMIx_Info_xfer(&copy, &info[2]);
    printf("info xfer over a loaded info: status %d type %u value %u flags %u\n", (int)rc,
           (unsigned)copy.value.type, (unsigned)copy.value.data.uint32, (unsigned)copy.flags);
    PMIX_INFO_DESTRUCT(&copy);

    PMIX_INFO_FREE(info, 4);
    printf("info free: pointer %s\n", info == NULL ? "NULL" : "kept");
}

static void value_helpers(void) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    printf("value construct: type %u\n", (unsigned)v.type);
    pmix_status_t rc = PMIx_Value_load(&v, "text", PMIX_STRING);
    printf("value load string: status %d type %u value %s\n", (int)rc, (unsigned)v.type,
           text(v.data.string));

    void *out = NULL;
    size_t sz = 0;
    rc = PMIx_Value_unload(&v, &out, &sz);
    printf("value unload string: status %d size %zu value %s copied %s\n", (int)rc, sz, text(out),
           out != v.data.string ? "yes" : "no");
    free(out);

    pmix_value_t w;
    PMIX_VALUE_CONSTRUCT(&w);
    rc = PMIx_Value_xfer(&w, &v);
    printf("value xfer string: status %d type %u compare %d\n", (int)rc, (unsigned)w.type,
           (int)PMIx_Value_compare(&v, &w));
    PMIx_Value_destruct(&w);

    PMIx_Value_destruct(&v);
    printf("value destruct string: type %u pointer %s\n", (unsigned)v.type,
           v.data.string == NULL ? "NULL" : "kept");

    /* Same-sign values: OpenPMIx 4.2.2 orders a negative int64 above a
     * positive one (it compares the bits unsigned); ours follows the sign. */
    static const int64_t numbers[][2] = {{3, 9}, {9, 3}, {9, 9}};
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; ++i) {
        PMIX_VALUE_CONSTRUCT(&v);
        PMIX_VALUE_CONSTRUCT(&w);
        PMIx_Value_load(&v, &numbers[i][0], PMIX_INT64);
        PMIx_Value_load(&w, &numbers[i][1], PMIX_INT64);
        printf("value compare int64 %lld with %lld: %d\n", (long long)numbers[i][0],
               (long long)numbers[i][1], (int)PMIx_Value_compare(&v, &w));
        PMIx_Value_destruct(&v);
        PMIx_Value_destruct(&w);
    }
}

static void info_list(void) {
    void *list = PMIx_Info_list_start();
    uint32_t n = 3;
    bool yes = true;
    pmix_status_t rc1 = PMIx_Info_list_add(list, PMIX_JOB_SIZE, &n, PMIX_UINT32);
    pmix_status_t rc2 = PMIx_Info_list_add(list, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_data_array_t array;
    memset(&array, 0, sizeof array);
    pmix_status_t rc3 = PMIx_Info_list_convert(list, &array);
    printf("info list add, add, convert: %d %d %d\n", (int)rc1, (int)rc2, (int)rc3);
    printf("info list array: type %u size %zu\n", (unsigned)array.type, array.size);
    if (rc3 == PMIX_SUCCESS && array.type == PMIX_INFO && array.size == 2) {
        pmix_info_t *items = (pmix_info_t *)array.array;
        printf("info list items: %s=%u %s=%d\n", items[0].key, (unsigned)items[0].value.data.uint32,
               items[1].key, (int)items[1].value.data.flag);
    }
    PMIx_Info_list_release(list);
    PMIx_Data_array_destruct(&array);
    printf("data array destruct: size %zu array %s\n", array.size,
           array.array == NULL ? "NULL" : "kept");
}

static void strings(void) {
    /* The codes whose text Open MPI and python3-pmix users see most; most
     * other codes read differently in ours (tests/conformance/README.md). */
    static const pmix_status_t codes[] = {
        PMIX_SUCCESS,         PMIX_ERROR,       PMIX_ERR_NOT_FOUND, PMIX_ERR_NOT_SUPPORTED,
        PMIX_ERR_BAD_PARAM,   PMIX_ERR_TIMEOUT, PMIX_ERR_INIT,      PMIX_OPERATION_SUCCEEDED,
        PMIX_ERR_PROC_ABORTED};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; ++i) {
        printf("error string %d: %s\n", (int)codes[i], text(PMIx_Error_string(codes[i])));
    }
    printf("data type string PMIX_PROC_RANK: %s\n", text(PMIx_Data_type_string(PMIX_PROC_RANK)));
    printf("data type string PMIX_STRING: %s\n", text(PMIx_Data_type_string(PMIX_STRING)));
    printf("scope string PMIX_GLOBAL: %s\n", text(PMIx_Scope_string(PMIX_GLOBAL)));
    printf("scope string PMIX_LOCAL: %s\n", text(PMIx_Scope_string(PMIX_LOCAL)));
    printf("range string PMIX_RANGE_NAMESPACE: %s\n",
           text(PMIx_Data_range_string(PMIX_RANGE_NAMESPACE)));
    printf("persistence string PMIX_PERSIST_SESSION: %s\n",
           text(PMIx_Persistence_string(PMIX_PERSIST_SESSION)));
    printf("proc state string PMIX_PROC_STATE_RUNNING: %s\n",
           text(PMIx_Proc_state_string(PMIX_PROC_STATE_RUNNING)));
}

static void server_helpers(void) {
    char *out = NULL;
    pmix_status_t rc = PMIx_generate_regex("node01,node02,node03", &out);
    printf("generate regex before server init: %s\n", rc == PMIX_SUCCESS ? "succeeds" : "fails");
    free(out);
    out = NULL;
    rc = PMIx_generate_ppn("0,1;2,3", &out);
    printf("generate ppn before server init: %s\n", rc == PMIX_SUCCESS ? "succeeds" : "fails");
    free(out);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: helper_probe <directory libpmix must be loaded from>\n");
        return 2;
    }
    if (!loaded_from(argv[1])) {
        return 2;
    }
    version();
    info_macros();
    value_helpers();
    info_list();
    strings();
    server_helpers();
    return 0;
}
