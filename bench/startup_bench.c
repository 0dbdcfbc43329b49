/* startup_bench: what PMIx_Init and PMIx_Finalize cost a process, one source
 * for both libraries (public PMIx API only; bench/run_startup.sh builds it
 * once against OpenPMIx 4.2.2's headers and runs it on OpenPMIx and on ours
 * under the same Debian mpirun, and on ours under pmixrun).
 *
 * usage: startup_bench
 *
 * Each rank measures around its own PMIx_Init and PMIx_Finalize:
 *   wall     CLOCK_MONOTONIC
 *   cpu      CLOCK_PROCESS_CPUTIME_ID (every thread of the process: the
 *            library's progress thread included)
 *   vcsw     voluntary context switches (getrusage, the whole process):
 *            how often the process slept; on a loaded machine each sleep
 *            is a wait for the scheduler
 *   startcpu process CPU from exec to the first line of main (loading the
 *            libraries)
 * After Init every rank enters a fence without data (not timed, as MPI_Init
 * has one), then the figures are exchanged by a collecting fence and rank 0
 * prints "RESULT <name> <median over the ranks>" (nanoseconds, or a count
 * for vcsw) and "RESULT <name>_max <slowest rank>". Finalize cannot report
 * through PMIx once it has run: every rank prints "FINALIZE <wall ns>
 * <cpu ns> <vcsw>" and the script takes the median. Nothing is asserted on
 * time. */
#include <pmix.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static uint64_t clock_ns(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t vcsw(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)ru.ru_nvcsw;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void fail(const char *what, pmix_status_t rc) {
    fprintf(stderr, "startup_bench: %s: %s\n", what, PMIx_Error_string(rc));
    exit(1);
}

enum { F_WALL, F_CPU, F_VCSW, F_START, NF };
static const char *const names[NF] = {"init", "init_cpu", "init_vcsw", "start_cpu"};

int main(void) {
    const uint64_t start_cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    pmix_proc_t me;
    pmix_status_t rc;
    const uint64_t c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), s0 = vcsw();
    const uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Init", rc);
    uint64_t mine[NF];
    mine[F_WALL] = clock_ns(CLOCK_MONOTONIC) - t0;
    mine[F_CPU] = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
    mine[F_VCSW] = vcsw() - s0;
    mine[F_START] = start_cpu;

    /* The start-up barrier MPI_Init has (not timed). */
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("start-up Fence", rc);

    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    if ((rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val)) != PMIX_SUCCESS)
        fail("Get PMIX_JOB_SIZE", rc);
    const uint32_t nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);

    pmix_value_t v;
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)mine;
    v.data.bo.size = sizeof mine;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "sb.figures", &v)) != PMIX_SUCCESS) fail("Put", rc);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) fail("Commit", rc);
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if ((rc = PMIx_Fence(NULL, 0, &collect, 1)) != PMIX_SUCCESS) fail("collecting Fence", rc);
    PMIX_INFO_DESTRUCT(&collect);

    if (me.rank == 0) {
        uint64_t *col = malloc(nprocs * sizeof *col);
        uint64_t(*all)[NF] = malloc(nprocs * sizeof *all);
        if (col == NULL || all == NULL) return 1;
        for (uint32_t r = 0; r < nprocs; ++r) {
            pmix_proc_t peer;
            PMIX_LOAD_PROCID(&peer, me.nspace, r);
            pmix_value_t *pv = NULL;
            if ((rc = PMIx_Get(&peer, "sb.figures", NULL, 0, &pv)) != PMIX_SUCCESS)
                fail("Get a peer's figures", rc);
            if (pv->type != PMIX_BYTE_OBJECT || pv->data.bo.size != sizeof mine) {
                fprintf(stderr, "startup_bench: rank %u's figures are malformed\n", r);
                return 1;
            }
            memcpy(all[r], pv->data.bo.bytes, sizeof mine);
            PMIX_VALUE_RELEASE(pv);
        }
        for (int f = 0; f < NF; ++f) {
            for (uint32_t r = 0; r < nprocs; ++r) col[r] = all[r][f];
            qsort(col, nprocs, sizeof *col, cmp_u64);
            const uint64_t med =
                nprocs % 2 ? col[nprocs / 2] : (col[nprocs / 2 - 1] + col[nprocs / 2]) / 2;
            printf("RESULT %s %llu\n", names[f], (unsigned long long)med);
            printf("RESULT %s_max %llu\n", names[f], (unsigned long long)col[nprocs - 1]);
        }
        printf("startup_bench: %u processes\n", nprocs);
        fflush(stdout);
        free(col);
        free(all);
    }

    /* All ranks enter Finalize together, as MPI_Finalize's barrier does. */
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("Fence", rc);
    const uint64_t fc0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), fs0 = vcsw();
    const uint64_t f0 = clock_ns(CLOCK_MONOTONIC);
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Finalize", rc);
    const uint64_t fw = clock_ns(CLOCK_MONOTONIC) - f0;
    printf("FINALIZE %llu %llu %llu\n", (unsigned long long)fw,
           (unsigned long long)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - fc0),
           (unsigned long long)(vcsw() - fs0));
    return 0;
}
