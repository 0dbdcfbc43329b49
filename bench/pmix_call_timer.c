/* An LD_PRELOAD shim that times the PMIx calls a program makes (issue 17):
 * how long each call takes in the caller's thread, and for the non-blocking
 * ones how long until their callback runs. Works with either libpmix.so.2
 * (ours or OpenPMIx's): it wraps the entry points by name and calls the next
 * definition (dlsym(RTLD_NEXT)).
 *
 *   cc -O2 -shared -fPIC -Iinclude bench/pmix_call_timer.c -o /tmp/pct.so -ldl -lpthread
 *   PMIX_CALL_TIMER_OUT=/tmp/calls.txt LD_PRELOAD=/tmp/pct.so <program>
 *   mpirun -x LD_PRELOAD=/tmp/pct.so -x PMIX_CALL_TIMER_OUT=... ./hello
 *
 * At exit each process appends one line per call it made to
 * $PMIX_CALL_TIMER_OUT (default /tmp/pmix_call_timer.txt):
 *   <pid> <call> <count> <total µs> <max µs>
 * where "<name>.cb" is the time from a non-blocking call's entry to its
 * callback. bench/sum_call_timer.sh sums them over processes. A measuring
 * tool: nothing in the tests uses it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>
#include <pmix_server.h>

enum {
    C_INIT,
    C_FINALIZE,
    C_GET,
    C_GET_NB,
    C_GET_NB_CB,
    C_PUT,
    C_COMMIT,
    C_FENCE,
    C_FENCE_NB,
    C_FENCE_NB_CB,
    C_REG_EVHDLR,
    C_REG_EVHDLR_CB,
    C_DEREG_EVHDLR,
    C_NOTIFY,
    C_QUERY_NB,
    C_QUERY_NB_CB,
    C_S_SETUP_FORK,
    C_S_REG_NSPACE,
    C_S_REG_CLIENT,
    C_S_SETUP_LOCAL,
    C_S_SETUP_APP,
    C_S_DEREG_CLIENT,
    C_S_DEREG_NSPACE,
    C_N
};
static const char *const names[C_N] = {"PMIx_Init",
                                       "PMIx_Finalize",
                                       "PMIx_Get",
                                       "PMIx_Get_nb",
                                       "PMIx_Get_nb.cb",
                                       "PMIx_Put",
                                       "PMIx_Commit",
                                       "PMIx_Fence",
                                       "PMIx_Fence_nb",
                                       "PMIx_Fence_nb.cb",
                                       "PMIx_Register_event_handler",
                                       "PMIx_Register_event_handler.cb",
                                       "PMIx_Deregister_event_handler",
                                       "PMIx_Notify_event",
                                       "PMIx_Query_info_nb",
                                       "PMIx_Query_info_nb.cb",
                                       "PMIx_server_setup_fork",
                                       "PMIx_server_register_nspace",
                                       "PMIx_server_register_client",
                                       "PMIx_server_setup_local_support",
                                       "PMIx_server_setup_application",
                                       "PMIx_server_deregister_client",
                                       "PMIx_server_deregister_nspace"};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t count[C_N], total[C_N], maxi[C_N];

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void record(int c, uint64_t t0) {
    const uint64_t d = now_ns() - t0;
    pthread_mutex_lock(&lock);
    ++count[c];
    total[c] += d;
    if (d > maxi[c]) maxi[c] = d;
    pthread_mutex_unlock(&lock);
}

static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (f == NULL) {
        fprintf(stderr, "pmix_call_timer: no %s\n", name);
        abort();
    }
    return f;
}

__attribute__((destructor)) static void dump(void) {
    const char *path = getenv("PMIX_CALL_TIMER_OUT");
    FILE *f = fopen(path != NULL ? path : "/tmp/pmix_call_timer.txt", "a");
    if (f == NULL) return;
    for (int c = 0; c < C_N; ++c)
        if (count[c] != 0)
            fprintf(f, "%d %s %llu %llu %llu\n", (int)getpid(), names[c],
                    (unsigned long long)count[c], (unsigned long long)(total[c] / 1000),
                    (unsigned long long)(maxi[c] / 1000));
    fclose(f);
}

/* A non-blocking call's callback: the wrapper carries the caller's. */
struct pending {
    int c;
    uint64_t t0;
    void *fn;
    void *cbdata;
};

static struct pending *pending_new(int c, uint64_t t0, void *fn, void *cbdata) {
    struct pending *p = malloc(sizeof *p);
    if (p == NULL) abort();
    p->c = c;
    p->t0 = t0;
    p->fn = fn;
    p->cbdata = cbdata;
    return p;
}

#define TIMED(c, type, call)     \
    do {                         \
        uint64_t t0_ = now_ns(); \
        type rc_ = call;         \
        record(c, t0_);          \
        return rc_;              \
    } while (0)

pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo) {
    static pmix_status_t (*f)(pmix_proc_t *, pmix_info_t[], size_t);
    if (f == NULL) f = next("PMIx_Init");
    TIMED(C_INIT, pmix_status_t, f(proc, info, ninfo));
}

pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo) {
    static pmix_status_t (*f)(const pmix_info_t[], size_t);
    if (f == NULL) f = next("PMIx_Finalize");
    TIMED(C_FINALIZE, pmix_status_t, f(info, ninfo));
}

pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                       size_t ninfo, pmix_value_t **val) {
    static pmix_status_t (*f)(const pmix_proc_t *, const pmix_key_t, const pmix_info_t[], size_t,
                              pmix_value_t **);
    if (f == NULL) f = next("PMIx_Get");
    TIMED(C_GET, pmix_status_t, f(proc, key, info, ninfo, val));
}

static void get_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    struct pending *p = cbdata;
    record(p->c, p->t0);
    pmix_value_cbfunc_t fn = (pmix_value_cbfunc_t)p->fn;
    void *d = p->cbdata;
    free(p);
    fn(status, kv, d);
}

pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[], const pmix_info_t info[],
                          size_t ninfo, pmix_value_cbfunc_t cbfunc, void *cbdata) {
    static pmix_status_t (*f)(const pmix_proc_t *, const pmix_key_t, const pmix_info_t[], size_t,
                              pmix_value_cbfunc_t, void *);
    if (f == NULL) f = next("PMIx_Get_nb");
    if (cbfunc == NULL) TIMED(C_GET_NB, pmix_status_t, f(proc, key, info, ninfo, cbfunc, cbdata));
    uint64_t t0 = now_ns();
    struct pending *p = pending_new(C_GET_NB_CB, t0, (void *)cbfunc, cbdata);
    pmix_status_t rc = f(proc, key, info, ninfo, get_cb, p);
    record(C_GET_NB, t0);
    if (rc != PMIX_SUCCESS) free(p);
    return rc;
}

pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val) {
    static pmix_status_t (*f)(pmix_scope_t, const pmix_key_t, pmix_value_t *);
    if (f == NULL) f = next("PMIx_Put");
    TIMED(C_PUT, pmix_status_t, f(scope, key, val));
}

pmix_status_t PMIx_Commit(void) {
    static pmix_status_t (*f)(void);
    if (f == NULL) f = next("PMIx_Commit");
    TIMED(C_COMMIT, pmix_status_t, f());
}

pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                         size_t ninfo) {
    static pmix_status_t (*f)(const pmix_proc_t[], size_t, const pmix_info_t[], size_t);
    if (f == NULL) f = next("PMIx_Fence");
    TIMED(C_FENCE, pmix_status_t, f(procs, nprocs, info, ninfo));
}

static void op_cb(pmix_status_t status, void *cbdata) {
    struct pending *p = cbdata;
    record(p->c, p->t0);
    pmix_op_cbfunc_t fn = (pmix_op_cbfunc_t)p->fn;
    void *d = p->cbdata;
    free(p);
    if (fn != NULL) fn(status, d);
}

pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                            size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    static pmix_status_t (*f)(const pmix_proc_t[], size_t, const pmix_info_t[], size_t,
                              pmix_op_cbfunc_t, void *);
    if (f == NULL) f = next("PMIx_Fence_nb");
    if (cbfunc == NULL)
        TIMED(C_FENCE_NB, pmix_status_t, f(procs, nprocs, info, ninfo, cbfunc, cbdata));
    uint64_t t0 = now_ns();
    struct pending *p = pending_new(C_FENCE_NB_CB, t0, (void *)cbfunc, cbdata);
    pmix_status_t rc = f(procs, nprocs, info, ninfo, op_cb, p);
    record(C_FENCE_NB, t0);
    if (rc != PMIX_SUCCESS) free(p);
    return rc;
}

static void reg_cb(pmix_status_t status, size_t ref, void *cbdata) {
    struct pending *p = cbdata;
    record(p->c, p->t0);
    pmix_hdlr_reg_cbfunc_t fn = (pmix_hdlr_reg_cbfunc_t)p->fn;
    void *d = p->cbdata;
    free(p);
    if (fn != NULL) fn(status, ref, d);
}

pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes, pmix_info_t info[],
                                          size_t ninfo, pmix_notification_fn_t evhdlr,
                                          pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata) {
    static pmix_status_t (*f)(pmix_status_t[], size_t, pmix_info_t[], size_t,
                              pmix_notification_fn_t, pmix_hdlr_reg_cbfunc_t, void *);
    if (f == NULL) f = next("PMIx_Register_event_handler");
    if (cbfunc == NULL)
        TIMED(C_REG_EVHDLR, pmix_status_t, f(codes, ncodes, info, ninfo, evhdlr, cbfunc, cbdata));
    uint64_t t0 = now_ns();
    struct pending *p = pending_new(C_REG_EVHDLR_CB, t0, (void *)cbfunc, cbdata);
    pmix_status_t rc = f(codes, ncodes, info, ninfo, evhdlr, reg_cb, p);
    record(C_REG_EVHDLR, t0);
    /* OpenPMIx 4.2 returns the reference (>= 0) or an error and may never
     * call back on error; ours too. */
    if (rc < 0) free(p);
    return rc;
}

pmix_status_t PMIx_Deregister_event_handler(size_t ref, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    static pmix_status_t (*f)(size_t, pmix_op_cbfunc_t, void *);
    if (f == NULL) f = next("PMIx_Deregister_event_handler");
    TIMED(C_DEREG_EVHDLR, pmix_status_t, f(ref, cbfunc, cbdata));
}

pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata) {
    static pmix_status_t (*f)(pmix_status_t, const pmix_proc_t *, pmix_data_range_t,
                              const pmix_info_t[], size_t, pmix_op_cbfunc_t, void *);
    if (f == NULL) f = next("PMIx_Notify_event");
    TIMED(C_NOTIFY, pmix_status_t, f(status, source, range, info, ninfo, cbfunc, cbdata));
}

pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env) {
    static pmix_status_t (*f)(const pmix_proc_t *, char ***);
    if (f == NULL) f = next("PMIx_server_setup_fork");
    TIMED(C_S_SETUP_FORK, pmix_status_t, f(proc, env));
}

pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace, int nlocalprocs,
                                          pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                          void *cbdata) {
    static pmix_status_t (*f)(const pmix_nspace_t, int, pmix_info_t[], size_t, pmix_op_cbfunc_t,
                              void *);
    if (f == NULL) f = next("PMIx_server_register_nspace");
    TIMED(C_S_REG_NSPACE, pmix_status_t, f(nspace, nlocalprocs, info, ninfo, cbfunc, cbdata));
}

pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                          void *server_object, pmix_op_cbfunc_t cbfunc,
                                          void *cbdata) {
    static pmix_status_t (*f)(const pmix_proc_t *, uid_t, gid_t, void *, pmix_op_cbfunc_t, void *);
    if (f == NULL) f = next("PMIx_server_register_client");
    TIMED(C_S_REG_CLIENT, pmix_status_t, f(proc, uid, gid, server_object, cbfunc, cbdata));
}

pmix_status_t PMIx_server_setup_local_support(const pmix_nspace_t nspace, pmix_info_t info[],
                                              size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    static pmix_status_t (*f)(const pmix_nspace_t, pmix_info_t[], size_t, pmix_op_cbfunc_t, void *);
    if (f == NULL) f = next("PMIx_server_setup_local_support");
    TIMED(C_S_SETUP_LOCAL, pmix_status_t, f(nspace, info, ninfo, cbfunc, cbdata));
}

pmix_status_t PMIx_server_setup_application(const pmix_nspace_t nspace, pmix_info_t info[],
                                            size_t ninfo, pmix_setup_application_cbfunc_t cbfunc,
                                            void *cbdata) {
    static pmix_status_t (*f)(const pmix_nspace_t, pmix_info_t[], size_t,
                              pmix_setup_application_cbfunc_t, void *);
    if (f == NULL) f = next("PMIx_server_setup_application");
    TIMED(C_S_SETUP_APP, pmix_status_t, f(nspace, info, ninfo, cbfunc, cbdata));
}

void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    static void (*f)(const pmix_proc_t *, pmix_op_cbfunc_t, void *);
    if (f == NULL) f = next("PMIx_server_deregister_client");
    uint64_t t0 = now_ns();
    f(proc, cbfunc, cbdata);
    record(C_S_DEREG_CLIENT, t0);
}

void PMIx_server_deregister_nspace(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc,
                                   void *cbdata) {
    static void (*f)(const pmix_nspace_t, pmix_op_cbfunc_t, void *);
    if (f == NULL) f = next("PMIx_server_deregister_nspace");
    uint64_t t0 = now_ns();
    f(nspace, cbfunc, cbdata);
    record(C_S_DEREG_NSPACE, t0);
}
