/* The values the collecting-fence test clients Put and check
 * (fence_coll_client.c, fence_data_shm_client.c): CHECK, byte objects whose
 * every byte says its rank, round and offset, and 64-bit values. Define
 * FENCE_CLIENT_NAME (its failure lines start "NAME rank R FAILED: ")
 * before including. */
#ifndef PMIXPP_TESTS_FENCE_VALUES_H
#define PMIXPP_TESTS_FENCE_VALUES_H

#include <pmix.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef FENCE_CLIENT_NAME
#error "define FENCE_CLIENT_NAME before including fence_values.h"
#endif

static pmix_proc_t me;
static uint32_t nprocs;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stdout, FENCE_CLIENT_NAME " rank %u FAILED: ", me.rank); \
            fprintf(stdout, __VA_ARGS__);                                    \
            fprintf(stdout, "\n");                                           \
            fflush(stdout);                                                  \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static unsigned char fill(uint32_t rank, int round, size_t i) {
    return (unsigned char)(rank * 31u + (unsigned)round * 7u + i * 13u);
}

static void put_bytes(const char *key, size_t size, int round) {
    unsigned char *buf = malloc(size);
    CHECK(buf != NULL, "malloc");
    for (size_t i = 0; i < size; ++i) buf[i] = fill(me.rank, round, i);
    pmix_value_t v;
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)buf;
    v.data.bo.size = size;
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &v) == PMIX_SUCCESS, "Put %s", key);
    free(buf);
}

static void check_bytes(pmix_rank_t rank, const char *key, size_t size, int round) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS, "Get %s of %u: %s", key, rank, PMIx_Error_string(rc));
    CHECK(v->type == PMIX_BYTE_OBJECT && v->data.bo.size == size, "%s of %u: type %d size %zu", key,
          rank, v->type, v->data.bo.size);
    for (size_t i = 0; i < size; ++i) {
        CHECK((unsigned char)v->data.bo.bytes[i] == fill(rank, round, i),
              "%s of %u: byte %zu is not round %d's", key, rank, i, round);
    }
    PMIX_VALUE_RELEASE(v);
}

static void put_u64(const char *key, uint64_t x) {
    pmix_value_t v;
    v.type = PMIX_UINT64;
    v.data.uint64 = x;
    CHECK(PMIx_Put(PMIX_GLOBAL, key, &v) == PMIX_SUCCESS, "Put %s", key);
}

static void check_u64(pmix_rank_t rank, const char *key, uint64_t want) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    CHECK(rc == PMIX_SUCCESS, "Get %s of %u: %s", key, rank, PMIx_Error_string(rc));
    CHECK(v->type == PMIX_UINT64 && v->data.uint64 == want, "%s of %u: %llu, want %llu", key, rank,
          (unsigned long long)v->data.uint64, (unsigned long long)want);
    PMIX_VALUE_RELEASE(v);
}

#endif
