/* Every process puts K keys of S bytes, commits, fences (with or without
 * PMIX_COLLECT_DATA), then gets every key of every peer and checks its bytes.
 * Without collection each peer's data comes by direct modex.
 * usage: modex_client K S collect|nocollect */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char byte_at(pmix_rank_t rank, int key, size_t i) {
    return (unsigned char)(rank * 31u + (unsigned)key * 7u + i);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: modex_client K S collect|nocollect\n");
        return 2;
    }
    int nkeys = atoi(argv[1]);
    size_t size = (size_t)atol(argv[2]);
    bool collect = strcmp(argv[3], "collect") == 0;
    pmix_proc_t me, wild;
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "modex: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val)) != PMIX_SUCCESS) {
        fprintf(stderr, "modex: Get job size: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    uint32_t nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);

    unsigned char *buf = malloc(size ? size : 1);
    for (int k = 0; k < nkeys; ++k) {
        char key[64];
        snprintf(key, sizeof key, "test.key.%d", k);
        for (size_t i = 0; i < size; ++i) buf[i] = byte_at(me.rank, k, i);
        pmix_byte_object_t bo = {(char *)buf, size};
        pmix_value_t v;
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo = bo;
        if ((rc = PMIx_Put(k % 2 ? PMIX_LOCAL : PMIX_GLOBAL, key, &v)) != PMIX_SUCCESS) {
            fprintf(stderr, "modex: Put: %s\n", PMIx_Error_string(rc));
            return 1;
        }
    }
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) {
        fprintf(stderr, "modex: Commit: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_info_t info[2];
    int timeout = 60;
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    if ((rc = PMIx_Fence(NULL, 0, info, 2)) != PMIX_SUCCESS) {
        fprintf(stderr, "modex: Fence: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    for (uint32_t r = 0; r < nprocs; ++r) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        for (int k = 0; k < nkeys; ++k) {
            char key[64];
            snprintf(key, sizeof key, "test.key.%d", k);
            if ((rc = PMIx_Get(&peer, key, &info[1], 1, &val)) != PMIX_SUCCESS) {
                fprintf(stderr, "modex: rank %u: Get %s of rank %u: %s\n", me.rank, key, r,
                        PMIx_Error_string(rc));
                return 1;
            }
            if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size != size) {
                fprintf(stderr, "modex: %s of rank %u: type %d size %zu\n", key, r, val->type,
                        val->data.bo.size);
                return 1;
            }
            for (size_t i = 0; i < size; ++i) {
                if ((unsigned char)val->data.bo.bytes[i] != byte_at(r, k, i)) {
                    fprintf(stderr, "modex: %s of rank %u: byte %zu differs\n", key, r, i);
                    return 1;
                }
            }
            PMIX_VALUE_RELEASE(val);
        }
    }
    /* A key nobody put: NOT_FOUND, not a hang. */
    pmix_proc_t peer0;
    PMIX_LOAD_PROCID(&peer0, me.nspace, 0);
    rc = PMIx_Get(&peer0, "test.nobody", &info[1], 1, &val);
    if (rc != PMIX_ERR_NOT_FOUND) {
        fprintf(stderr, "modex: Get of a missing key: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "modex: final Fence: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("modex ok: rank %u checked %d keys of %zu bytes from %u processes\n", me.rank, nkeys,
           size, nprocs);
    free(buf);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
