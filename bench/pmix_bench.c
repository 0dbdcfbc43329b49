/* pmix_bench: client-side PMIx latencies, one source built twice.
 *
 * Built against our headers + libpmix.so.2 (run under `pmixrun -n 16`) and
 * against OpenPMIx 4.2.2's headers + library (run under Open MPI's
 * `mpirun -np 16`, whose ORTE hosts OpenPMIx's server). Public PMIx API only.
 *
 * usage: pmix_bench [scale]
 *   scale 1 (default) = full run; a smaller number divides every iteration
 *   count (the ctest smoke run uses a tiny one and checks only exit 0).
 *
 * Rank 0 prints a table and machine-readable lines
 *   RESULT <name> <nanoseconds>
 * that bench/run.sh collects. Every figure is rank 0's median over many calls,
 * except PMIx_Init, which is the median (and max) over all ranks, exchanged
 * through the collecting fence. No figure is asserted on: this is a
 * benchmark, not a test.
 */
#include <pmix.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COMMIT_BYTES (64 * 1024)

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
    fprintf(stderr, "pmix_bench: %s: %s\n", what, PMIx_Error_string(rc));
    exit(1);
}

static size_t scaled(size_t n, long scale) {
    size_t s = n / (size_t)scale;
    return s > 0 ? s : 1;
}

int main(int argc, char **argv) {
    long scale = argc > 1 ? atol(argv[1]) : 1;
    if (scale < 1) scale = 1;
    const size_t get_iters = scaled(20000, scale);
    const size_t fence_iters = scaled(400, scale);
    const size_t commit_iters = scaled(100, scale);

    pmix_proc_t me, wild, peer;
    pmix_value_t *val = NULL, v;
    pmix_status_t rc;

    const uint64_t t_init = now_ns();
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Init", rc);
    const uint64_t init_ns = now_ns() - t_init;

    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val)) != PMIX_SUCCESS)
        fail("Get job size", rc);
    const uint32_t nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    /* Start-up barrier (not timed), as MPI_Init has: a rank that has finished
     * PMIx_Init waits here instead of running the loops below while later
     * ranks are still starting, so the Init figure is Init's own. */
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("start-up Fence", rc);

    size_t cap = get_iters > fence_iters ? get_iters : fence_iters;
    if (nprocs > cap) cap = nprocs;
    uint64_t *t = malloc(cap * sizeof *t);

    /* 1. Get of a job-level key. */
    for (size_t i = 0; i < get_iters; ++i) {
        const uint64_t a = now_ns();
        rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
        t[i] = now_ns() - a;
        if (rc != PMIX_SUCCESS) fail("Get job-level key", rc);
        PMIX_VALUE_RELEASE(val);
    }
    const uint64_t get_job = median(t, get_iters);

    /* 2. Put our init time, commit, collecting fence; then Get peers' keys. */
    v.type = PMIX_UINT64;
    v.data.uint64 = init_ns;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "bench.init", &v)) != PMIX_SUCCESS) fail("Put", rc);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) fail("Commit", rc);
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    const uint64_t t_cf = now_ns();
    if ((rc = PMIx_Fence(NULL, 0, &collect, 1)) != PMIX_SUCCESS) fail("collecting Fence", rc);
    const uint64_t fence_collect = now_ns() - t_cf;
    PMIX_INFO_DESTRUCT(&collect);

    /* Every rank's init time (the first Get of each peer is not timed). */
    uint64_t *inits = malloc(nprocs * sizeof *inits);
    for (uint32_t r = 0; r < nprocs; ++r) {
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        if ((rc = PMIx_Get(&peer, "bench.init", NULL, 0, &val)) != PMIX_SUCCESS)
            fail("Get peer key", rc);
        inits[r] = val->data.uint64;
        PMIX_VALUE_RELEASE(val);
    }
    for (size_t i = 0; i < get_iters; ++i) {
        PMIX_LOAD_PROCID(&peer, me.nspace, (pmix_rank_t)((me.rank + 1 + i) % nprocs));
        const uint64_t a = now_ns();
        rc = PMIx_Get(&peer, "bench.init", NULL, 0, &val);
        t[i] = now_ns() - a;
        if (rc != PMIX_SUCCESS) fail("Get peer key", rc);
        PMIX_VALUE_RELEASE(val);
    }
    const uint64_t get_peer = median(t, get_iters);

    /* 3. Fence without data. */
    for (size_t i = 0; i < fence_iters; ++i) {
        const uint64_t a = now_ns();
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        t[i] = now_ns() - a;
        if (rc != PMIX_SUCCESS) fail("Fence", rc);
    }
    const uint64_t fence = median(t, fence_iters);

    /* 4. Commit of one 64 KiB value (Put is not timed; each round is fenced so
     *    that all ranks commit at about the same time, as in an MPI modex). */
    char *bytes = malloc(COMMIT_BYTES);
    for (size_t i = 0; i < COMMIT_BYTES; ++i) bytes[i] = (char)(i * 131u + me.rank);
    for (size_t i = 0; i < commit_iters; ++i) {
        bytes[0] = (char)i;
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = bytes;
        v.data.bo.size = COMMIT_BYTES;
        if ((rc = PMIx_Put(PMIX_GLOBAL, "bench.blob", &v)) != PMIX_SUCCESS) fail("Put 64 KiB", rc);
        const uint64_t a = now_ns();
        rc = PMIx_Commit();
        t[i] = now_ns() - a;
        if (rc != PMIX_SUCCESS) fail("Commit 64 KiB", rc);
        if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("Fence after commit", rc);
    }
    const uint64_t commit = median(t, commit_iters);
    free(bytes);

    if (me.rank == 0) {
        const uint64_t init_med = median(inits, nprocs);
        const uint64_t init_max = inits[nprocs - 1]; /* median() sorted them */
        printf("pmix_bench: %s, %u processes, rank 0's medians\n", PMIx_Get_version(), nprocs);
        printf("  %-40s %12.3f us  (%zu calls)\n", "PMIx_Get job-level key", get_job / 1e3,
               get_iters);
        printf("  %-40s %12.3f us  (%zu calls)\n", "PMIx_Get peer key after collecting fence",
               get_peer / 1e3, get_iters);
        printf("  %-40s %12.3f us  (%zu calls)\n", "PMIx_Fence without data", fence / 1e3,
               fence_iters);
        printf("  %-40s %12.3f us  (%zu calls)\n", "PMIx_Commit of one 64 KiB value", commit / 1e3,
               commit_iters);
        printf("  %-40s %12.3f us  (median of %u ranks; max %.3f us)\n", "PMIx_Init",
               init_med / 1e3, nprocs, init_max / 1e3);
        printf("  %-40s %12.3f us  (once)\n", "first collecting Fence", fence_collect / 1e3);
        printf("RESULT get_job %llu\n", (unsigned long long)get_job);
        printf("RESULT get_peer %llu\n", (unsigned long long)get_peer);
        printf("RESULT fence %llu\n", (unsigned long long)fence);
        printf("RESULT commit64k %llu\n", (unsigned long long)commit);
        printf("RESULT init %llu\n", (unsigned long long)init_med);
        printf("RESULT init_max %llu\n", (unsigned long long)init_max);
        printf("RESULT fence_collect %llu\n", (unsigned long long)fence_collect);
        fflush(stdout);
    }
    free(inits);
    free(t);
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Finalize", rc);
    return 0;
}
