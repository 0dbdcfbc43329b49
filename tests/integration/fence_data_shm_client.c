/* Collecting fences over a whole job that runs on one node: the server
 * writes the fence's data once into the job's data segment and each client
 * that maps it reads it there (framework/wire/shm_fence.hpp, ShmData); a
 * client that does not map it gets its own copy through its socket.
 * usage: fence_data_shm_client MODE [SOCKET_RANK...]
 *   rounds  the listed ranks do not map the segment (they set
 *           PMIX_MCA_wire_base_fence_shm_data=0 before PMIx_Init). Round 0:
 *           every rank Puts a 64 KiB value ("big": the segment grows) and
 *           ten 1 KiB values; rounds 1..ROUNDS: a new 8-byte key and "cur"
 *           (re-Put). After each collecting fence every rank checks every
 *           peer's values of that round and the round-0 ones.
 *   nb      two Put + Commit + collecting PMIx_Fence_nb in flight at once
 *           (the second finds the segment still unread: its data goes
 *           through the sockets), then every peer's values of both.
 * With PMIX_MCA_gds_base_verbose=5 each client logs where each fence's
 * data came from ("fence data: N bytes read in the job's segment" / "...
 * through the socket"): the test counts those lines.
 * Prints "fence_data ok" per rank. */
#include <pmix.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 6
#define BIG (64 * 1024)
#define SMALL 1024

#define FENCE_CLIENT_NAME "fence_data"
#include "fence_values.h"

static void collecting_fence(void) {
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    CHECK(rc == PMIX_SUCCESS, "collecting Fence: %s", PMIx_Error_string(rc));
}

static void check_round0(pmix_rank_t r) {
    check_bytes(r, "big", BIG, 0);
    for (int k = 0; k < 10; ++k) {
        char key[32];
        snprintf(key, sizeof key, "small%d", k);
        check_bytes(r, key, SMALL, 0);
    }
}

static int run_rounds(void) {
    put_bytes("big", BIG, 0);
    for (int k = 0; k < 10; ++k) {
        char key[32];
        snprintf(key, sizeof key, "small%d", k);
        put_bytes(key, SMALL, 0);
    }
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
    collecting_fence();
    for (pmix_rank_t r = 0; r < nprocs; ++r)
        if (r != me.rank) check_round0(r);
    for (int round = 1; round <= ROUNDS; ++round) {
        char key[32];
        snprintf(key, sizeof key, "k%d", round);
        put_u64(key, 1000u * me.rank + (unsigned)round);
        put_u64("cur", 100000u * (unsigned)round + me.rank);
        CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
        collecting_fence();
        for (pmix_rank_t r = 0; r < nprocs; ++r) {
            if (r == me.rank) continue;
            check_u64(r, key, 1000u * r + (unsigned)round);
            check_u64(r, "cur", 100000u * (unsigned)round + r);
        }
    }
    for (pmix_rank_t r = 0; r < nprocs; ++r)
        if (r != me.rank) check_round0(r);
    return 0;
}

static _Atomic int nb_done[2];
static _Atomic pmix_status_t nb_status[2];
static void nb_cb(pmix_status_t status, void *cbdata) {
    int i = (int)(intptr_t)cbdata;
    nb_status[i] = status;
    atomic_store(&nb_done[i], 1);
}

static int run_nb(void) {
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    for (int i = 0; i < 2; ++i) {
        put_bytes(i == 0 ? "first" : "second", SMALL, i + 1);
        CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
        pmix_status_t rc = PMIx_Fence_nb(NULL, 0, &collect, 1, nb_cb, (void *)(intptr_t)i);
        CHECK(rc == PMIX_SUCCESS, "Fence_nb %d: %s", i, PMIx_Error_string(rc));
    }
    /* bounded by pmixrun --timeout */
    while (!atomic_load(&nb_done[0]) || !atomic_load(&nb_done[1])) usleep(100);
    PMIX_INFO_DESTRUCT(&collect);
    CHECK(nb_status[0] == PMIX_SUCCESS && nb_status[1] == PMIX_SUCCESS, "Fence_nb: %s / %s",
          PMIx_Error_string(nb_status[0]), PMIx_Error_string(nb_status[1]));
    for (pmix_rank_t r = 0; r < nprocs; ++r) {
        if (r == me.rank) continue;
        check_bytes(r, "first", SMALL, 1);
        check_bytes(r, "second", SMALL, 2);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: fence_data_shm_client rounds|nb [SOCKET_RANK...]\n");
        return 2;
    }
    const char *rank_env = getenv("PMIX_RANK");
    for (int i = 2; i < argc && rank_env != NULL; ++i) {
        if (atoi(argv[i]) == atoi(rank_env)) setenv("PMIX_MCA_wire_base_fence_shm_data", "0", 1);
    }
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS, "job size");
    nprocs = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    int rcode = strcmp(argv[1], "nb") == 0 ? run_nb() : run_rounds();
    if (rcode == 0) {
        printf("fence_data ok\n");
        fflush(stdout);
    }
    PMIx_Finalize(NULL, 0);
    return rcode;
}
