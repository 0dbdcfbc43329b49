/* Put, Commit and collecting Fence, each timed on its own (issue 17 item 1).
 *
 * usage: commit_bench [size] [rounds] [warmup]
 *   size    bytes of the one byte object each rank Puts per round (default 65536)
 *   rounds  rounds timed (default 1000)
 *   warmup  rounds of an 8-byte Put before them, not timed (default 0)
 *
 * Every round: PMIx_Put(GLOBAL, one key, size bytes), PMIx_Commit, PMIx_Fence
 * with PMIX_COLLECT_DATA over the whole job. Rank 0 prints, in nanoseconds,
 * the median of each call over the rounds and the process CPU time (all
 * threads) per round, which does not depend on the machine's load as wall
 * times do:
 *   RESULT put <ns>  RESULT commit <ns>  RESULT fence <ns>  RESULT cpu <ns>
 * At the end rank 0 Gets its neighbour's value and checks its size and the
 * round stamped in its first byte. Public API only: builds against either
 * library (bench/README.md, "Commit assembles only what goes"). */
#include <pmix.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_u64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fail(const char *what, pmix_status_t rc) {
    fprintf(stderr, "commit_bench: %s: %s\n", what, PMIx_Error_string(rc));
    exit(1);
}

int main(int argc, char **argv) {
    const size_t size = argc > 1 ? (size_t)atol(argv[1]) : 65536;
    const size_t rounds = argc > 2 ? (size_t)atol(argv[2]) : 1000;
    const size_t warmup = argc > 3 ? (size_t)atol(argv[3]) : 0;
    if (size < 2 || rounds < 1) {
        fprintf(stderr, "usage: commit_bench [size >= 2] [rounds >= 1] [warmup]\n");
        return 2;
    }
    pmix_proc_t me;
    pmix_status_t rc;
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Init", rc);
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    if ((rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val)) != PMIX_SUCCESS)
        fail("Get job size", rc);
    const uint32_t nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);

    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    char *buf = calloc(1, size);
    uint64_t *tp = malloc(rounds * sizeof *tp), *tc = malloc(rounds * sizeof *tc),
             *tf = malloc(rounds * sizeof *tf);
    pmix_value_t v;
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = buf;
    for (size_t i = 0; i < warmup; ++i) {
        v.data.bo.size = 8;
        if ((rc = PMIx_Put(PMIX_GLOBAL, "cb.warmup", &v)) != PMIX_SUCCESS) fail("Put", rc);
        if ((rc = PMIx_Commit()) != PMIX_SUCCESS) fail("Commit", rc);
        if ((rc = PMIx_Fence(NULL, 0, &collect, 1)) != PMIX_SUCCESS) fail("Fence", rc);
    }
    v.data.bo.size = size;
    const uint64_t cpu0 = cpu_ns();
    for (size_t i = 0; i < rounds; ++i) {
        buf[0] = (char)(unsigned char)(i + 1);
        buf[size - 1] = (char)(unsigned char)me.rank;
        const uint64_t a = now_ns();
        if ((rc = PMIx_Put(PMIX_GLOBAL, "cb.value", &v)) != PMIX_SUCCESS) fail("Put", rc);
        const uint64_t b = now_ns();
        if ((rc = PMIx_Commit()) != PMIX_SUCCESS) fail("Commit", rc);
        const uint64_t c = now_ns();
        if ((rc = PMIx_Fence(NULL, 0, &collect, 1)) != PMIX_SUCCESS) fail("Fence", rc);
        const uint64_t d = now_ns();
        tp[i] = b - a;
        tc[i] = c - b;
        tf[i] = d - c;
    }
    const uint64_t cpu = (cpu_ns() - cpu0) / rounds;
    if (me.rank == 0 && nprocs > 1) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, 1);
        if ((rc = PMIx_Get(&peer, "cb.value", NULL, 0, &val)) != PMIX_SUCCESS)
            fail("Get of the neighbour's value", rc);
        if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size != size ||
            (unsigned char)val->data.bo.bytes[0] != (unsigned char)rounds ||
            (unsigned char)val->data.bo.bytes[size - 1] != 1) {
            fprintf(stderr, "commit_bench: rank 1's value is not what it put last\n");
            return 1;
        }
        PMIX_VALUE_RELEASE(val);
    }
    if (me.rank == 0) {
        printf("commit_bench: %s, %u processes, %zu bytes, %zu rounds, rank 0's medians\n",
               PMIx_Get_version(), nprocs, size, rounds);
        printf("RESULT put %llu\n", (unsigned long long)median(tp, rounds));
        printf("RESULT commit %llu\n", (unsigned long long)median(tc, rounds));
        printf("RESULT fence %llu\n", (unsigned long long)median(tf, rounds));
        printf("RESULT cpu %llu\n", (unsigned long long)cpu);
    }
    PMIX_INFO_DESTRUCT(&collect);
    free(buf);
    free(tp);
    free(tc);
    free(tf);
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Finalize", rc);
    return 0;
}
