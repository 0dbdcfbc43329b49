/* Two threads of one process Commit at once, and what its peer reads after
 * the next collecting fence is what was Put last (framework/client/client.hpp,
 * commit_order_mutex_; bench/README.md, "The server keeps commits undecoded").
 *
 * Rank 0, each round r: thread A Puts "big" (BIG_BYTES, every byte r) and
 * Commits; that commit sends everything rank 0 committed, flagged `whole`
 * (its changes are more than half of the last whole one). Thread B, at the
 * same moment (a barrier, then a short varying wait), Puts "counter" = r and
 * Commits: its commit carries only that change. If B's commit reached the
 * server (or rank 0's fence area) before A's `whole` one that was taken from
 * the datastore before B's Put, the whole one would replace B's change and
 * the peer would read counter r - 1: the change lost. Each round ends with a
 * collecting fence; rank 1 (and any further rank) Gets rank 0's "counter"
 * and "big" and checks both are r.
 *
 * With the order lock in Client::commit taken out, this failed 8 runs of 8
 * (usock and tcp, rounds 3 to 342); the many_threads test had seen it 2 times
 * in 40. Prints "commit_order ok" per rank, or "commit_order FAILED: why". alarm() bounds
 * the run; nothing asserts on time. usage: commit_order_client */
#include <pmix.h>

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kRounds = 500, kBound = 100, BIG_BYTES = 256 * 1024 };

static pmix_proc_t me;
static pthread_barrier_t start;
static uint32_t round_no;
static char *big;

static void fail(const char *why, pmix_status_t rc) {
    printf("commit_order FAILED: rank %u round %u: %s (%s)\n", me.rank, round_no, why,
           PMIx_Error_string(rc));
    fflush(stdout);
    _exit(1);
}

#define FAILED_WITH(code, ...)                    \
    do {                                          \
        char why_[160];                           \
        snprintf(why_, sizeof why_, __VA_ARGS__); \
        fail(why_, code);                         \
    } while (0)

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "commit_order FAILED: a wait passed its bound\n";
    if (write(STDOUT_FILENO, msg, sizeof msg - 1) < 0) _exit(2);
    _exit(2);
}

/* Thread A: the big value, then a commit that goes out whole. */
static void *put_big(void *arg) {
    (void)arg;
    memset(big, (int)(round_no & 0xff), BIG_BYTES);
    pmix_value_t v;
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = big;
    v.data.bo.size = BIG_BYTES;
    pthread_barrier_wait(&start);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "big", &v);
    if (rc != PMIX_SUCCESS) fail("Put big", rc);
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) fail("Commit (big)", rc);
    return NULL;
}

/* Thread B: a small change, committed while A's commit may be on its way. */
static void *put_counter(void *arg) {
    (void)arg;
    pmix_value_t v;
    v.type = PMIX_UINT32;
    v.data.uint32 = round_no;
    pthread_barrier_wait(&start);
    /* Varying, so that B's Put lands before, inside and after A's commit
     * over the rounds; none of the checks depends on how long this is. */
    usleep((useconds_t)((round_no * 37u) % 200u));
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "counter", &v);
    if (rc != PMIX_SUCCESS) fail("Put counter", rc);
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) fail("Commit (counter)", rc);
    return NULL;
}

static void fence(void) {
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (rc != PMIX_SUCCESS) fail("Fence", rc);
}

static void check_rank0(void) {
    pmix_proc_t zero;
    PMIX_LOAD_PROCID(&zero, me.nspace, 0);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&zero, "counter", NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_UINT32) fail("Get counter", rc);
    if (v->data.uint32 != round_no) {
        FAILED_WITH(PMIX_ERR_BAD_PARAM,
                    "rank 0's counter is %u: a commit's change was replaced by an earlier "
                    "whole commit",
                    v->data.uint32);
    }
    PMIX_VALUE_RELEASE(v);
    v = NULL;
    rc = PMIx_Get(&zero, "big", NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_BYTE_OBJECT) fail("Get big", rc);
    const unsigned char want = (unsigned char)(round_no & 0xff);
    if (v->data.bo.size != BIG_BYTES || (unsigned char)v->data.bo.bytes[0] != want ||
        (unsigned char)v->data.bo.bytes[BIG_BYTES - 1] != want) {
        fail("rank 0's big value is not this round's", PMIX_ERR_BAD_PARAM);
    }
    PMIX_VALUE_RELEASE(v);
}

int main(void) {
    signal(SIGALRM, on_alarm);
    alarm(kBound);
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("Init", rc);
    big = malloc(BIG_BYTES);
    if (big == NULL) fail("malloc", PMIX_ERR_NOMEM);
    pthread_barrier_init(&start, NULL, 2);
    for (round_no = 1; round_no <= kRounds; ++round_no) {
        if (me.rank == 0) {
            pthread_t a, b;
            if (pthread_create(&a, NULL, put_big, NULL) != 0 ||
                pthread_create(&b, NULL, put_counter, NULL) != 0) {
                fail("pthread_create", PMIX_ERROR);
            }
            pthread_join(a, NULL);
            pthread_join(b, NULL);
        }
        fence();
        if (me.rank != 0) check_rank0();
    }
    pthread_barrier_destroy(&start);
    free(big);
    printf("commit_order ok\n");
    fflush(stdout);
    rc = PMIx_Finalize(NULL, 0);
    return rc == PMIX_SUCCESS ? 0 : 1;
}
