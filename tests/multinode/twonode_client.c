/* A client of the 2-node job that twonode_host plays: ranks 0,1 on node0 and
 * ranks 2,3 on node1.
 *
 * Every rank checks its job and node info, puts a GLOBAL, a LOCAL and a
 * REMOTE key plus a large GLOBAL byte object, commits and fences -- with
 * PMIX_COLLECT_DATA ("collect": the data crosses nodes through the host's
 * fence_nb) or without ("direct": a remote peer's data comes through the
 * host's direct_modex). Then it gets every key of every peer and checks
 * scope visibility: GLOBAL everywhere, LOCAL only from a peer on its node,
 * REMOTE only from a peer on the other node.
 *
 * Two more modes probe the direct-modex path further:
 *   rounds  two rounds of put, commit, fence without data, get every peer's
 *           key of that round: the second round's remote data must not be
 *           answered from what the first round fetched.
 *   early   put, commit and get every peer's key at once, without a fence:
 *           a remote peer's data is asked for while its node may not have
 *           registered the job yet (run with twonode_host --stagger) and
 *           must arrive once that node registers it and the peer commits.
 * usage: twonode_client collect|direct|rounds|early
 * Prints "twonode ok: rank R ..." and exits 0 when all checks pass. */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG_BYTES 100000
#define NODES 2
#define PER_NODE 2

static pmix_proc_t me;
static pmix_info_t get_info[1]; /* PMIX_TIMEOUT: a missing answer fails, never hangs */

static void die(const char *what, pmix_status_t rc) {
    fprintf(stderr, "twonode client rank %u: %s: %s\n", me.rank, what, PMIx_Error_string(rc));
    exit(1);
}

static unsigned char big_byte(pmix_rank_t rank, size_t i) {
    return (unsigned char)(rank * 41u + i * 7u + (i >> 9));
}

static void put_string(pmix_scope_t scope, const char *key, const char *what) {
    char s[128];
    snprintf(s, sizeof s, "%s of rank %u", what, me.rank);
    pmix_value_t v;
    v.type = PMIX_STRING;
    v.data.string = s;
    pmix_status_t rc = PMIx_Put(scope, key, &v);
    if (rc != PMIX_SUCCESS) die("Put", rc);
}

/* Gets key of rank r: expects the string put_string made, or NOT_FOUND. */
static void check_string(pmix_rank_t r, const char *key, const char *what, int visible) {
    pmix_proc_t peer;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&peer, me.nspace, r);
    pmix_status_t rc = PMIx_Get(&peer, key, get_info, 1, &val);
    if (!visible) {
        if (rc != PMIX_ERR_NOT_FOUND) {
            fprintf(stderr, "twonode client rank %u: %s of rank %u: expected NOT-FOUND, got %s\n",
                    me.rank, key, r, PMIx_Error_string(rc));
            exit(1);
        }
        if (val != NULL) PMIX_VALUE_RELEASE(val);
        return;
    }
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "twonode client rank %u: Get %s of rank %u: %s\n", me.rank, key, r,
                PMIx_Error_string(rc));
        exit(1);
    }
    char want[128];
    snprintf(want, sizeof want, "%s of rank %u", what, r);
    if (val->type != PMIX_STRING || strcmp(val->data.string, want) != 0) {
        fprintf(stderr, "twonode client rank %u: %s of rank %u: wrong value\n", me.rank, key, r);
        exit(1);
    }
    PMIX_VALUE_RELEASE(val);
}

static uint32_t get_u32(pmix_rank_t rank, const char *key) {
    pmix_proc_t p;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &val);
    if (rc != PMIX_SUCCESS) die(key, rc);
    uint32_t out = 0;
    if (val->type == PMIX_UINT32) {
        out = val->data.uint32;
    } else if (val->type == PMIX_UINT16) {
        out = val->data.uint16;
    } else if (val->type == PMIX_PROC_RANK) {
        out = val->data.rank;
    } else {
        fprintf(stderr, "twonode client rank %u: %s has type %d\n", me.rank, key, val->type);
        exit(1);
    }
    PMIX_VALUE_RELEASE(val);
    return out;
}

static void check_u32(pmix_rank_t rank, const char *key, uint32_t want) {
    uint32_t got = get_u32(rank, key);
    if (got != want) {
        fprintf(stderr, "twonode client rank %u: %s of rank %u is %u, expected %u\n", me.rank, key,
                rank, got, want);
        exit(1);
    }
}

static void check_job_info(void) {
    const uint32_t my_node = me.rank / PER_NODE;
    check_u32(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NODES * PER_NODE);
    check_u32(PMIX_RANK_WILDCARD, PMIX_NUM_NODES, NODES);
    check_u32(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, PER_NODE);
    check_u32(me.rank, PMIX_LOCAL_RANK, me.rank % PER_NODE);
    for (pmix_rank_t r = 0; r < NODES * PER_NODE; ++r) check_u32(r, PMIX_NODEID, r / PER_NODE);

    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    char want[32];
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &val);
    if (rc != PMIX_SUCCESS) die("Get local peers", rc);
    snprintf(want, sizeof want, "%u,%u", my_node * PER_NODE, my_node * PER_NODE + 1);
    if (val->type != PMIX_STRING || strcmp(val->data.string, want) != 0) {
        fprintf(stderr, "twonode client rank %u: local peers '%s', expected '%s'\n", me.rank,
                val->type == PMIX_STRING ? val->data.string : "?", want);
        exit(1);
    }
    PMIX_VALUE_RELEASE(val);
}

static void fence(bool collect) {
    pmix_info_t info[2];
    int timeout = 60;
    PMIX_INFO_LOAD(&info[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&info[1], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, info, 2);
    if (rc != PMIX_SUCCESS) die("Fence", rc);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

/* rounds (fenced = true) and early (fenced = false): see the top. */
static void get_by_rounds(int rounds, bool fenced) {
    for (int round = 1; round <= rounds; ++round) {
        char key[32], what[32];
        snprintf(key, sizeof key, "mn.round.%d", round);
        snprintf(what, sizeof what, "round %d", round);
        put_string(PMIX_GLOBAL, key, what);
        pmix_status_t rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) die("Commit", rc);
        if (fenced) fence(false);
        for (pmix_rank_t r = 0; r < NODES * PER_NODE; ++r) check_string(r, key, what, 1);
    }
}

int main(int argc, char **argv) {
    const char *mode = argc == 2 ? argv[1] : "";
    if (strcmp(mode, "collect") != 0 && strcmp(mode, "direct") != 0 &&
        strcmp(mode, "rounds") != 0 && strcmp(mode, "early") != 0) {
        fprintf(stderr, "usage: twonode_client collect|direct|rounds|early\n");
        return 2;
    }
    bool collect = strcmp(mode, "collect") == 0;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) die("PMIx_Init", rc);
    int timeout = 30;
    PMIX_INFO_LOAD(&get_info[0], PMIX_TIMEOUT, &timeout, PMIX_INT);
    check_job_info();
    if (strcmp(mode, "rounds") == 0 || strcmp(mode, "early") == 0) {
        const bool fenced = strcmp(mode, "rounds") == 0;
        get_by_rounds(fenced ? 2 : 1, fenced);
        fence(false);
        printf("twonode ok: rank %u on node%u checked 4 peers (%s)\n", me.rank, me.rank / PER_NODE,
               mode);
        PMIX_INFO_DESTRUCT(&get_info[0]);
        return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
    }

    put_string(PMIX_GLOBAL, "mn.global", "global");
    put_string(PMIX_LOCAL, "mn.local", "local");
    put_string(PMIX_REMOTE, "mn.remote", "remote");
    unsigned char *big = malloc(BIG_BYTES);
    for (size_t i = 0; i < BIG_BYTES; ++i) big[i] = big_byte(me.rank, i);
    pmix_value_t v;
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)big;
    v.data.bo.size = BIG_BYTES;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "mn.big", &v)) != PMIX_SUCCESS) die("Put big", rc);
    free(big);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) die("Commit", rc);

    pmix_info_t fence_info[2];
    int fence_timeout = 60;
    PMIX_INFO_LOAD(&fence_info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIX_INFO_LOAD(&fence_info[1], PMIX_TIMEOUT, &fence_timeout, PMIX_INT);
    if ((rc = PMIx_Fence(NULL, 0, fence_info, 2)) != PMIX_SUCCESS) die("Fence", rc);

    const uint32_t my_node = me.rank / PER_NODE;
    for (pmix_rank_t r = 0; r < NODES * PER_NODE; ++r) {
        const int same_node = r / PER_NODE == my_node;
        check_string(r, "mn.global", "global", 1);
        if (r == me.rank) continue;
        check_string(r, "mn.local", "local", same_node);
        check_string(r, "mn.remote", "remote", !same_node);

        pmix_proc_t peer;
        pmix_value_t *val = NULL;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        if ((rc = PMIx_Get(&peer, "mn.big", get_info, 1, &val)) != PMIX_SUCCESS) die("Get big", rc);
        if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size != BIG_BYTES) {
            fprintf(stderr, "twonode client rank %u: mn.big of rank %u: wrong type or size\n",
                    me.rank, r);
            return 1;
        }
        for (size_t i = 0; i < BIG_BYTES; ++i) {
            if ((unsigned char)val->data.bo.bytes[i] != big_byte(r, i)) {
                fprintf(stderr, "twonode client rank %u: mn.big of rank %u: byte %zu differs\n",
                        me.rank, r, i);
                return 1;
            }
        }
        PMIX_VALUE_RELEASE(val);
    }

    /* Nobody leaves while a peer may still ask this node for its data. */
    if ((rc = PMIx_Fence(NULL, 0, &fence_info[1], 1)) != PMIX_SUCCESS) die("final Fence", rc);
    printf("twonode ok: rank %u on node%u checked %d peers (%s)\n", me.rank, my_node,
           NODES * PER_NODE, collect ? "collected" : "direct modex");
    fflush(stdout);
    PMIX_INFO_DESTRUCT(&get_info[0]);
    PMIX_INFO_DESTRUCT(&fence_info[0]);
    PMIX_INFO_DESTRUCT(&fence_info[1]);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
