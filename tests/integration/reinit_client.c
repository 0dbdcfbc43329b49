/* PMIx_Init -> PMIx_Finalize -> PMIx_Init again in one process (as public
 * example programs do): after the second Init the process is connected
 * again, and Fence (the no-data one goes through the job's shared-memory
 * barrier when the server offers it), Put/Commit/Get with its peers work.
 * A fence naming a process that has finalized fails, so each round first
 * waits until every peer is back: each announces itself with a committed
 * value that the others poll for. Each round puts a value of its own, so a
 * later round's Get must see that round's value.
 * Prints "reinit ok: rank N". usage: reinit_client [rounds] */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;
static pmix_proc_t me;

#define EXPECT(cond, ...)                                 \
    do {                                                  \
        if (!(cond)) {                                    \
            fprintf(stderr, "reinit rank %u: ", me.rank); \
            fprintf(stderr, __VA_ARGS__);                 \
            fprintf(stderr, "\n");                        \
            ++failures;                                   \
        }                                                 \
    } while (0)

static void round_trip(int round) {
    pmix_proc_t wild;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    EXPECT(rc == PMIX_SUCCESS, "round %d: PMIx_Init: %s", round, PMIx_Error_string(rc));
    if (rc != PMIX_SUCCESS) return;
    EXPECT(PMIx_Initialized() == 1, "round %d: not initialized after Init", round);
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);

    /* Job info is there again. */
    pmix_value_t *val = NULL;
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    EXPECT(rc == PMIX_SUCCESS, "round %d: Get JOB_SIZE: %s", round, PMIx_Error_string(rc));
    uint32_t size = 0;
    if (rc == PMIX_SUCCESS) {
        size = val->data.uint32;
        PMIX_VALUE_RELEASE(val);
    }

    /* Announce this round; wait until every peer announced it (a peer that
     * has not come back yet answers NOT_FOUND). */
    char key[32];
    snprintf(key, sizeof key, "test.back.%d", round);
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, &round, PMIX_INT);
    rc = PMIx_Put(PMIX_LOCAL, key, &v);
    EXPECT(rc == PMIX_SUCCESS, "round %d: Put %s: %s", round, key, PMIx_Error_string(rc));
    rc = PMIx_Commit();
    EXPECT(rc == PMIX_SUCCESS, "round %d: Commit: %s", round, PMIx_Error_string(rc));
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        rc = PMIX_ERR_NOT_FOUND;
        for (int tries = 0; tries < 600 && rc != PMIX_SUCCESS; ++tries) {
            rc = PMIx_Get(&peer, key, NULL, 0, &val);
            if (rc != PMIX_SUCCESS) usleep(50000);
        }
        EXPECT(rc == PMIX_SUCCESS, "round %d: rank %u never came back: %s", round, r,
               PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS) PMIX_VALUE_RELEASE(val);
    }

    /* Fence without data, then a data exchange. */
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    EXPECT(rc == PMIX_SUCCESS, "round %d: Fence: %s", round, PMIx_Error_string(rc));
    char text[64];
    snprintf(text, sizeof text, "round %d rank %u", round, me.rank);
    PMIX_VALUE_LOAD(&v, text, PMIX_STRING);
    rc = PMIx_Put(PMIX_GLOBAL, "test.reinit", &v);
    PMIX_VALUE_DESTRUCT(&v);
    EXPECT(rc == PMIX_SUCCESS, "round %d: Put: %s", round, PMIx_Error_string(rc));
    rc = PMIx_Commit();
    EXPECT(rc == PMIX_SUCCESS, "round %d: Commit: %s", round, PMIx_Error_string(rc));
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    EXPECT(rc == PMIX_SUCCESS, "round %d: Fence(collect): %s", round, PMIx_Error_string(rc));
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        snprintf(text, sizeof text, "round %d rank %u", round, r);
        rc = PMIx_Get(&peer, "test.reinit", NULL, 0, &val);
        EXPECT(rc == PMIX_SUCCESS, "round %d: Get from %u: %s", round, r, PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS) {
            EXPECT(val->type == PMIX_STRING && strcmp(val->data.string, text) == 0,
                   "round %d: rank %u's value is '%s', expected '%s'", round, r,
                   val->type == PMIX_STRING ? val->data.string : "?", text);
            PMIX_VALUE_RELEASE(val);
        }
    }
    rc = PMIx_Finalize(NULL, 0);
    EXPECT(rc == PMIX_SUCCESS, "round %d: Finalize: %s", round, PMIx_Error_string(rc));
    EXPECT(PMIx_Initialized() == 0, "round %d: still initialized after Finalize", round);
}

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 2;
    for (int round = 1; round <= rounds; ++round) round_trip(round);
    if (failures != 0) return 1;
    printf("reinit ok: rank %u\n", me.rank);
    return 0;
}
