/* The blocking PMIx_Notify_event returns once its request is written or
 * queued, not when the server has answered (the standard, Chap_API_Event:
 * the operation is complete when "any messages required ... have been
 * queued, but may not yet have been transmitted"; docs/events.md).
 *
 * A host embedding the server forks one client. The client raises a
 * PMIX_RANGE_GLOBAL event with the blocking form (NULL cbfunc), then writes
 * one byte to a pipe the host gave it. The host's notify_event upcall, which
 * the server makes on its progress thread while it routes that event (the
 * range leaves the node), waits on that pipe (at most 20 s) before it
 * returns: the server cannot answer the client before the upcall returns.
 * A blocking call that waited for the server's answer would only write its
 * byte once the upcall gave up, and the host fails the test. The host's own
 * default handler must still get the event, and the client's second
 * (non-blocking) notify still gets its callback with PMIX_SUCCESS.
 * usage: notify_blocking_host        (the host; forks itself as the client) */
#include <pmix.h>
#include <pmix_server.h>

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host_common.h"

#define G1 (PMIX_EXTERNAL_ERR_BASE - 31)
#define G2 (PMIX_EXTERNAL_ERR_BASE - 32)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int pipe_read = -1;
static int upcalls, byte_in_upcall, seen_g1, seen_g2;

#define CHECK(cond, ...) HOST_CHECK("notify_blocking", cond, __VA_ARGS__)

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
    if (status == G1) ++seen_g1;
    if (status == G2) ++seen_g2;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    cbfunc(PMIX_EVENT_NO_ACTION_TAKEN, NULL, 0, NULL, NULL, cbdata);
}

/* ------------------------------------------------------------------ client */
/* Static storage: the callback may run after any frame of the caller's. */
static pmix_status_t nb_status = PMIX_ERR_NOT_FOUND;
static int nb_called;

static void nb_done(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    pthread_mutex_lock(&lock);
    nb_status = status;
    ++nb_called;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static int client_main(int fd) {
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "client init");
    pmix_status_t rc = PMIx_Notify_event(G1, NULL, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "blocking notify: %s", PMIx_Error_string(rc));
    char byte = 1;
    CHECK(write(fd, &byte, 1) == 1, "write to the host's pipe");
    close(fd);
    printf("notify_blocking client returned\n");
    fflush(stdout);
    rc = PMIx_Notify_event(G2, NULL, PMIX_RANGE_GLOBAL, NULL, 0, nb_done, NULL);
    CHECK(rc == PMIX_SUCCESS, "non-blocking notify: %s", PMIx_Error_string(rc));
    CHECK(wait_until(&nb_called, 1), "non-blocking notify: no callback");
    CHECK(nb_status == PMIX_SUCCESS, "non-blocking notify callback: %s",
          PMIx_Error_string(nb_status));
    printf("notify_blocking client ok\n");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* -------------------------------------------------------------------- host */
/* On the server's progress thread: the server answers the notifier only
 * after this returns. */
static pmix_status_t on_notify_event(pmix_status_t code, const pmix_proc_t *source,
                                     pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)source, (void)range, (void)info, (void)ninfo, (void)cbfunc, (void)cbdata;
    int got = 0;
    if (code == G1) {
        struct pollfd p = {pipe_read, POLLIN, 0};
        char byte = 0;
        got = poll(&p, 1, 20000) == 1 && read(pipe_read, &byte, 1) == 1;
    }
    pthread_mutex_lock(&lock);
    if (code == G1) {
        ++upcalls;
        byte_in_upcall = got;
    }
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    return PMIX_OPERATION_SUCCEEDED;
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "client") == 0) return client_main(atoi(argv[2]));
    int fds[2];
    CHECK(pipe(fds) == 0, "pipe");
    pipe_read = fds[0];
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.notify_event = on_notify_event;
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    CHECK(PMIx_Register_event_handler(NULL, 0, NULL, 0, handler, NULL, NULL) >= 0, "host register");

    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, "notifyblk");
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, ns, 0);
    CHECK(host_register_job("notifyblk", 1) == PMIX_SUCCESS, "register the job");
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&proc, &env) == PMIX_SUCCESS, "setup_fork");
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        char fd[16];
        snprintf(fd, sizeof fd, "%d", fds[1]);
        execl("/proc/self/exe", argv[0], "client", fd, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    CHECK(wait_until(&upcalls, 1), "no notify_event upcall for the client's blocking event");
    CHECK(byte_in_upcall,
          "the blocking PMIx_Notify_event did not return while the server "
          "held its answer (it waited for the server)");
    CHECK(wait_until(&seen_g1, 1), "host handler: the client's blocking event");
    CHECK(wait_until(&seen_g2, 1), "host handler: the client's non-blocking event");
    CHECK(host_reap(pid) == 0, "client failed");
    PMIx_server_deregister_client(&proc, NULL, NULL);
    PMIx_server_deregister_nspace(ns, NULL, NULL);
    PMIx_server_finalize();
    printf("notify_blocking host ok\n");
    return 0;
}
