/* hello: the smallest complete PMIx client.
 *
 *   pmixrun -n 4 examples/hello
 *
 * Each process reads its job's size and its own ranks, publishes a greeting
 * (Put + Commit), waits for everyone (Fence with data collection), reads every
 * peer's greeting, prints one line and exits 0. Any failure prints what went
 * wrong and exits non-zero. Uses only the public headers. */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call, what)                                                              \
    do {                                                                               \
        pmix_status_t rc_ = (call);                                                    \
        if (rc_ != PMIX_SUCCESS) {                                                     \
            fprintf(stderr, "hello: %s failed: %s\n", (what), PMIx_Error_string(rc_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

int main(void) {
    pmix_proc_t me, job;
    pmix_value_t *val = NULL;
    CHECK(PMIx_Init(&me, NULL, 0), "PMIx_Init");

    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val), "Get PMIX_JOB_SIZE");
    if (val->type != PMIX_UINT32) {
        fprintf(stderr, "hello: PMIX_JOB_SIZE has type %d, expected PMIX_UINT32\n", val->type);
        return 1;
    }
    uint32_t size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);

    CHECK(PMIx_Get(&me, PMIX_LOCAL_RANK, NULL, 0, &val), "Get PMIX_LOCAL_RANK");
    uint16_t local_rank = val->data.uint16;
    PMIX_VALUE_RELEASE(val);

    char host[256] = "?";
    CHECK(PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &val), "Get PMIX_HOSTNAME");
    if (val->type == PMIX_STRING && val->data.string != NULL) {
        snprintf(host, sizeof host, "%s", val->data.string);
    }
    PMIX_VALUE_RELEASE(val);

    char greeting[64];
    snprintf(greeting, sizeof greeting, "hello from rank %u", me.rank);
    pmix_value_t mine;
    PMIX_VALUE_LOAD(&mine, greeting, PMIX_STRING);
    CHECK(PMIx_Put(PMIX_GLOBAL, "hello.greeting", &mine), "PMIx_Put");
    PMIX_VALUE_DESTRUCT(&mine);
    CHECK(PMIx_Commit(), "PMIx_Commit");

    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Fence(NULL, 0, &collect, 1), "PMIx_Fence");
    PMIX_INFO_DESTRUCT(&collect);

    uint32_t greeted = 0;
    for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t peer;
        char expected[64];
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        CHECK(PMIx_Get(&peer, "hello.greeting", NULL, 0, &val), "Get a peer's greeting");
        snprintf(expected, sizeof expected, "hello from rank %u", r);
        if (val->type != PMIX_STRING || strcmp(val->data.string, expected) != 0) {
            fprintf(stderr, "hello: rank %u's greeting is wrong\n", r);
            return 1;
        }
        PMIX_VALUE_RELEASE(val);
        ++greeted;
    }
    printf("hello from rank %u of %u (local rank %u) on %s: read %u greetings\n", me.rank, size,
           (unsigned)local_rank, host, greeted);
    fflush(stdout);
    CHECK(PMIx_Finalize(NULL, 0), "PMIx_Finalize");
    return 0;
}
