/* Collecting fences through the shared-memory barrier (framework/wire/
 * shm_fence.hpp, ShmArea; framework/server/README.md, "Collecting fences
 * through the barrier"): each rank writes what it committed into its own
 * fence area, meets the others in the barrier and reads their areas; no
 * server answer carries the data. With PMIX_MCA_gds_base_verbose=5 each
 * client logs where each fence's data came from ("... read in the peers'
 * areas (generation G, N asked of the server)", "... of the peers' areas
 * through the socket" for a fence the server joined for it): the tests
 * count those lines.
 * usage: fence_coll_client MODE
 *   sizes   three rounds each of 1 x 8 B, 10 x 1 KiB and 1 x 64 KiB values
 *           (re-Put every round) plus a new key per round; after each
 *           collecting PMIx_Fence every rank checks every peer's latest
 *           values by Get.
 *   mixed   as sizes, but rank 1 fences with PMIx_Fence_nb (the server
 *           joins the barrier for it and writes its area).
 *   newkey  60 rounds of one new key per round; each rank checks every
 *           peer's new key and its first one.
 *   timeout ranks 0, 1, 3 time out (PMIX_TIMEOUT) waiting for rank 2, fence
 *           again and meet its late fence; every rank reads every value.
 *   dies    one collecting fence, then rank 2 exits without finalizing
 *           before the second: every other rank's fence fails.
 *   hold    six rounds of a 64 KiB value re-Put (each commit whole) with
 *           collecting fences and no Get, then every rank Gets every
 *           peer's value: the peers' bytes stay in their areas until that
 *           Get ("... copied from their areas for a Get", one per peer),
 *           none is copied before an arrival. From the second round on
 *           each commit is whole and held back, replaced by the next; the
 *           last goes out before the Finalize standing for five ("stands
 *           for 5 commits", the server's gds debug line).
 *   deltas  a 4 KiB value, then a new 8-byte key per round (commits that
 *           are changes, not whole) over eight collecting fences and two
 *           without data, with no Get until the end: every rank then reads
 *           every peer's every value (held bytes copied before the arrival
 *           that lets their writer reuse them).
 *   asked   after a collecting fence, rank 1 Gets rank 0's value from the
 *           server (PMIX_GET_REFRESH_CACHE) while rank 0 waits in a fence
 *           without data: the server asks rank 0 for the commit it holds
 *           back (Command::commit_flush), else both would wait forever.
 * Prints "fence_coll ok" per rank ("fence_coll died ok" in dies). */
#include <pmix.h>

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FENCE_CLIENT_NAME "fence_coll"
#include "fence_values.h"

static _Atomic int nb_done;
static _Atomic pmix_status_t nb_status;
static void nb_cb(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    nb_status = status;
    atomic_store(&nb_done, 1);
}

static pmix_status_t collecting_fence(int nb) {
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc;
    if (nb) {
        atomic_store(&nb_done, 0);
        rc = PMIx_Fence_nb(NULL, 0, &collect, 1, nb_cb, NULL);
        if (rc == PMIX_SUCCESS) {
            while (!atomic_load(&nb_done)) usleep(100); /* bounded by pmixrun --timeout */
            rc = nb_status;
        }
    } else {
        rc = PMIx_Fence(NULL, 0, &collect, 1);
    }
    PMIX_INFO_DESTRUCT(&collect);
    return rc;
}

/* 8 B, 10 x 1 KiB and 64 KiB, three rounds each, values re-Put every round
 * and one new key per round. */
static int run_sizes(int nb_rank) {
    static const size_t sizes[3][2] = {{1, 8}, {10, 1024}, {1, 64 * 1024}};
    int round = 0;
    for (int s = 0; s < 3; ++s) {
        for (int rep = 0; rep < 3; ++rep, ++round) {
            const size_t n = sizes[s][0], size = sizes[s][1];
            char key[32];
            for (size_t k = 0; k < n; ++k) {
                snprintf(key, sizeof key, "v%zu.%zu", size, k);
                put_bytes(key, size, round);
            }
            snprintf(key, sizeof key, "k%d", round);
            put_u64(key, 1000u * me.rank + (unsigned)round);
            CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
            pmix_status_t rc = collecting_fence((int)me.rank == nb_rank);
            CHECK(rc == PMIX_SUCCESS, "collecting fence round %d: %s", round,
                  PMIx_Error_string(rc));
            for (pmix_rank_t r = 0; r < nprocs; ++r) {
                if (r == me.rank) continue;
                for (size_t k = 0; k < n; ++k) {
                    snprintf(key, sizeof key, "v%zu.%zu", size, k);
                    check_bytes(r, key, size, round);
                }
                for (int old = 0; old <= round; ++old) {
                    snprintf(key, sizeof key, "k%d", old);
                    check_u64(r, key, 1000u * r + (unsigned)old);
                }
            }
        }
    }
    return 0;
}

static int run_newkey(void) {
    for (int round = 0; round < 60; ++round) {
        char key[32];
        snprintf(key, sizeof key, "n%d", round);
        put_u64(key, 100000u * me.rank + (unsigned)round);
        CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
        pmix_status_t rc = collecting_fence(0);
        CHECK(rc == PMIX_SUCCESS, "collecting fence round %d: %s", round, PMIx_Error_string(rc));
        for (pmix_rank_t r = 0; r < nprocs; ++r) {
            if (r == me.rank) continue;
            check_u64(r, key, 100000u * r + (unsigned)round);
            check_u64(r, "n0", 100000u * r);
        }
    }
    return 0;
}

/* Ranks 0, 1 and 3 time out (PMIX_TIMEOUT 1) while rank 2 sleeps, then
 * fence again and meet rank 2's late fence: every rank reads every value. */
static int run_timeout(void) {
    put_u64("t", 5u + me.rank);
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
    pmix_status_t rc;
    if (me.rank == 2) {
        sleep(3);
    } else {
        pmix_info_t info[2];
        bool yes = true;
        int one = 1;
        PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &one, PMIX_INT);
        rc = PMIx_Fence(NULL, 0, info, 2);
        CHECK(rc == PMIX_ERR_TIMEOUT, "fence with a sleeping peer: %s", PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&info[0]);
        PMIX_INFO_DESTRUCT(&info[1]);
    }
    rc = collecting_fence(0);
    CHECK(rc == PMIX_SUCCESS, "collecting fence after the timeout: %s", PMIx_Error_string(rc));
    for (pmix_rank_t r = 0; r < nprocs; ++r)
        if (r != me.rank) check_u64(r, "t", 5u + r);
    return 0;
}

static int run_dies(void) {
    put_u64("before", 7u + me.rank);
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
    pmix_status_t rc = collecting_fence(0);
    CHECK(rc == PMIX_SUCCESS, "first collecting fence: %s", PMIx_Error_string(rc));
    for (pmix_rank_t r = 0; r < nprocs; ++r)
        if (r != me.rank) check_u64(r, "before", 7u + r);
    put_u64("after", 9u + me.rank);
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
    if (me.rank == 2) {
        usleep(200000); /* the others are in the barrier by now, most likely */
        _exit(3);
    }
    rc = collecting_fence(0);
    CHECK(rc != PMIX_SUCCESS, "the fence with a dead participant succeeded");
    printf("fence_coll died ok: %s\n", PMIx_Error_string(rc));
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    exit(0);
}

static int run_hold(void) {
    enum { kRounds = 6, kSize = 64 * 1024 };
    for (int round = 0; round < kRounds; ++round) {
        put_bytes("big", kSize, round);
        CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
        pmix_status_t rc = collecting_fence(0);
        CHECK(rc == PMIX_SUCCESS, "collecting fence round %d: %s", round, PMIx_Error_string(rc));
    }
    for (pmix_rank_t r = 0; r < nprocs; ++r)
        if (r != me.rank) check_bytes(r, "big", kSize, kRounds - 1);
    return 0;
}

static int run_deltas(void) {
    enum { kRounds = 8 };
    put_bytes("a", 4096, 0);
    for (int round = 0; round < kRounds; ++round) {
        char key[32];
        snprintf(key, sizeof key, "d%d", round);
        put_u64(key, 1000u * me.rank + (unsigned)round);
        CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
        pmix_status_t rc = collecting_fence(0);
        CHECK(rc == PMIX_SUCCESS, "collecting fence round %d: %s", round, PMIx_Error_string(rc));
        if (round == 3 || round == 4) {
            rc = PMIx_Fence(NULL, 0, NULL, 0);
            CHECK(rc == PMIX_SUCCESS, "fence without data: %s", PMIx_Error_string(rc));
        }
    }
    for (pmix_rank_t r = 0; r < nprocs; ++r) {
        if (r == me.rank) continue;
        check_bytes(r, "a", 4096, 0);
        for (int round = 0; round < kRounds; ++round) {
            char key[32];
            snprintf(key, sizeof key, "d%d", round);
            check_u64(r, key, 1000u * r + (unsigned)round);
        }
    }
    return 0;
}

/* Rank 1 reads rank 0's "big" through the server (refreshed, not from the area). */
static void check_from_server(int round) {
    pmix_proc_t zero;
    PMIX_LOAD_PROCID(&zero, me.nspace, 0);
    pmix_info_t refresh;
    bool yes = true;
    PMIX_INFO_LOAD(&refresh, PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&zero, "big", &refresh, 1, &v);
    CHECK(rc == PMIX_SUCCESS && v != NULL && v->type == PMIX_BYTE_OBJECT &&
              v->data.bo.size == 64 * 1024 &&
              (unsigned char)v->data.bo.bytes[7] == fill(0, round, 7),
          "rank 0's big through the server, round %d: %s", round, PMIx_Error_string(rc));
    PMIX_VALUE_RELEASE(v);
    PMIX_INFO_DESTRUCT(&refresh);
}

static int run_asked(void) {
    for (int round = 0; round < 3; ++round) {
        put_bytes("big", 64 * 1024, round);
        CHECK(PMIx_Commit() == PMIX_SUCCESS, "Commit");
        pmix_status_t rc = collecting_fence(0);
        CHECK(rc == PMIX_SUCCESS, "collecting fence round %d: %s", round, PMIx_Error_string(rc));
        if (me.rank == 1) check_from_server(round);
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "fence without data round %d: %s", round, PMIx_Error_string(rc));
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr,
                "usage: fence_coll_client sizes|mixed|newkey|timeout|dies|hold|deltas|asked\n");
        return 2;
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
    int rcode = 0;
    if (strcmp(argv[1], "sizes") == 0) {
        rcode = run_sizes(-1);
    } else if (strcmp(argv[1], "mixed") == 0) {
        rcode = run_sizes(1);
    } else if (strcmp(argv[1], "newkey") == 0) {
        rcode = run_newkey();
    } else if (strcmp(argv[1], "timeout") == 0) {
        rcode = run_timeout();
    } else if (strcmp(argv[1], "dies") == 0) {
        rcode = run_dies();
    } else if (strcmp(argv[1], "hold") == 0) {
        rcode = run_hold();
    } else if (strcmp(argv[1], "deltas") == 0) {
        rcode = run_deltas();

    } else if (strcmp(argv[1], "asked") == 0) {
        rcode = run_asked();

    } else {
        fprintf(stderr, "unknown mode %s\n", argv[1]);
        return 2;
    }
    if (rcode == 0) {
        printf("fence_coll ok\n");
        fflush(stdout);
    }
    PMIx_Finalize(NULL, 0);
    return rcode;
}
