/* Job info has the registered types; OPTIONAL/IMMEDIATE misses return
 * NOT_FOUND; NULL key gives a DATA_ARRAY of INFO; Get_nb works; Init/Finalize
 * nest. usage: jobinfo_client */
#include <pmix.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond, ...)                 \
    do {                                  \
        if (!(cond)) {                    \
            fprintf(stderr, "jobinfo: "); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n");        \
            ++failures;                   \
        }                                 \
    } while (0)

static void check_type(const pmix_proc_t *p, const char *key, pmix_data_type_t type) {
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(p, key, NULL, 0, &val);
    EXPECT(rc == PMIX_SUCCESS, "Get %s: %s", key, PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS) return;
    EXPECT(val->type == type, "%s has type %s, expected %s", key, PMIx_Data_type_string(val->type),
           PMIx_Data_type_string(type));
    PMIX_VALUE_RELEASE(val);
}

static _Atomic int nb_done = 0; /* set last by the callback (progress thread) */
static _Atomic pmix_status_t nb_status = PMIX_ERROR;
static _Atomic uint32_t nb_value = 0;
static void nb_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    (void)cbdata;
    nb_status = status;
    if (status == PMIX_SUCCESS && kv->type == PMIX_UINT32) nb_value = kv->data.uint32;
    nb_done = 1;
}

int main(void) {
    pmix_proc_t me, wild, again;
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "jobinfo: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    EXPECT(PMIx_Initialized() == 1, "not initialized after Init");
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    check_type(&wild, PMIX_JOB_SIZE, PMIX_UINT32);
    check_type(&wild, PMIX_UNIV_SIZE, PMIX_UINT32);
    check_type(&wild, PMIX_LOCAL_SIZE, PMIX_UINT32);
    check_type(&wild, PMIX_LOCAL_PEERS, PMIX_STRING);
    check_type(&wild, PMIX_NODE_MAP, PMIX_STRING);
    check_type(&wild, PMIX_PROC_MAP, PMIX_STRING);
    check_type(&wild, PMIX_NUM_NODES, PMIX_UINT32);
    check_type(&me, PMIX_LOCAL_RANK, PMIX_UINT16);
    check_type(&me, PMIX_NODE_RANK, PMIX_UINT16);
    check_type(&me, PMIX_HOSTNAME, PMIX_STRING);
    check_type(&me, PMIX_NODEID, PMIX_UINT32);
    check_type(&me, PMIX_APPNUM, PMIX_UINT32);
    check_type(NULL, PMIX_LOCAL_RANK, PMIX_UINT16);

    /* PMIX_NODE_LIST: the comma-delimited nodes hosting the job (one node
     * under pmixrun: this process's host), in the job realm by default and
     * with PMIX_JOB_INFO / PMIX_APP_INFO (Chap_API_Reserved_Keys). */
    rc = PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &val);
    char host[256] = "";
    if (rc == PMIX_SUCCESS) {
        snprintf(host, sizeof host, "%s", val->data.string);
        PMIX_VALUE_RELEASE(val);
    }
    const char *realms[] = {NULL, PMIX_JOB_INFO, PMIX_APP_INFO};
    for (size_t k = 0; k < sizeof realms / sizeof realms[0]; ++k) {
        pmix_info_t realm;
        bool yes = true;
        if (realms[k] != NULL) PMIX_INFO_LOAD(&realm, realms[k], &yes, PMIX_BOOL);
        rc = PMIx_Get(&wild, PMIX_NODE_LIST, realms[k] != NULL ? &realm : NULL,
                      realms[k] != NULL ? 1 : 0, &val);
        EXPECT(rc == PMIX_SUCCESS, "Get PMIX_NODE_LIST (%s): %s",
               realms[k] != NULL ? realms[k] : "no qualifier", PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS) {
            EXPECT(val->type == PMIX_STRING && strcmp(val->data.string, host) == 0,
                   "PMIX_NODE_LIST (%s) is '%s', expected '%s'",
                   realms[k] != NULL ? realms[k] : "no qualifier",
                   val->type == PMIX_STRING ? val->data.string : "?", host);
            PMIX_VALUE_RELEASE(val);
        }
        if (realms[k] != NULL) PMIX_INFO_DESTRUCT(&realm);
    }
    /* The server's identity, job realm: every PMIx server gives it. */
    check_type(&wild, PMIX_SERVER_NSPACE, PMIX_STRING);
    check_type(&wild, PMIX_SERVER_RANK, PMIX_PROC_RANK);
    /* The app realm (one app under `pmixrun -n N prog`): with PMIX_APP_INFO
     * and PMIX_APPNUM 0, and for my own app by default. */
    {
        pmix_info_t app[2];
        uint32_t zero = 0, nprocs = 0;
        PMIX_INFO_LOAD(&app[0], PMIX_APP_INFO, NULL, PMIX_BOOL);
        PMIX_INFO_LOAD(&app[1], PMIX_APPNUM, &zero, PMIX_UINT32);
        rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
        if (rc == PMIX_SUCCESS) {
            nprocs = val->data.uint32;
            PMIX_VALUE_RELEASE(val);
        }
        rc = PMIx_Get(&wild, PMIX_APP_SIZE, app, 2, &val);
        EXPECT(rc == PMIX_SUCCESS && val->type == PMIX_UINT32 && val->data.uint32 == nprocs,
               "Get PMIX_APP_SIZE of app 0: %s, %u (job size %u)", PMIx_Error_string(rc),
               rc == PMIX_SUCCESS ? val->data.uint32 : 0, nprocs);
        if (rc == PMIX_SUCCESS) PMIX_VALUE_RELEASE(val);
        rc = PMIx_Get(&me, PMIX_APPLDR, app, 1, &val);
        EXPECT(rc == PMIX_SUCCESS && val->type == PMIX_PROC_RANK && val->data.rank == 0,
               "Get PMIX_APPLDR of my app: %s", PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS) PMIX_VALUE_RELEASE(val);
        rc = PMIx_Get(&me, PMIX_APP_ARGV, app, 1, &val);
        EXPECT(rc == PMIX_SUCCESS && val->type == PMIX_STRING &&
                   strstr(val->data.string, "jobinfo_client") != NULL,
               "Get PMIX_APP_ARGV of my app: %s", PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS) PMIX_VALUE_RELEASE(val);
        check_type(&me, PMIX_WDIR, PMIX_STRING);
        check_type(&wild, PMIX_NUM_SLOTS, PMIX_UINT32);
        PMIX_INFO_DESTRUCT(&app[0]);
        PMIX_INFO_DESTRUCT(&app[1]);
    }

    char *nodes = NULL;
    rc = PMIx_Resolve_nodes(me.nspace, &nodes);
    EXPECT(rc == PMIX_SUCCESS && nodes != NULL && strcmp(nodes, host) == 0,
           "Resolve_nodes: %s, '%s' (PMIX_NODE_LIST is '%s')", PMIx_Error_string(rc),
           nodes != NULL ? nodes : "", host);
    free(nodes);

    pmix_info_t opt;
    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, NULL, PMIX_BOOL);
    rc = PMIx_Get(&wild, "pmix.no.such.key", &opt, 1, &val);
    EXPECT(rc == PMIX_ERR_NOT_FOUND, "optional missing key: %s", PMIx_Error_string(rc));
    pmix_info_t imm;
    PMIX_INFO_LOAD(&imm, PMIX_IMMEDIATE, NULL, PMIX_BOOL);
    rc = PMIx_Get(&me, "test.unset", &imm, 1, &val);
    EXPECT(rc == PMIX_ERR_NOT_FOUND, "immediate missing key: %s", PMIx_Error_string(rc));

    /* Own Put is visible at once, before Commit. */
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, "mine", PMIX_STRING);
    EXPECT(PMIx_Put(PMIX_LOCAL, "test.mine", &v) == PMIX_SUCCESS, "Put");
    PMIX_VALUE_DESTRUCT(&v);
    rc = PMIx_Get(&me, "test.mine", NULL, 0, &val);
    EXPECT(rc == PMIX_SUCCESS && val->type == PMIX_STRING && strcmp(val->data.string, "mine") == 0,
           "own Put not visible: %s", PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS) PMIX_VALUE_RELEASE(val);

    /* NULL key: everything about me as a DATA_ARRAY of INFO. */
    rc = PMIx_Get(&me, NULL, NULL, 0, &val);
    EXPECT(rc == PMIX_SUCCESS, "Get NULL key: %s", PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS) {
        EXPECT(val->type == PMIX_DATA_ARRAY && val->data.darray->type == PMIX_INFO &&
                   val->data.darray->size > 0,
               "NULL key did not give a DATA_ARRAY of INFO");
        PMIX_VALUE_RELEASE(val);
    }

    /* Get_nb. */
    rc = PMIx_Get_nb(&wild, PMIX_JOB_SIZE, NULL, 0, nb_cb, NULL);
    EXPECT(rc == PMIX_SUCCESS, "Get_nb: %s", PMIx_Error_string(rc));
    for (int i = 0; i < 10000 && !nb_done; ++i) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    EXPECT(nb_done && nb_status == PMIX_SUCCESS && nb_value > 0, "Get_nb callback");

    /* Nested init: the second Init and one Finalize only move the count. */
    rc = PMIx_Init(&again, NULL, 0);
    EXPECT(rc == PMIX_SUCCESS && again.rank == me.rank, "nested Init: %s", PMIx_Error_string(rc));
    EXPECT(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "inner Finalize");
    EXPECT(PMIx_Initialized() == 1, "inner Finalize ended the library");
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    EXPECT(rc == PMIX_SUCCESS, "Get after inner Finalize: %s", PMIx_Error_string(rc));
    if (rc == PMIX_SUCCESS) PMIX_VALUE_RELEASE(val);
    EXPECT(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "Fence");
    EXPECT(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "outer Finalize");
    EXPECT(PMIx_Initialized() == 0, "still initialized after the last Finalize");
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    EXPECT(rc == PMIX_ERR_INIT, "Get after Finalize: %s", PMIx_Error_string(rc));
    if (failures == 0) printf("jobinfo ok: rank %u\n", me.rank);
    return failures == 0 ? 0 : 1;
}
