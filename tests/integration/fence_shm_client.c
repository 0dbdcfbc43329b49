/* Fences without data of a job that runs entirely on this node: they meet in
 * a shared-memory barrier (framework/wire/shm_fence.hpp).
 * usage: fence_shm_client MODE
 *   stopped   rank 0 stops the server (SIGSTOP) after a first fence; every
 *             rank then runs 50 blocking fences, which complete without the
 *             server; rank 0 resumes it (SIGCONT) before finalizing.
 *   mixed     200 rounds: Put of a new key, Commit, fence (even ranks
 *             PMIx_Fence, odd ranks PMIx_Fence_nb, which the server joins to
 *             the same barrier), then a Get of every peer's new key: it must
 *             hold that round's value (commit ordering).
 *   timeout   the highest rank stays out of one fence: the others' fence
 *             returns PMIX_ERR_TIMEOUT; then every rank fences and all pass.
 * Prints "fence_shm ok" on success. */
#include <pmix.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond, ...)                                     \
    do {                                                     \
        if (!(cond)) {                                       \
            fprintf(stderr, "fence_shm rank %u: ", me.rank); \
            fprintf(stderr, __VA_ARGS__);                    \
            fprintf(stderr, "\n");                           \
            return 1;                                        \
        }                                                    \
    } while (0)

static pmix_proc_t me;

static _Atomic int nb_done;
static _Atomic pmix_status_t nb_status;
static void nb_cb(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    nb_status = status;
    atomic_store(&nb_done, 1);
}

static pmix_status_t fence_nb_and_wait(void) {
    nb_done = 0;
    pmix_status_t rc = PMIx_Fence_nb(NULL, 0, NULL, 0, nb_cb, NULL);
    if (rc != PMIX_SUCCESS) return rc;
    while (!atomic_load(&nb_done)) usleep(50);
    return nb_status;
}

static int run_stopped(void) {
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "first fence: %s", PMIx_Error_string(rc));
    pid_t server = getppid(); /* pmixrun forks its clients */
    if (me.rank == 0) CHECK(kill(server, SIGSTOP) == 0, "SIGSTOP the server");
    pmix_info_t t;
    int timeout = 20;
    PMIX_INFO_LOAD(&t, PMIX_TIMEOUT, &timeout, PMIX_INT);
    for (int i = 0; i < 50; ++i) {
        rc = PMIx_Fence(NULL, 0, &t, 1);
        if (rc != PMIX_SUCCESS && me.rank == 0) kill(server, SIGCONT);
        CHECK(rc == PMIX_SUCCESS, "fence %d with the server stopped: %s", i, PMIx_Error_string(rc));
    }
    if (me.rank == 0) CHECK(kill(server, SIGCONT) == 0, "SIGCONT the server");
    return 0;
}

static int run_mixed(uint32_t size) {
    for (int round = 0; round < 200; ++round) {
        char key[PMIX_MAX_KEYLEN + 1];
        snprintf(key, sizeof key, "r%d", round);
        pmix_value_t v;
        v.type = PMIX_INT;
        v.data.integer = round * 1000 + (int)me.rank;
        pmix_status_t rc = PMIx_Put(PMIX_LOCAL, key, &v);
        CHECK(rc == PMIX_SUCCESS, "put: %s", PMIx_Error_string(rc));
        rc = PMIx_Commit();
        CHECK(rc == PMIX_SUCCESS, "commit: %s", PMIx_Error_string(rc));
        rc = (me.rank % 2 == 0) ? PMIx_Fence(NULL, 0, NULL, 0) : fence_nb_and_wait();
        CHECK(rc == PMIX_SUCCESS, "fence of round %d: %s", round, PMIx_Error_string(rc));
        for (uint32_t r = 0; r < size; ++r) {
            if (r == me.rank) continue;
            pmix_proc_t peer;
            PMIX_LOAD_PROCID(&peer, me.nspace, r);
            pmix_value_t *got = NULL;
            rc = PMIx_Get(&peer, key, NULL, 0, &got);
            CHECK(rc == PMIX_SUCCESS, "round %d: get %s of rank %u: %s", round, key, r,
                  PMIx_Error_string(rc));
            CHECK(got->type == PMIX_INT && got->data.integer == round * 1000 + (int)r,
                  "round %d: rank %u's %s is wrong", round, r, key);
            PMIX_VALUE_RELEASE(got);
        }
    }
    return 0;
}

static int run_timeout(uint32_t size) {
    pmix_status_t rc;
    if (me.rank != size - 1) {
        pmix_info_t t;
        int timeout = 1;
        PMIX_INFO_LOAD(&t, PMIX_TIMEOUT, &timeout, PMIX_INT);
        rc = PMIx_Fence(NULL, 0, &t, 1);
        CHECK(rc == PMIX_ERR_TIMEOUT, "fence without the last rank: %s (want TIMEOUT)",
              PMIx_Error_string(rc));
        /* Tell the last rank that the timed-out fence is over. */
        pmix_value_t v;
        v.type = PMIX_INT;
        v.data.integer = 1;
        PMIx_Put(PMIX_LOCAL, "timed-out", &v);
        PMIx_Commit();
    } else {
        /* Wait until every other rank has seen its fence time out. */
        for (uint32_t r = 0; r + 1 < size; ++r) {
            pmix_proc_t peer;
            PMIX_LOAD_PROCID(&peer, me.nspace, r);
            pmix_value_t *got = NULL;
            pmix_info_t t;
            int timeout = 30;
            PMIX_INFO_LOAD(&t, PMIX_TIMEOUT, &timeout, PMIX_INT);
            rc = PMIx_Get(&peer, "timed-out", &t, 1, &got);
            CHECK(rc == PMIX_SUCCESS, "waiting for rank %u: %s", r, PMIx_Error_string(rc));
            PMIX_VALUE_RELEASE(got);
        }
    }
    for (int i = 0; i < 3; ++i) {
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "fence %d after the timeout: %s", i, PMIx_Error_string(rc));
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val) == PMIX_SUCCESS, "job size");
    uint32_t size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    int rc = 2;
    if (strcmp(argv[1], "stopped") == 0)
        rc = run_stopped();
    else if (strcmp(argv[1], "mixed") == 0)
        rc = run_mixed(size);
    else if (strcmp(argv[1], "timeout") == 0)
        rc = run_timeout(size);
    if (rc != 0) return rc;
    pmix_status_t frc = PMIx_Fence(NULL, 0, NULL, 0);
    CHECK(frc == PMIX_SUCCESS, "final fence: %s", PMIx_Error_string(frc));
    printf("fence_shm ok: rank %u\n", me.rank);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
