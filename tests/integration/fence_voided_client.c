/* A fence in the shared-memory barrier whose generation is voided while its
 * waiter sleeps (framework/wire/shm_fence.hpp, ShmFence::wait and mend):
 * rank 0 enters a PMIx_Fence over the job (no data: the fence that takes the
 * barrier) and is stopped
 * (SIGSTOP) once its arrival is counted; rank 1 then finalizes (the server
 * breaks the barrier) and initializes again (every participant is back: the
 * server mends it, a new generation with no arrivals), and lets rank 0 go
 * on (SIGCONT). Rank 2 never enters that fence. Rank 0's fence must fail
 * (PMIX_ERR_LOST_CONNECTION, as the break said): it never completed, and
 * passing it would tell rank 0 that its peers had all entered a fence they
 * never entered.
 *
 * Rank 1 follows the barrier in the job's segment, named by the job-level key
 * "pmixpp.fence.shm"; the layout facts it reads (copied from
 * framework/wire/shm_fence.cpp, ShmFence::Layout): u32 magic "PXFB" at 0, u64
 * state at 8 (arrivals in its low 16 bits), i32 broken status at 20.
 * usage: fence_voided_client (3 processes). Prints "fence_voided ok: ..." on
 * rank 0 and "fence_voided done" on every rank. */
#include <pmix.h>

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static pmix_proc_t me;

#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (!(cond)) {                                                 \
            fprintf(stdout, "fence_voided rank %u FAILED: ", me.rank); \
            fprintf(stdout, __VA_ARGS__);                              \
            fprintf(stdout, "\n");                                     \
            fflush(stdout);                                            \
            exit(1);                                                   \
        }                                                              \
    } while (0)

/* Waits (bounded: 30 s, then fails) until `done()` holds. */
static void await(int (*done)(void), const char *what) {
    for (int i = 0; i < 30000; ++i) {
        if (done()) return;
        usleep(1000);
    }
    CHECK(0, "timed out waiting for %s", what);
}

static volatile const unsigned char *seg;

static uint64_t state(void) {
    return __atomic_load_n((const uint64_t *)(seg + 8), __ATOMIC_ACQUIRE);
}
static int32_t broken(void) {
    return __atomic_load_n((const int32_t *)(seg + 20), __ATOMIC_ACQUIRE);
}
static int one_arrived(void) {
    return (state() & 0xffff) == 1;
}
static int is_broken(void) {
    return broken() != PMIX_SUCCESS;
}
static int is_mended(void) {
    return broken() == PMIX_SUCCESS && (state() & 0xffff) == 0;
}

static void map_segment(void) {
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&wild, "pmixpp.fence.shm", NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_STRING, "no fence segment: %s",
          PMIx_Error_string(rc));
    int fd = shm_open(v->data.string, O_RDONLY, 0);
    CHECK(fd >= 0, "shm_open %s", v->data.string);
    PMIX_VALUE_RELEASE(v);
    void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(p != MAP_FAILED, "mmap");
    close(fd);
    seg = p;
    CHECK(*(const uint32_t *)seg == 0x50584642u, "the segment's layout changed");
}

static void put_int(pmix_scope_t scope, const char *key, int x) {
    pmix_value_t v;
    PMIX_VALUE_LOAD(&v, &x, PMIX_INT);
    CHECK(PMIx_Put(scope, key, &v) == PMIX_SUCCESS, "Put %s", key);
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
}

/* Rank 0's "fv.done", asked of the server until rank 0 committed it. */
static void await_rank0_done(void) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, 0);
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;
    for (int i = 0; i < 30000 && rc != PMIX_SUCCESS; ++i) {
        pmix_value_t *v = NULL;
        rc = PMIx_Get(&p, "fv.done", NULL, 0, &v);
        if (rc == PMIX_SUCCESS)
            PMIX_VALUE_RELEASE(v);
        else
            usleep(1000);
    }
    CHECK(rc == PMIX_SUCCESS, "rank 0 never finished: %s", PMIx_Error_string(rc));
}

int main(void) {
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "Init: %s", PMIx_Error_string(rc));
    put_int(PMIX_LOCAL, "fv.pid", (int)getpid());
    CHECK(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "first Fence");
    if (me.rank == 0) {
        /* A fence without data: the one that takes the barrier. */
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(rc != PMIX_SUCCESS, "the fence passed although ranks 1 and 2 never entered it");
        printf("fence_voided ok: rank 0's fence returned %s\n", PMIx_Error_string(rc));
        put_int(PMIX_LOCAL, "fv.done", 1);
    } else if (me.rank == 1) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, me.nspace, 0);
        pmix_value_t *v = NULL;
        rc = PMIx_Get(&p, "fv.pid", NULL, 0, &v);
        CHECK(rc == PMIX_SUCCESS, "Get rank 0's pid: %s", PMIx_Error_string(rc));
        const pid_t pid0 = (pid_t)v->data.integer;
        PMIX_VALUE_RELEASE(v);
        map_segment();
        await(one_arrived, "rank 0's arrival");
        CHECK(kill(pid0, SIGSTOP) == 0, "SIGSTOP");
        CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "Finalize");
        await(is_broken, "the break");
        rc = PMIx_Init(&me, NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "Init again: %s", PMIx_Error_string(rc));
        await(is_mended, "the mend");
        CHECK(kill(pid0, SIGCONT) == 0, "SIGCONT");
        await_rank0_done();
    } else {
        await_rank0_done();
    }
    CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "Finalize");
    printf("fence_voided done: rank %u\n", me.rank);
    return 0;
}
