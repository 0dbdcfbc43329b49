/* soak_bench: a long job's traffic (issue 19, deliverables 5 and 7), public
 * PMIx API only. bench/soak.sh runs it under pmixrun and samples the server's
 * memory; bench/README.md ("Soak and new-key rounds") has the figures.
 *
 * usage: soak_bench mixed ROUNDS|SECONDSs
 *        soak_bench newkeys ROUNDS
 *
 * mixed    every round: Put the same 8 keys again with this round's values,
 *          Commit, a fence (collecting data every other round, else without
 *          data), a Get of two peers' keys checked against the values they
 *          Put this round; every 8th round one rank (it rotates) notifies an
 *          event to the namespace, which every rank counts. With "Ns" the job
 *          runs for N seconds: rank 0 decides each round whether it was the
 *          last one and Puts that decision with its values, so that all ranks
 *          stop after the same round. The memory a server holds for this job
 *          should not grow with the number of rounds (the keys are re-put).
 * newkeys  every round: Put one NEW key, Commit, collecting Fence, Get the
 *          next rank's key of this round (checked). Rank 0 prints, for each
 *          tenth of the rounds, "TENTH i <median round ns> <server CPU us per
 *          round> <rank 0's CPU us per round>": a flat per-round cost means
 *          the tenths are alike. The server's CPU time is its parent's
 *          (pmixrun is the server and starts the ranks; /proc/PPID/stat),
 *          which a loaded machine disturbs far less than wall time.
 *
 * Any wrong value, failed call or lost round exits 1 ("soak_bench: ...").
 * Rank 0 prints "SOAK rounds=R events=E" (mixed) or the tenths (newkeys);
 * nothing is asserted on time. */
#include <pmix.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EVENT_CODE (PMIX_EXTERNAL_ERR_BASE - 77)

static pmix_proc_t me;
static uint32_t nprocs;
static _Atomic unsigned long events_seen = 0; /* counted on the progress thread */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fail(const char *what, long round, pmix_status_t rc) {
    fprintf(stderr, "soak_bench: rank %u round %ld: %s: %s\n", me.rank, round, what,
            PMIx_Error_string(rc));
    exit(1);
}

static void put_u64(const char *key, uint64_t v, long round) {
    pmix_value_t val;
    val.type = PMIX_UINT64;
    val.data.uint64 = v;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    if (rc != PMIX_SUCCESS) fail("PMIx_Put", round, rc);
}

static uint64_t get_u64(pmix_rank_t rank, const char *key, long round) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) fail(key, round, rc);
    if (v->type != PMIX_UINT64) fail("a value of the wrong type", round, PMIX_ERR_TYPE_MISMATCH);
    uint64_t x = v->data.uint64;
    PMIX_VALUE_RELEASE(v);
    return x;
}

static uint64_t value_of(pmix_rank_t rank, long round, int k) {
    return ((uint64_t)round << 24) ^ ((uint64_t)rank << 4) ^ (uint64_t)k;
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    atomic_fetch_add_explicit(&events_seen, 1, memory_order_relaxed);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void fence(int collect, long round) {
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) fail("PMIx_Fence", round, rc);
}

static int mixed(long rounds, long seconds) {
    pmix_status_t code = EVENT_CODE;
    pmix_status_t rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", -1, rc);
    const uint64_t start = now_ns();
    long round = 0;
    for (;; ++round) {
        char key[32];
        for (int k = 0; k < 8; ++k) {
            snprintf(key, sizeof key, "soak.k%d", k);
            put_u64(key, value_of(me.rank, round, k), round);
        }
        int last =
            seconds > 0 ? now_ns() - start >= (uint64_t)seconds * 1000000000u : round + 1 >= rounds;
        if (me.rank == 0) put_u64("soak.last", (uint64_t)last, round);
        rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) fail("PMIx_Commit", round, rc);
        /* The stop decision must reach every rank: a collecting fence when
         * the job is timed (its Get reads rank 0's decision), else every
         * other round. */
        fence(seconds > 0 || round % 2 == 0, round);
        if (round % 8 == 0 && (long)me.rank == (round / 8) % (long)nprocs) {
            pmix_info_t range;
            pmix_data_range_t r = PMIX_RANGE_NAMESPACE;
            PMIX_INFO_LOAD(&range, PMIX_RANGE, &r, PMIX_DATA_RANGE);
            rc = PMIx_Notify_event(EVENT_CODE, &me, PMIX_RANGE_NAMESPACE, &range, 1, NULL, NULL);
            PMIX_INFO_DESTRUCT(&range);
            if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
                fail("PMIx_Notify_event", round, rc);
        }
        for (int j = 1; j <= 2; ++j) {
            const pmix_rank_t peer = (me.rank + (pmix_rank_t)(j * (round % 7 + 1))) % nprocs;
            const int k = (int)((round + j) % 8);
            snprintf(key, sizeof key, "soak.k%d", k);
            /* a fence without data: the peer's value of the round before
             * may still be the one served; both are right */
            const uint64_t got = get_u64(peer, key, round);
            if (got != value_of(peer, round, k) &&
                !(round % 2 == 1 && seconds == 0 && got == value_of(peer, round - 1, k))) {
                fprintf(stderr, "soak_bench: rank %u round %ld: rank %u's %s is %llu\n", me.rank,
                        round, peer, key, (unsigned long long)got);
                exit(1);
            }
        }
        if (seconds > 0) last = (int)get_u64(0, "soak.last", round);
        if (last) break;
    }
    /* one more barrier so that every event of the last rounds was sent */
    fence(0, round);
    if (me.rank == 0) {
        printf("SOAK rounds=%ld events=%lu seconds=%.1f\n", round + 1,
               atomic_load_explicit(&events_seen, memory_order_relaxed),
               (double)(now_ns() - start) / 1e9);
    }
    return 0;
}

/* CPU time (user + system) of `pid` in microseconds, 0 when unreadable. */
static uint64_t cpu_us_of(pid_t pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command may hold spaces */
    unsigned long long utime = 0, stime = 0;
    if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                            &stime) != 2) {
        return 0;
    }
    return (utime + stime) * 1000000u / (uint64_t)sysconf(_SC_CLK_TCK);
}

static uint64_t self_cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int newkeys(long rounds) {
    uint64_t *t = calloc((size_t)rounds, sizeof *t);
    if (t == NULL) return 1;
    const long tenth = rounds / 10 > 0 ? rounds / 10 : 1;
    uint64_t server_cpu[11] = {0}, my_cpu[11] = {0};
    const pmix_rank_t next = (me.rank + 1) % nprocs;
    for (long round = 0; round < rounds; ++round) {
        if (me.rank == 0 && round % tenth == 0 && round / tenth < 10) {
            server_cpu[round / tenth] = cpu_us_of(getppid());
            my_cpu[round / tenth] = self_cpu_us();
        }
        char key[32];
        snprintf(key, sizeof key, "new.%ld", round);
        const uint64_t t0 = now_ns();
        put_u64(key, value_of(me.rank, round, 0), round);
        pmix_status_t rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) fail("PMIx_Commit", round, rc);
        fence(1, round);
        const uint64_t got = get_u64(next, key, round);
        t[round] = now_ns() - t0;
        if (got != value_of(next, round, 0)) {
            fprintf(stderr, "soak_bench: rank %u round %ld: rank %u's %s is wrong\n", me.rank,
                    round, next, key);
            return 1;
        }
    }
    if (me.rank == 0) {
        long parts = 0;
        for (long i = 0; i * tenth < rounds && i < 10; ++i) parts = i + 1;
        server_cpu[parts] = cpu_us_of(getppid());
        my_cpu[parts] = self_cpu_us();
        for (long i = 0; i < parts; ++i) {
            long n = i == 9 ? rounds - i * tenth : tenth;
            if (i * tenth + n > rounds) n = rounds - i * tenth;
            qsort(t + i * tenth, (size_t)n, sizeof *t, cmp_u64);
            printf("TENTH %ld %llu %llu %llu\n", i, (unsigned long long)t[i * tenth + n / 2],
                   (unsigned long long)((server_cpu[i + 1] - server_cpu[i]) / (uint64_t)n),
                   (unsigned long long)((my_cpu[i + 1] - my_cpu[i]) / (uint64_t)n));
        }
        printf("NEWKEYS rounds=%ld\n", rounds);
    }
    free(t);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "mixed") != 0 && strcmp(argv[1], "newkeys") != 0)) {
        fprintf(stderr, "usage: soak_bench mixed ROUNDS|SECONDSs | newkeys ROUNDS\n");
        return 64;
    }
    const size_t len = strlen(argv[2]);
    const long n = strtol(argv[2], NULL, 10);
    const int timed = len > 0 && argv[2][len - 1] == 's';
    if (n <= 0 || (timed && strcmp(argv[1], "mixed") != 0)) {
        fprintf(stderr, "soak_bench: bad count '%s'\n", argv[2]);
        return 64;
    }
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_Init", -1, rc);
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) fail("PMIx_Get(JOB_SIZE)", -1, rc);
    nprocs = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    int status = strcmp(argv[1], "mixed") == 0 ? mixed(timed ? 0 : n, timed ? n : 0) : newkeys(n);
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_Finalize", -1, rc);
    return status;
}
