/* The prologue the group test clients share (group_client.c, group_leader_client.c,
 * group_member_failed_client.c, group_bootstrap_client.c, group_invite_client.c,
 * group_event_client.c): FAIL / CHECK, init with the job size, and a
 * handler registration that waits (bounded by the caller's alarm()) for its
 * callback, whose status lives in static storage (a callback must never
 * write into a frame that may have returned). */
#ifndef PMIXPP_TESTS_GROUP_COMMON_H
#define PMIXPP_TESTS_GROUP_COMMON_H

#include <pmix.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pmix_proc_t me;
static uint32_t nprocs;

#define FAIL(...)                                       \
    do {                                                \
        fprintf(stderr, "%s:%u: ", me.nspace, me.rank); \
        fprintf(stderr, __VA_ARGS__);                   \
        fprintf(stderr, "\n");                          \
        exit(1);                                        \
    } while (0)

#define CHECK(rc, what)                                                        \
    do {                                                                       \
        pmix_status_t _rc = (rc);                                              \
        if (_rc != PMIX_SUCCESS) FAIL("%s: %s", what, PMIx_Error_string(_rc)); \
    } while (0)

/* PMIx_Init, then `me` and `nprocs` (the job's size). */
static inline void group_init(void) {
    CHECK(PMIx_Init(&me, NULL, 0), "PMIx_Init");
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val), "Get job size");
    nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
}

static _Atomic pmix_status_t group_reg_status;

static inline void group_registered(pmix_status_t status, size_t ref, void *cbdata) {
    (void)ref, (void)cbdata;
    group_reg_status = status;
}

/* Registers `fn` for `codes` with `info` and waits for the registration. */
static inline void group_register(pmix_status_t *codes, size_t ncodes, pmix_info_t *info,
                                  size_t ninfo, pmix_notification_fn_t fn) {
    group_reg_status = PMIX_ERR_TIMEOUT;
    CHECK(PMIx_Register_event_handler(codes, ncodes, info, ninfo, fn, group_registered, NULL),
          "Register_event_handler");
    while (group_reg_status == PMIX_ERR_TIMEOUT) usleep(1000); /* bounded by alarm() */
    CHECK(group_reg_status, "register");
}

#endif
