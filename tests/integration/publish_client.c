/* Publish / lookup / unpublish through pmixrun's data store, with 2 ranks.
 * Rank 1 starts a waiting Lookup_nb before rank 0 publishes (a fence orders
 * them), so the wait must be released by the later publish. Also: timeout,
 * duplicate key, unpublish, FIRST_READ persistence, PROC_LOCAL range, partial
 * results. Prints "publish ok: rank N". usage: publish_client */
#include <pmix.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int failures = 0;
#define EXPECT(cond, ...)                                  \
    do {                                                   \
        if (!(cond)) {                                     \
            fprintf(stderr, "publish rank %u: ", me.rank); \
            fprintf(stderr, __VA_ARGS__);                  \
            fprintf(stderr, "\n");                         \
            ++failures;                                    \
        }                                                  \
    } while (0)

static pmix_proc_t me;
static _Atomic int nb_done = 0; /* set last by the callback (progress thread) */
static _Atomic pmix_status_t nb_status = PMIX_ERROR;
static char nb_value[64];
static _Atomic pmix_rank_t nb_publisher = PMIX_RANK_UNDEF;

static void lookup_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata) {
    (void)cbdata;
    nb_status = status;
    if (status == PMIX_SUCCESS && ndata == 1 && data[0].value.type == PMIX_STRING) {
        snprintf(nb_value, sizeof nb_value, "%s", data[0].value.data.string);
        nb_publisher = data[0].proc.rank;
    }
    nb_done = 1;
}

static pmix_status_t publish_str(const char *key, const char *val, int persist, int range) {
    pmix_info_t info[3];
    size_t n = 0;
    PMIX_INFO_LOAD(&info[n], key, val, PMIX_STRING);
    ++n;
    if (persist >= 0) {
        pmix_persistence_t p = (pmix_persistence_t)persist;
        PMIX_INFO_LOAD(&info[n], PMIX_PERSISTENCE, &p, PMIX_PERSIST);
        ++n;
    }
    if (range >= 0) {
        pmix_data_range_t r = (pmix_data_range_t)range;
        PMIX_INFO_LOAD(&info[n], PMIX_RANGE, &r, PMIX_DATA_RANGE);
        ++n;
    }
    pmix_status_t rc = PMIx_Publish(info, n);
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    return rc;
}

static pmix_status_t lookup_one(const char *key, char *out, size_t outlen) {
    pmix_pdata_t pd;
    PMIX_PDATA_CONSTRUCT(&pd);
    snprintf(pd.key, sizeof pd.key, "%s", key);
    pmix_status_t rc = PMIx_Lookup(&pd, 1, NULL, 0);
    if (rc == PMIX_SUCCESS && out != NULL) {
        if (pd.value.type == PMIX_STRING) snprintf(out, outlen, "%s", pd.value.data.string);
    }
    PMIX_PDATA_DESTRUCT(&pd);
    return rc;
}

int main(void) {
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "publish: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    char buf[64] = "";

    /* 1. A waiting lookup released by a later publish, across clients. */
    if (me.rank == 1) {
        pmix_info_t w[2];
        int timeout = 30;
        PMIX_INFO_LOAD(&w[0], PMIX_WAIT, NULL, PMIX_BOOL);
        PMIX_INFO_LOAD(&w[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
        char *keys[] = {"test.svc", NULL};
        rc = PMIx_Lookup_nb(keys, w, 2, lookup_cb, NULL);
        EXPECT(rc == PMIX_SUCCESS, "Lookup_nb: %s", PMIx_Error_string(rc));
    }
    EXPECT(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "fence 1");
    if (me.rank == 0) {
        rc = publish_str("test.svc", "port-42", -1, -1);
        EXPECT(rc == PMIX_SUCCESS, "Publish: %s", PMIx_Error_string(rc));
        /* 3. The same key again in the same range: refused. */
        rc = publish_str("test.svc", "port-43", -1, -1);
        EXPECT(rc == PMIX_ERR_DUPLICATE_KEY, "duplicate Publish: %s", PMIx_Error_string(rc));
        /* ...but allowed in another range. */
        rc = publish_str("test.svc", "port-44", -1, PMIX_RANGE_NAMESPACE);
        EXPECT(rc == PMIX_SUCCESS, "Publish in another range: %s", PMIx_Error_string(rc));
        /* 6. PROC_LOCAL data is for rank 0 only. */
        rc = publish_str("test.private", "mine", -1, PMIX_RANGE_PROC_LOCAL);
        EXPECT(rc == PMIX_SUCCESS, "Publish PROC_LOCAL: %s", PMIx_Error_string(rc));
        /* 5. FIRST_READ: gone after the first lookup. */
        rc = publish_str("test.once", "only-once", PMIX_PERSIST_FIRST_READ, -1);
        EXPECT(rc == PMIX_SUCCESS, "Publish FIRST_READ: %s", PMIx_Error_string(rc));
        rc = lookup_one("test.once", buf, sizeof buf);
        EXPECT(rc == PMIX_SUCCESS && strcmp(buf, "only-once") == 0, "first read: %s",
               PMIx_Error_string(rc));
        rc = lookup_one("test.once", NULL, 0);
        EXPECT(rc == PMIX_ERR_NOT_FOUND, "second read: %s", PMIx_Error_string(rc));
        rc = lookup_one("test.private", buf, sizeof buf);
        EXPECT(rc == PMIX_SUCCESS, "own PROC_LOCAL lookup: %s", PMIx_Error_string(rc));
    } else {
        for (int i = 0; i < 60000 && !nb_done; ++i) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        EXPECT(nb_done && nb_status == PMIX_SUCCESS && strcmp(nb_value, "port-42") == 0 &&
                   nb_publisher == 0,
               "waiting lookup: done=%d %s value=%s publisher=%u", nb_done,
               PMIx_Error_string(nb_status), nb_value, nb_publisher);
    }
    EXPECT(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "fence 2");
    if (me.rank == 1) {
        rc = lookup_one("test.private", NULL, 0);
        EXPECT(rc == PMIX_ERR_NOT_FOUND, "PROC_LOCAL lookup by another rank: %s",
               PMIx_Error_string(rc));
        /* 2. Waiting for a key nobody publishes: the timeout ends it. */
        pmix_pdata_t pd;
        PMIX_PDATA_CONSTRUCT(&pd);
        snprintf(pd.key, sizeof pd.key, "test.never");
        pmix_info_t w[2];
        int timeout = 1;
        PMIX_INFO_LOAD(&w[0], PMIX_WAIT, NULL, PMIX_BOOL);
        PMIX_INFO_LOAD(&w[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
        rc = PMIx_Lookup(&pd, 1, w, 2);
        EXPECT(rc == PMIX_ERR_TIMEOUT, "lookup with timeout: %s", PMIx_Error_string(rc));
        PMIX_PDATA_DESTRUCT(&pd);
        /* Partial results. */
        pmix_pdata_t two[2];
        PMIX_PDATA_CONSTRUCT(&two[0]);
        PMIX_PDATA_CONSTRUCT(&two[1]);
        snprintf(two[0].key, sizeof two[0].key, "test.svc");
        snprintf(two[1].key, sizeof two[1].key, "test.absent");
        rc = PMIx_Lookup(two, 2, NULL, 0);
        EXPECT(rc == PMIX_ERR_PARTIAL_SUCCESS && two[0].value.type == PMIX_STRING &&
                   two[1].value.type == PMIX_UNDEF,
               "partial lookup: %s", PMIx_Error_string(rc));
        PMIX_PDATA_DESTRUCT(&two[0]);
        PMIX_PDATA_DESTRUCT(&two[1]);
    }
    EXPECT(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "fence 3");
    if (me.rank == 0) {
        /* 4. Unpublish, then the key is gone (and may be published again). */
        char *keys[] = {"test.svc", NULL};
        rc = PMIx_Unpublish(keys, NULL, 0);
        EXPECT(rc == PMIX_SUCCESS, "Unpublish: %s", PMIx_Error_string(rc));
        rc = PMIx_Unpublish(NULL, NULL, 0); /* everything else of mine */
        EXPECT(rc == PMIX_SUCCESS, "Unpublish all: %s", PMIx_Error_string(rc));
    }
    EXPECT(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "fence 4");
    rc = lookup_one("test.svc", NULL, 0);
    EXPECT(rc == PMIX_ERR_NOT_FOUND, "lookup after unpublish: %s", PMIx_Error_string(rc));
    EXPECT(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "fence 5");
    if (me.rank == 1) {
        rc = publish_str("test.svc", "again", -1, -1);
        EXPECT(rc == PMIX_SUCCESS, "publish after unpublish: %s", PMIx_Error_string(rc));
    }
    PMIx_Finalize(NULL, 0);
    if (failures == 0) printf("publish ok: rank %u\n", me.rank);
    return failures == 0 ? 0 : 1;
}
