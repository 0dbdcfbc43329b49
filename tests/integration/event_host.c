/* A host embedding the server API, for the host's side of events:
 * - PMIx_server_init with "pmix.evcache.size" = 1: of two environment events
 *   the host raises before its client exists, only the second is replayed to
 *   the client's handler registered later (the oldest was ejected);
 * - the host's register_events upcall runs when the client registers for
 *   environment events; its notify_event upcall gets the client's
 *   PMIX_RANGE_GLOBAL event (the range leaves the node);
 * - the host's own default handler (as Open MPI registers it) sees the events
 *   the host raised and the client's global event;
 * - the host's PMIx_Notify_event reaches the client's handler;
 * - deregister_events follows when the last registration for those codes
 *   goes: the client's explicit deregistration of its default handler, and
 *   its handler for H when the client ends.
 * usage: event_host            (the host; forks itself as the client) */
#include <pmix.h>
#include <pmix_server.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define E1 (PMIX_EXTERNAL_ERR_BASE - 21)
#define E2 (PMIX_EXTERNAL_ERR_BASE - 22)
#define G (PMIX_EXTERNAL_ERR_BASE - 23)
#define H (PMIX_EXTERNAL_ERR_BASE - 24)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int seen[8]; /* by event: index = E1 - code */
static int register_upcalls, notify_upcalls, deregister_upcalls;
static int deregistered_default, deregistered_h;
static pmix_proc_t notify_source;

#define CHECK(cond, ...)                            \
    do {                                            \
        if (!(cond)) {                              \
            fprintf(stdout, "event_host FAILED: "); \
            fprintf(stdout, __VA_ARGS__);           \
            fprintf(stdout, "\n");                  \
            fflush(stdout);                         \
            exit(1);                                \
        }                                           \
    } while (0)

static int wait_until(int *counter, int n) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    pthread_mutex_lock(&lock);
    int rc = 0;
    while (*counter < n && rc == 0) rc = pthread_cond_timedwait(&cond, &lock, &deadline);
    int ok = *counter >= n;
    pthread_mutex_unlock(&lock);
    return ok;
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    int i = E1 - status;
    if (i >= 0 && i < 8) ++seen[i];
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    cbfunc(PMIX_EVENT_NO_ACTION_TAKEN, NULL, 0, NULL, NULL, cbdata);
}

/* ------------------------------------------------------------------ client */
static int client_main(void) {
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "client init");
    pmix_info_t info;
    bool t = true;
    PMIX_INFO_LOAD(&info, "pmix.evenv", &t, PMIX_BOOL); /* environment events */
    pmix_status_t env_id = PMIx_Register_event_handler(NULL, 0, &info, 1, handler, NULL, NULL);
    CHECK(env_id >= 0, "client register");
    CHECK(wait_until(&seen[1], 1), "client: cached E2 not replayed");
    usleep(300000);
    CHECK(seen[0] == 0, "client: E1 should have been ejected from a cache of 1");
    pmix_status_t h = H;
    CHECK(PMIx_Register_event_handler(&h, 1, NULL, 0, handler, NULL, NULL) >= 0,
          "client register H");
    CHECK(PMIx_Notify_event(G, NULL, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL) == PMIX_SUCCESS,
          "notify");
    CHECK(wait_until(&seen[3], 1), "client: host event H missing");
    CHECK(PMIx_Deregister_event_handler((size_t)env_id, NULL, NULL) == PMIX_SUCCESS,
          "client deregister");
    printf("event client ok\n");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* -------------------------------------------------------------------- host */
static pmix_status_t on_register_events(pmix_status_t *codes, size_t ncodes,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)codes, (void)ncodes, (void)info, (void)ninfo;
    pthread_mutex_lock(&lock);
    ++register_upcalls;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    cbfunc(PMIX_SUCCESS, cbdata); /* inline: allowed */
    return PMIX_SUCCESS;
}

static pmix_status_t on_deregister_events(pmix_status_t *codes, size_t ncodes,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata) {
    pthread_mutex_lock(&lock);
    if (ncodes == 0 && codes == NULL) ++deregistered_default;
    if (ncodes == 1 && codes != NULL && codes[0] == H) ++deregistered_h;
    ++deregister_upcalls;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static pmix_status_t on_notify_event(pmix_status_t code, const pmix_proc_t *source,
                                     pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)info, (void)ninfo, (void)cbfunc, (void)cbdata;
    pthread_mutex_lock(&lock);
    if (code == G && range == PMIX_RANGE_GLOBAL && source != NULL) {
        notify_source = *source;
        ++notify_upcalls;
    }
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    return PMIX_OPERATION_SUCCEEDED;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "client") == 0) return client_main();
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.register_events = on_register_events;
    module.notify_event = on_notify_event;
    module.deregister_events = on_deregister_events;
    pmix_info_t init;
    uint32_t size = 1;
    PMIX_INFO_LOAD(&init, "pmix.evcache.size", &size, PMIX_UINT32);
    CHECK(PMIx_server_init(&module, &init, 1) == PMIX_SUCCESS, "server init");

    pmix_info_t name;
    PMIX_INFO_LOAD(&name, PMIX_EVENT_HDLR_NAME, "OPAL-PMIX-2X-SERVER-DEFAULT", PMIX_STRING);
    CHECK(PMIx_Register_event_handler(NULL, 0, &name, 1, handler, NULL, NULL) >= 0,
          "host register");
    PMIX_INFO_DESTRUCT(&name);
    CHECK(PMIx_Notify_event(E1, NULL, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL) == PMIX_SUCCESS,
          "E1");
    CHECK(PMIx_Notify_event(E2, NULL, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL) == PMIX_SUCCESS,
          "E2");
    CHECK(wait_until(&seen[1], 1) && seen[0] == 1, "host handler: own events");

    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, "evhost");
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, ns, 0);
    pmix_status_t rc = PMIx_server_register_client(&proc, getuid(), getgid(), NULL, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "register client");
    pmix_info_t jinfo;
    uint32_t one = 1;
    PMIX_INFO_LOAD(&jinfo, PMIX_JOB_SIZE, &one, PMIX_UINT32);
    PMIx_server_register_nspace(ns, 1, &jinfo, 1, NULL, NULL);
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&proc, &env) == PMIX_SUCCESS, "setup_fork");
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        execl("/proc/self/exe", argv[0], "client", (char *)NULL);
        _exit(127);
    }
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e); /* the child has its copy */
    free(env);
    CHECK(wait_until(&notify_upcalls, 1), "no notify_event upcall for the client's global event");
    CHECK(strcmp(notify_source.nspace, ns) == 0 && notify_source.rank == 0, "upcall source");
    CHECK(register_upcalls >= 1, "no register_events upcall");
    CHECK(wait_until(&seen[2], 1), "host handler: the client's global event");
    CHECK(PMIx_Notify_event(H, NULL, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL) == PMIX_SUCCESS,
          "H");
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "client failed");
    CHECK(notify_upcalls == 1, "host told %d times of one event", notify_upcalls);
    CHECK(wait_until(&deregister_upcalls, 2), "deregister_events upcalls: %d of 2",
          deregister_upcalls);
    CHECK(deregistered_default == 1 && deregistered_h == 1,
          "deregister_events: default %d times, H %d times", deregistered_default, deregistered_h);
    PMIx_server_deregister_client(&proc, NULL, NULL);
    PMIx_server_deregister_nspace(ns, NULL, NULL);
    PMIx_server_finalize();
    printf("event host ok\n");
    return 0;
}
