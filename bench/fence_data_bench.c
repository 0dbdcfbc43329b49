/* fence_data_bench: what an MPI start-up's modex costs, one source for both
 * libraries (public PMIx API only; bench/run_table.sh builds it once and runs
 * it on ours and on OpenPMIx 4.2.2 under the same mpirun, and on ours under
 * pmixrun).
 *
 * usage: fence_data_bench [scale] [history_rounds]
 *   scale           divide every round count by this (the ctest smoke run
 *                   uses a large one); default 1
 *   history_rounds  rounds of the "new key every round" part (issue 19 item
 *                   7); default 300 (divided by scale too)
 *
 * Each rank times:
 *   init             its own PMIx_Init (figure: median over the ranks)
 *   fence_8b         Put 1 x 8 B, Commit, PMIx_Fence with PMIX_COLLECT_DATA
 *   fence_10x1k      Put 10 x 1 KiB, Commit, collecting Fence
 *   fence_64k        Put 1 x 64 KiB, Commit, collecting Fence
 *   fence_nodata     PMIx_Fence without data
 *   history_first / history_last
 *                    Put one NEW 8-byte key, Commit, collecting Fence: the
 *                    median of the first and of the last tenth of the rounds
 *                    (flat cost: the two are alike)
 *   finalize         its own PMIx_Finalize (median over the ranks)
 * The same keys are Put again in every round of the first three (as a
 * library re-publishing its endpoints). Rank 0 checks, after each kind, that
 * it reads its neighbour's latest value (a benchmark that moves no data would
 * measure nothing). Rank 0 prints "RESULT <name> <nanoseconds>" lines (its
 * medians over the rounds; init and finalize: the median over the ranks,
 * finalize printed by every rank as "FINALIZE <ns>" for the script).
 * Nothing is asserted on time. */
#include <pmix.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n) {
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, cmp_u64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fail(const char *what, pmix_status_t rc) {
    fprintf(stderr, "fence_data_bench: %s: %s\n", what, PMIx_Error_string(rc));
    exit(1);
}

static pmix_proc_t me;
static uint32_t nprocs;

static void collecting_fence(void) {
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (rc != PMIX_SUCCESS) fail("collecting Fence", rc);
}

/* Puts `count` byte objects of `size` bytes under keys <prefix>0.., the first
 * byte of each being `stamp`. */
static void put_values(const char *prefix, int count, size_t size, unsigned char stamp,
                       unsigned char *buf) {
    for (int k = 0; k < count; ++k) {
        char key[64];
        snprintf(key, sizeof key, "%s%d", prefix, k);
        buf[0] = stamp;
        buf[size - 1] = (unsigned char)me.rank;
        pmix_value_t v;
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = (char *)buf;
        v.data.bo.size = size;
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
        if (rc != PMIX_SUCCESS) fail("Put", rc);
    }
}

/* Rank 0 reads its neighbour's <prefix>0 and wants `stamp` and `size`. */
static void check_neighbour(const char *prefix, size_t size, unsigned char stamp) {
    if (me.rank != 0 || nprocs < 2) return;
    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, me.nspace, 1);
    char key[64];
    snprintf(key, sizeof key, "%s0", prefix);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&peer, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) fail("Get of the neighbour's value", rc);
    if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size != size ||
        (unsigned char)v->data.bo.bytes[0] != stamp ||
        (unsigned char)v->data.bo.bytes[size - 1] != 1) {
        fprintf(stderr, "fence_data_bench: rank 1's %s is not what it put last\n", key);
        exit(1);
    }
    PMIX_VALUE_RELEASE(v);
}

/* Median over `rounds` of: Put count x size, Commit, collecting Fence. */
static uint64_t data_rounds(const char *prefix, int count, size_t size, size_t rounds, uint64_t *t,
                            unsigned char *buf) {
    for (size_t i = 0; i < rounds; ++i) {
        const uint64_t a = now_ns();
        put_values(prefix, count, size, (unsigned char)(i + 1), buf);
        pmix_status_t rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) fail("Commit", rc);
        collecting_fence();
        t[i] = now_ns() - a;
    }
    check_neighbour(prefix, size, (unsigned char)rounds);
    return median(t, rounds);
}

static size_t scaled(size_t n, long scale) {
    size_t s = n / (size_t)scale;
    return s > 0 ? s : 1;
}

int main(int argc, char **argv) {
    long scale = argc > 1 ? atol(argv[1]) : 1;
    if (scale < 1) scale = 1;
    size_t history = scaled(argc > 2 ? (size_t)atol(argv[2]) : 300, scale);
    if (history < 10) history = 10;
    const size_t rounds = scaled(200, scale);
    const size_t fence_rounds = scaled(400, scale);

    pmix_status_t rc;
    const uint64_t t_init = now_ns();
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Init", rc);
    const uint64_t init_ns = now_ns() - t_init;

    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    if ((rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val)) != PMIX_SUCCESS)
        fail("Get job size", rc);
    nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    /* Start-up barrier, as MPI_Init has (not timed). */
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("start-up Fence", rc);

    size_t cap = rounds > fence_rounds ? rounds : fence_rounds;
    if (history > cap) cap = history;
    if (nprocs > cap) cap = nprocs;
    uint64_t *t = malloc(cap * sizeof *t);
    unsigned char *buf = calloc(1, 64 * 1024);

    /* Every rank's Init time, exchanged by a collecting fence. */
    pmix_value_t v;
    v.type = PMIX_UINT64;
    v.data.uint64 = init_ns;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "fdb.init", &v)) != PMIX_SUCCESS) fail("Put", rc);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) fail("Commit", rc);
    collecting_fence();
    uint64_t *inits = malloc(nprocs * sizeof *inits);
    for (uint32_t r = 0; r < nprocs; ++r) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        if ((rc = PMIx_Get(&peer, "fdb.init", NULL, 0, &val)) != PMIX_SUCCESS)
            fail("Get init time", rc);
        inits[r] = val->data.uint64;
        PMIX_VALUE_RELEASE(val);
    }

    const uint64_t f8 = data_rounds("fdb.a", 1, 8, rounds, t, buf);
    const uint64_t f10k = data_rounds("fdb.b", 10, 1024, rounds, t, buf);
    const uint64_t f64k = data_rounds("fdb.c", 1, 64 * 1024, rounds, t, buf);
    for (size_t i = 0; i < fence_rounds; ++i) {
        const uint64_t a = now_ns();
        if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("Fence", rc);
        t[i] = now_ns() - a;
    }
    const uint64_t nodata = median(t, fence_rounds);

    /* A new key every round: what was committed long ago must not tax later rounds. */
    for (size_t i = 0; i < history; ++i) {
        char prefix[48];
        snprintf(prefix, sizeof prefix, "fdb.h%zu.", i);
        const uint64_t a = now_ns();
        put_values(prefix, 1, 8, (unsigned char)(i + 1), buf);
        if ((rc = PMIx_Commit()) != PMIX_SUCCESS) fail("Commit", rc);
        collecting_fence();
        t[i] = now_ns() - a;
    }
    {
        /* The first key is still there, and the last one arrived. */
        check_neighbour("fdb.h0.", 8, 1);
        char prefix[48];
        snprintf(prefix, sizeof prefix, "fdb.h%zu.", history - 1);
        check_neighbour(prefix, 8, (unsigned char)history);
    }
    const size_t tenth = history / 10;
    const uint64_t hist_first = median(t, tenth);
    const uint64_t hist_last = median(t + history - tenth, tenth);

    if (me.rank == 0) {
        const uint64_t init_med = median(inits, nprocs);
        printf("fence_data_bench: %s, %u processes, rank 0's medians\n", PMIx_Get_version(),
               nprocs);
        printf("RESULT init %llu\n", (unsigned long long)init_med);
        printf("RESULT fence_8b %llu\n", (unsigned long long)f8);
        printf("RESULT fence_10x1k %llu\n", (unsigned long long)f10k);
        printf("RESULT fence_64k %llu\n", (unsigned long long)f64k);
        printf("RESULT fence_nodata %llu\n", (unsigned long long)nodata);
        printf("RESULT history_first %llu\n", (unsigned long long)hist_first);
        printf("RESULT history_last %llu\n", (unsigned long long)hist_last);
        printf("HISTORY %zu rounds\n", history);
        fflush(stdout);
    }
    free(inits);
    free(t);
    free(buf);
    const uint64_t f0 = now_ns();
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Finalize", rc);
    printf("FINALIZE %llu\n", (unsigned long long)(now_ns() - f0));
    return 0;
}
