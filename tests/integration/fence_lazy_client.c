/* Peers' data from a collecting fence is decoded only when a Get asks for
 * that peer (framework/gds/lazy_modex.hpp), and a Get still returns each
 * peer's latest value. Run under pmixrun -n 4 with
 * PMIX_MCA_gds_base_verbose=5: each decode logs "decoded N blob(s) of
 * <nspace>:<rank> on a Get", which the test counts. Only rank 0 reads peers'
 * data, so eager decoding (every peer at every fence: 4 x 3 x 3 blobs) and a
 * lazy one that decodes more than asked both fail the counts.
 *
 * Round 1: every rank Puts "lazy.a" = 100 r + 1 and a 4 KiB "lazy.big";
 *          rank 0 reads rank 1's "lazy.a"                   (1 blob of 1)
 * Round 2: ranks 0-2 re-Put "lazy.a" = 100 r + 2 and a 256 KiB "lazy.grow"
 *          (the data segment grows: readers remap it); rank 3 neither
 *          Puts nor Commits. Rank 0 reads rank 1's new "lazy.a" (1 blob of 1: the
 *          whole, which replaced nothing pending) and rank 3's round-1
 *          "lazy.a", received before the segment grew      (1 blob of 3)
 * Round 3: every rank Puts "lazy.c" = 100 r + 3 (a delta). Rank 0 reads
 *          rank 1's "lazy.c" (1 blob of 1) and rank 2's "lazy.c", "lazy.a"
 *          and "lazy.big": rank 2's round-2 whole and round-3 delta, in
 *          order                                             (2 blobs of 2)
 * Prints "lazy ok" per rank. */
#include <pmix.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (4 * 1024)
#define GROW (256 * 1024)

static pmix_proc_t me;

#define CHECK(cond, ...)                                       \
    do {                                                       \
        if (!(cond)) {                                         \
            fprintf(stdout, "lazy rank %u FAILED: ", me.rank); \
            fprintf(stdout, __VA_ARGS__);                      \
            fprintf(stdout, "\n");                             \
            fflush(stdout);                                    \
            exit(1);                                           \
        }                                                      \
    } while (0)

static void put_u64(const char *key, uint64_t v) {
    pmix_value_t val;
    val.type = PMIX_UINT64;
    val.data.uint64 = v;
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &val) == PMIX_SUCCESS, "Put %s", key);
}

static void put_bytes(const char *key, size_t size) {
    char *b = calloc(1, size);
    CHECK(b != NULL, "calloc");
    b[size - 1] = (char)me.rank;
    pmix_value_t val;
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = b;
    val.data.bo.size = size;
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &val) == PMIX_SUCCESS, "Put %s", key);
    free(b);
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

static void check_bytes(pmix_rank_t rank, const char *key, size_t size) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS, "Get %s of rank %u: %s", key, rank, PMIx_Error_string(rc));
    CHECK(v->type == PMIX_BYTE_OBJECT && v->data.bo.size == size &&
              (unsigned char)v->data.bo.bytes[size - 1] == (unsigned char)rank,
          "%s of rank %u is wrong", key, rank);
    PMIX_VALUE_RELEASE(v);
}

static void commit_and_fence(int commit) {
    if (commit) CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    CHECK(rc == PMIX_SUCCESS, "collecting fence: %s", PMIx_Error_string(rc));
}

int main(void) {
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "init");
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS, "job size");
    CHECK(v->data.uint32 == 4, "needs 4 ranks");
    PMIX_VALUE_RELEASE(v);

    /* Round 1. */
    put_u64("lazy.a", 100u * me.rank + 1);
    put_bytes("lazy.big", BIG);
    commit_and_fence(1);
    if (me.rank == 0) CHECK(get_u64(1, "lazy.a") == 101, "round 1: rank 1's lazy.a");

    /* Round 2: rank 3 commits nothing new; the others' data grows the segment. */
    if (me.rank != 3) {
        put_u64("lazy.a", 100u * me.rank + 2);
        put_bytes("lazy.grow", GROW);
    }
    commit_and_fence(me.rank != 3);
    if (me.rank == 0) {
        CHECK(get_u64(1, "lazy.a") == 102, "round 2: rank 1's lazy.a is not its latest");
        check_bytes(1, "lazy.grow", GROW);
        CHECK(get_u64(3, "lazy.a") == 301, "round 2: rank 3's lazy.a from round 1");
        check_bytes(3, "lazy.big", BIG);
    }

    /* Round 3: a delta after a whole. */
    put_u64("lazy.c", 100u * me.rank + 3);
    commit_and_fence(1);
    if (me.rank == 0) {
        CHECK(get_u64(1, "lazy.c") == 103, "round 3: rank 1's lazy.c");
        CHECK(get_u64(2, "lazy.c") == 203, "round 3: rank 2's lazy.c");
        CHECK(get_u64(2, "lazy.a") == 202, "round 3: rank 2's lazy.a is not its latest");
        check_bytes(2, "lazy.big", BIG);
        check_bytes(2, "lazy.grow", GROW);
    }
    CHECK(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "last fence");
    printf("lazy ok\n");
    fflush(stdout);
    CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "finalize");
    return 0;
}
