/* The server keeps its clients' commits as blobs and decodes a client's
 * only when something reads its values in the server's datastore
 * (framework/server/modex.hpp): here the host's own PMIx_Get, after the
 * clients are done. What the server forwards (a peer's Get, the fences'
 * data) is still each client's latest value after many rounds of commits,
 * values Put again (with another size and another type) and new keys.
 *
 * usage: commit_lazy_host     (forks itself as the NPROCS ranks)
 * Each rank, for ROUNDS rounds: Puts "lazy.round" = 100 r + round (again
 * every round), "lazy.big" (BIG bytes every round, its first byte the
 * round; 4 x BIG in round 7: a value that shrinks back after), a new key
 * "lazy.key.<round>" = round, and "lazy.kind": a string in round 3, a
 * uint32 from round 11 on. Commit, collecting Fence; then reads its next
 * peer's "lazy.round" and "lazy.big" and checks they are that round's.
 * After the last round it reads them again with PMIX_GET_REFRESH_CACHE (the
 * server answers from the blobs it kept) and every "lazy.key.*", then
 * Finalizes. The host then reads every rank's values in its own datastore
 * (PMIx_Get in the server process). Run with PMIX_MCA_gds_base_verbose=5:
 * the server's decodes log "server: decoded N blob(s) of <ns>:<rank> on a
 * Get" (the test counts one per rank; an eager decode at each commit logs
 * none). Prints "commit_lazy rank R ok" per rank and "commit_lazy host ok". */
#include <pmix.h>
#include <pmix_server.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(...) HOST_CHECK("commit_lazy", __VA_ARGS__)

enum { NPROCS = 4, ROUNDS = 40, BIG = 8 * 1024 };

static const char *kNspace = "commit-lazy";

static void put(const char *key, pmix_value_t *v) {
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, v);
    CHECK(rc == PMIX_SUCCESS, "Put %s: %s", key, PMIx_Error_string(rc));
}

static void put_u64(const char *key, uint64_t x) {
    pmix_value_t v;
    v.type = PMIX_UINT64;
    v.data.uint64 = x;
    put(key, &v);
}

static size_t big_size(int round) {
    return round == 7 ? 4 * BIG : BIG;
}

/* The values `proc` holds after `round`, read with PMIx_Get (`info`: its qualifiers). */
static void check_round(const pmix_proc_t *proc, int round, const pmix_info_t *info, size_t ninfo,
                        const char *who) {
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(proc, "lazy.round", info, ninfo, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_UINT64 &&
              v->data.uint64 == 100u * proc->rank + (uint64_t)round,
          "%s: lazy.round of rank %u after round %d: %s, %llu", who, proc->rank, round,
          PMIx_Error_string(rc), rc == PMIX_SUCCESS ? (unsigned long long)v->data.uint64 : 0ull);
    PMIX_VALUE_RELEASE(v);
    v = NULL;
    rc = PMIx_Get(proc, "lazy.big", info, ninfo, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_BYTE_OBJECT && v->data.bo.size == big_size(round) &&
              (unsigned char)v->data.bo.bytes[0] == round &&
              (unsigned char)v->data.bo.bytes[v->data.bo.size - 1] == proc->rank,
          "%s: lazy.big of rank %u after round %d: %s", who, proc->rank, round,
          PMIx_Error_string(rc));
    PMIX_VALUE_RELEASE(v);
}

/* Every new key and "lazy.kind" of `proc` after the last round. */
static void check_history(const pmix_proc_t *proc, const char *who) {
    for (int i = 1; i <= ROUNDS; ++i) {
        char key[PMIX_MAX_KEYLEN];
        snprintf(key, sizeof key, "lazy.key.%d", i);
        pmix_value_t *v = NULL;
        pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &v);
        CHECK(rc == PMIX_SUCCESS && v->type == PMIX_UINT64 && v->data.uint64 == (uint64_t)i,
              "%s: %s of rank %u: %s", who, key, proc->rank, PMIx_Error_string(rc));
        PMIX_VALUE_RELEASE(v);
    }
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(proc, "lazy.kind", NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS && v->type == PMIX_UINT32 && v->data.uint32 == 11u,
          "%s: lazy.kind of rank %u is not the uint32 put last: %s (type %d)", who, proc->rank,
          PMIx_Error_string(rc), rc == PMIX_SUCCESS ? (int)v->type : -1);
    PMIX_VALUE_RELEASE(v);
}

static int rank_main(void) {
    alarm(60);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "PMIx_Init: %s", PMIx_Error_string(rc));
    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, me.nspace, (me.rank + 1) % NPROCS);
    unsigned char *big = calloc(1, 4 * BIG);
    CHECK(big != NULL, "calloc");
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    for (int round = 1; round <= ROUNDS; ++round) {
        put_u64("lazy.round", 100u * me.rank + (uint64_t)round);
        const size_t n = big_size(round);
        big[0] = (unsigned char)round;
        big[n - 1] = (unsigned char)me.rank;
        pmix_value_t v;
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = (char *)big;
        v.data.bo.size = n;
        put("lazy.big", &v);
        char key[PMIX_MAX_KEYLEN];
        snprintf(key, sizeof key, "lazy.key.%d", round);
        put_u64(key, (uint64_t)round);
        if (round == 3) {
            v.type = PMIX_STRING;
            v.data.string = "a string first";
            put("lazy.kind", &v);
        } else if (round >= 11) {
            v.type = PMIX_UINT32;
            v.data.uint32 = 11;
            put("lazy.kind", &v);
        }
        rc = PMIx_Commit();
        CHECK(rc == PMIX_SUCCESS, "Commit: %s", PMIx_Error_string(rc));
        rc = PMIx_Fence(NULL, 0, &collect, 1);
        CHECK(rc == PMIX_SUCCESS, "Fence: %s", PMIx_Error_string(rc));
        check_round(&peer, round, NULL, 0, "rank");
    }
    /* From the server's kept blobs (a direct modex of a local peer). */
    pmix_info_t refresh;
    PMIX_INFO_LOAD(&refresh, PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
    check_round(&peer, ROUNDS, &refresh, 1, "rank (refresh)");
    check_history(&peer, "rank (refresh)");
    PMIX_INFO_DESTRUCT(&refresh);
    PMIX_INFO_DESTRUCT(&collect);
    /* Nobody leaves while a peer may still ask the server for its data. */
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "last Fence: %s", PMIx_Error_string(rc));
    free(big);
    printf("commit_lazy rank %u ok\n", me.rank);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "rank") == 0) return rank_main();
    alarm(90); /* a hang is a failure */
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    pmix_status_t rc = PMIx_server_init(&module, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "server init: %s", PMIx_Error_string(rc));
    rc = host_register_job(kNspace, NPROCS);
    CHECK(rc == PMIX_SUCCESS, "register job: %s", PMIx_Error_string(rc));
    pid_t pids[NPROCS];
    for (pmix_rank_t r = 0; r < NPROCS; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, kNspace, r);
        char **env = NULL;
        CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
        pids[r] = fork();
        if (pids[r] == 0) {
            for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
            execl("/proc/self/exe", argv[0], "rank", (char *)NULL);
            _exit(127);
        }
        for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
        free(env);
    }
    for (int r = 0; r < NPROCS; ++r) {
        const int st = host_reap(pids[r]);
        CHECK(st == 0, "rank %d exited with %d", r, st);
    }
    /* The clients' data, read in the server's own datastore: decoded now. */
    for (pmix_rank_t r = 0; r < NPROCS; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, kNspace, r);
        check_round(&p, ROUNDS, NULL, 0, "host");
        check_history(&p, "host");
    }
    PMIx_server_finalize();
    printf("commit_lazy host ok\n");
    return 0;
}
