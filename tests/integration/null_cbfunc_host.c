/* Every server API that takes a pmix_op_cbfunc_t follows one rule for a NULL
 * cbfunc (framework/server/README.md, "A NULL callback"): the call blocks
 * until the work is done and returns PMIX_OPERATION_SUCCEEDED ("immediately
 * processed and returned success - the cbfunc will not be called", the
 * standard's return value for it) or the error; given a cbfunc, it returns
 * PMIX_SUCCESS and calls it once with the status.
 *
 * usage: null_cbfunc_host     (no clients: the host calls the API itself)
 * Each call is made both ways: register_client, register_nspace,
 * setup_local_support, IOF_deliver, deliver_inventory; deliver_inventory
 * of an inventory that names no node fails both ways with BAD_PARAM. Prints
 * "null_cbfunc <function> ok" per function. */
#include <pmix_server.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(...) HOST_CHECK("null_cbfunc", __VA_ARGS__)

/* The callback path: how often it ran and its last status. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int calls = 0;
static pmix_status_t last = PMIX_ERROR;

static void op_done(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    pthread_mutex_lock(&lock);
    ++calls;
    last = status;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

/* Waits (at most 20 s) for the callback and returns its status. */
static pmix_status_t wait_callback(const char *what) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 20;
    int rc = 0;
    pthread_mutex_lock(&lock);
    while (calls == 0 && rc == 0) rc = pthread_cond_timedwait(&cond, &lock, &deadline);
    const int n = calls;
    const pmix_status_t st = last;
    calls = 0;
    pthread_mutex_unlock(&lock);
    CHECK(n == 1, "%s: the callback ran %d times", what, n);
    return st;
}

/* One API both ways: `call(NULL)` must return `want_blocking`; `call(op_done)`
 * must return PMIX_SUCCESS and call back once with `want_cb`. */
typedef pmix_status_t (*call_fn)(pmix_op_cbfunc_t cbfunc, int round);

static void both_ways(const char *what, call_fn call, pmix_status_t want_blocking,
                      pmix_status_t want_cb) {
    pmix_status_t rc = call(NULL, 0);
    CHECK(rc == want_blocking, "%s with a NULL cbfunc returned %s (want %s)", what,
          PMIx_Error_string(rc), PMIx_Error_string(want_blocking));
    rc = call(op_done, 1);
    CHECK(rc == PMIX_SUCCESS, "%s with a cbfunc returned %s (want SUCCESS)", what,
          PMIx_Error_string(rc));
    rc = wait_callback(what);
    CHECK(rc == want_cb, "%s: the callback got %s (want %s)", what, PMIx_Error_string(rc),
          PMIx_Error_string(want_cb));
    printf("null_cbfunc %s ok\n", what);
}

static pmix_status_t register_client(pmix_op_cbfunc_t cbfunc, int round) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, round == 0 ? "nc-a" : "nc-b", 0);
    return PMIx_server_register_client(&p, getuid(), getgid(), NULL, cbfunc, NULL);
}

static pmix_status_t register_nspace(pmix_op_cbfunc_t cbfunc, int round) {
    pmix_info_t info;
    uint32_t one = 1;
    PMIX_INFO_LOAD(&info, PMIX_JOB_SIZE, &one, PMIX_UINT32);
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, round == 0 ? "nc-a" : "nc-b");
    pmix_status_t rc = PMIx_server_register_nspace(ns, 1, &info, 1, cbfunc, NULL);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

static pmix_status_t setup_local_support(pmix_op_cbfunc_t cbfunc, int round) {
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, round == 0 ? "nc-a" : "nc-b");
    return PMIx_server_setup_local_support(ns, NULL, 0, cbfunc, NULL);
}

static pmix_status_t iof_deliver(pmix_op_cbfunc_t cbfunc, int round) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, round == 0 ? "nc-a" : "nc-b", 0);
    char text[] = "output nobody pulls\n";
    pmix_byte_object_t bo = {text, sizeof text - 1};
    return PMIx_server_IOF_deliver(&p, PMIX_FWD_STDOUT_CHANNEL, &bo, NULL, 0, cbfunc, NULL);
}

static pmix_status_t deliver_inventory(pmix_op_cbfunc_t cbfunc, int round) {
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_HOSTNAME, round == 0 ? "nc-node-a" : "nc-node-b", PMIX_STRING);
    pmix_status_t rc = PMIx_server_deliver_inventory(&info, 1, NULL, 0, cbfunc, NULL);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

/* An inventory naming no node (no PMIX_HOSTNAME) cannot be stored. */
static pmix_status_t deliver_nameless_inventory(pmix_op_cbfunc_t cbfunc, int round) {
    (void)round;
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_TOPOLOGY_SIGNATURE, "none", PMIX_STRING);
    pmix_status_t rc = PMIx_server_deliver_inventory(&info, 1, NULL, 0, cbfunc, NULL);
    PMIX_INFO_DESTRUCT(&info);
    return rc;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    alarm(60); /* a hang is a failure */
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    pmix_status_t rc = PMIx_server_init(&module, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "PMIx_server_init: %s", PMIx_Error_string(rc));
    both_ways("register_client", register_client, PMIX_OPERATION_SUCCEEDED, PMIX_SUCCESS);
    both_ways("register_nspace", register_nspace, PMIX_OPERATION_SUCCEEDED, PMIX_SUCCESS);
    both_ways("setup_local_support", setup_local_support, PMIX_OPERATION_SUCCEEDED, PMIX_SUCCESS);
    both_ways("IOF_deliver", iof_deliver, PMIX_OPERATION_SUCCEEDED, PMIX_SUCCESS);
    both_ways("deliver_inventory", deliver_inventory, PMIX_OPERATION_SUCCEEDED, PMIX_SUCCESS);
    both_ways("deliver_inventory_without_node", deliver_nameless_inventory, PMIX_ERR_BAD_PARAM,
              PMIX_ERR_BAD_PARAM);
    PMIx_server_finalize();
    printf("null_cbfunc all ok\n");
    return 0;
}
