/* How often PMIx_Finalize puts its calling thread to sleep, and what is left
 * running when it returns (bench/README.md, "Finalize ends the loop from the
 * answer").
 *
 * Each of ROUNDS rounds: PMIx_Init, a Put/Commit, PMIx_Finalize. Around the
 * Finalize the calling thread reads its own voluntary context switches
 * (/proc/thread-self/status: each is one sleep of this thread) and those of
 * every thread, the progress thread's included once it ended (getrusage).
 * The server's answer ends the progress thread on that thread, and the caller
 * sleeps once, until the thread has exited; the progress thread sleeps at
 * most once, until the answer: under 2 sleeps per call (1.7 measured).
 * Before, the caller slept until the answer and again while release() woke
 * the thread to stop and joined it, and the thread slept once more between
 * the answer and the stop: 4.5 per call over all threads. The checks allow
 * contention on a lock now and then: at most 3 sleeps of the caller in 2
 * calls, and 5 over all threads. After every Finalize the process is down
 * to this one thread (/proc/self/task).
 *
 * Prints "finalize sleeps ok: rank N: S sleeps in R calls".
 * usage: finalize_sleeps_client [rounds] */
#include <pmix.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int failures = 0;
static pmix_proc_t me;

#define EXPECT(cond, ...)                                          \
    do {                                                           \
        if (!(cond)) {                                             \
            fprintf(stderr, "finalize_sleeps rank %u: ", me.rank); \
            fprintf(stderr, __VA_ARGS__);                          \
            fprintf(stderr, "\n");                                 \
            ++failures;                                            \
        }                                                          \
    } while (0)

/* This thread's voluntary context switches; -1 if unreadable. */
static long thread_sleeps(void) {
    FILE *f = fopen("/proc/thread-self/status", "r");
    if (f == NULL) return -1;
    char line[256];
    long n = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1) break;
    }
    fclose(f);
    return n;
}

/* Every thread's, the ended ones' included (getrusage). */
static long process_sleeps(void) {
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_nvcsw : -1;
}

static int threads_alive(void) {
    DIR *d = opendir("/proc/self/task");
    if (d == NULL) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] != '.') ++n;
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 10;
    long total = 0, ptotal = 0;
    for (int round = 1; round <= rounds; ++round) {
        pmix_status_t rc = PMIx_Init(&me, NULL, 0);
        EXPECT(rc == PMIX_SUCCESS, "round %d: PMIx_Init: %s", round, PMIx_Error_string(rc));
        if (rc != PMIX_SUCCESS) break;
        pmix_value_t v;
        PMIX_VALUE_LOAD(&v, &round, PMIX_INT);
        EXPECT(PMIx_Put(PMIX_LOCAL, "test.round", &v) == PMIX_SUCCESS, "round %d: Put", round);
        EXPECT(PMIx_Commit() == PMIX_SUCCESS, "round %d: Commit", round);
        const long before = thread_sleeps(), pbefore = process_sleeps();
        rc = PMIx_Finalize(NULL, 0);
        const long after = thread_sleeps(), pafter = process_sleeps();
        ptotal += pafter - pbefore;
        EXPECT(rc == PMIX_SUCCESS, "round %d: PMIx_Finalize: %s", round, PMIx_Error_string(rc));
        EXPECT(before >= 0 && after >= before, "round %d: cannot read this thread's switches",
               round);
        total += after - before;
        const int alive = threads_alive();
        EXPECT(alive == 1, "round %d: %d threads alive after PMIx_Finalize returned", round, alive);
        EXPECT(PMIx_Initialized() == 0, "round %d: still initialized after Finalize", round);
    }
    EXPECT(2 * total <= 3L * rounds,
           "PMIx_Finalize's caller slept %ld times in %d calls: a second sleep in most calls",
           total, rounds);
    EXPECT(2 * ptotal <= 5L * rounds,
           "PMIx_Finalize slept %ld times in %d calls over all threads: the progress thread "
           "was woken again to stop",
           ptotal, rounds);
    if (failures != 0) return 1;
    printf("finalize sleeps ok: rank %u: %ld sleeps in %d calls (%ld in all threads)\n", me.rank,
           total, rounds, ptotal);
    return 0;
}
