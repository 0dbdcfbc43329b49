/* Collecting fences send each process only what its peers committed since it
 * last received their data (framework/server/README.md, "Fence"), and every
 * value still arrives. Run under pmixrun with N >= 3 ranks:
 *
 * 1. Every rank Puts a 16 KiB value once ("old"), commits, fences.
 * 2. Rounds: every rank Puts a new key and re-Puts "cur" (a value that
 *    changes every round), commits, fences; each rank checks every peer's
 *    new key, its latest "cur" and the round-0 key and "old".
 * 3. Ranks 0 and 1 alone fence with new data; then the whole job fences
 *    without new data from 0 and 1: rank 2 must see what 0 and 1 committed
 *    before the subset fence.
 * 4. The bytes a rank reads (/proc/self/io rchar) in one more round are far
 *    fewer than the peers' 16 KiB values: they are not sent again. Before the
 *    change every fence carried every peer's whole history.
 * Prints "modex_delta ok" per rank. */
#include <pmix.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OLD_BYTES (16 * 1024)
#define ROUNDS 12

static pmix_proc_t me;
static uint32_t nprocs;

#define CHECK(cond, ...)                                              \
    do {                                                              \
        if (!(cond)) {                                                \
            fprintf(stdout, "modex_delta rank %u FAILED: ", me.rank); \
            fprintf(stdout, __VA_ARGS__);                             \
            fprintf(stdout, "\n");                                    \
            fflush(stdout);                                           \
            exit(1);                                                  \
        }                                                             \
    } while (0)

static void put_u64(const char *key, uint64_t v) {
    pmix_value_t val;
    val.type = PMIX_UINT64;
    val.data.uint64 = v;
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &val) == PMIX_SUCCESS, "Put %s", key);
}

static uint64_t get_u64(pmix_rank_t rank, const char *key) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_UINT64, "Get %s of rank %u: %s", key, rank,
          PMIx_Error_string(rc));
    uint64_t out = v->data.uint64;
    PMIX_VALUE_RELEASE(v);
    return out;
}

static void fence(const pmix_proc_t *procs, size_t n) {
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(procs, n, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    CHECK(rc == PMIX_SUCCESS, "collecting fence: %s", PMIx_Error_string(rc));
}

static uint64_t bytes_read(void) {
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    unsigned long long v = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "rchar: %llu", &v) == 1) break;
    if (f != NULL) fclose(f);
    CHECK(v > 0, "no rchar in /proc/self/io");
    return v;
}

static void check_old(pmix_rank_t r) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, r);
    pmix_value_t *v = NULL;
    CHECK(PMIx_Get(&p, "delta.old", NULL, 0, &v) == PMIX_SUCCESS, "Get delta.old of %u", r);
    CHECK(v->type == PMIX_BYTE_OBJECT && v->data.bo.size == OLD_BYTES &&
              (unsigned char)v->data.bo.bytes[OLD_BYTES - 1] == (unsigned char)r,
          "delta.old of rank %u is wrong", r);
    PMIX_VALUE_RELEASE(v);
}

int main(void) {
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "init");
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS, "job size");
    nprocs = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    CHECK(nprocs >= 3, "needs 3 ranks or more");

    /* 1. A big value, committed once. */
    char *old = calloc(1, OLD_BYTES);
    old[OLD_BYTES - 1] = (char)me.rank;
    pmix_value_t bo;
    bo.type = PMIX_BYTE_OBJECT;
    bo.data.bo.bytes = old;
    bo.data.bo.size = OLD_BYTES;
    CHECK(PMIx_Put(PMIX_GLOBAL, "delta.old", &bo) == PMIX_SUCCESS, "Put old");
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");
    fence(NULL, 0);

    /* 2. A new key and a changed one every round. */
    char key[64];
    for (int round = 0; round < ROUNDS; ++round) {
        snprintf(key, sizeof key, "delta.r%d", round);
        put_u64(key, 1000u * me.rank + (uint64_t)round);
        put_u64("delta.cur", 1000u * me.rank + (uint64_t)round);
        CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");
        fence(NULL, 0);
        for (pmix_rank_t r = 0; r < nprocs; ++r) {
            CHECK(get_u64(r, key) == 1000u * r + (uint64_t)round, "round %d key of %u", round, r);
            CHECK(get_u64(r, "delta.cur") == 1000u * r + (uint64_t)round, "round %d cur of %u",
                  round, r);
            CHECK(get_u64(r, "delta.r0") == 1000u * r, "round %d: r0 of %u", round, r);
            check_old(r);
        }
    }

    /* 3. Ranks 0 and 1 exchange new data alone; then everyone fences. */
    if (me.rank <= 1) {
        put_u64("delta.pair", 77u + me.rank);
        CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");
        pmix_proc_t pair[2];
        PMIX_LOAD_PROCID(&pair[0], me.nspace, 0);
        PMIX_LOAD_PROCID(&pair[1], me.nspace, 1);
        fence(pair, 2);
        CHECK(get_u64(1 - me.rank, "delta.pair") == 77u + (1 - me.rank), "pair value");
    }
    fence(NULL, 0);
    for (pmix_rank_t r = 0; r <= 1; ++r)
        CHECK(get_u64(r, "delta.pair") == 77u + r, "rank %u's pair value after the job fence", r);

    /* 4. One more round: only the new keys travel, not the 16 KiB values. */
    snprintf(key, sizeof key, "delta.last");
    put_u64(key, me.rank);
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");
    const uint64_t before = bytes_read();
    fence(NULL, 0);
    const uint64_t read = bytes_read() - before;
    for (pmix_rank_t r = 0; r < nprocs; ++r) CHECK(get_u64(r, key) == r, "last key of %u", r);
    CHECK(read < OLD_BYTES, "one fence read %llu bytes: the peers' old values came again",
          (unsigned long long)read);
    printf("modex_delta ok (rank %u read %llu bytes in the last fence)\n", me.rank,
           (unsigned long long)read);
    fflush(stdout);
    free(old);
    PMIx_Finalize(NULL, 0);
    return 0;
}
