/* A host embedding the server API, for the host side of process monitoring
 * (framework/server/monitoring.cpp, docs/monitoring.md).
 *
 * usage: monitor_host MODE     (forks itself as the client)
 *   upcall   no PMIX_SERVER_ENABLE_MONITORING: every request reaches the
 *            host's monitor upcall with the requestor and its PMIX_USERID /
 *            PMIX_GRPID; the host's results come back to the client; once the
 *            host granted a heartbeat monitor, the client's heartbeats reach
 *            it as PMIX_SEND_HEARTBEAT upcalls; a cancel reaches it too; two
 *            requests with one id sent before the host answered: one granted,
 *            one PMIX_ERR_EXISTS (the second never reaches the host).
 *   none     no ENABLE_MONITORING and no monitor upcall: PMIX_ERR_NOT_SUPPORTED.
 *   enabled  PMIX_SERVER_ENABLE_MONITORING: a heartbeat monitor is the
 *            library's (no upcall); a kind no psensor module takes (process
 *            resource usage) goes to the host's upcall, never to a silent
 *            success; the alert reaches the client and the host process's own
 *            handler with PMIX_MONITOR_APP_CONTROL false.
 * Prints "monitor host MODE ok" (host) and "monitor client MODE ok" (client).
 * Every wait is bounded by alarm(). */
#include <pmix.h>
#include <pmix_server.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host_common.h"

#define OUR_CODE (PMIX_EXTERNAL_ERR_BASE - 43)
#define PROC_RESOURCE_USAGE "pmix.monitor.presuse" /* the standard's; not in PMIx 4.2 */

#define CHECK(cond, ...)                                      \
    do {                                                      \
        if (!(cond)) {                                        \
            fprintf(stdout, "monitor_host %s FAILED: ", who); \
            fprintf(stdout, __VA_ARGS__);                     \
            fprintf(stdout, "\n");                            \
            fflush(stdout);                                   \
            exit(1);                                          \
        }                                                     \
    } while (0)

static const char *who = "host";
static const char *mode;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int n_monitor, n_heartbeat_mon, n_beats, n_cancel, n_resource, n_alerts, ids_ok = 1;
static int alert_app_control = -1;

static void nap_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The answer to a request with id "dup" comes later, from another thread: the
 * second request with that id reaches the server before it. */
struct late {
    pmix_info_cbfunc_t cbfunc;
    void *cbdata;
};
static void *answer_late(void *arg) {
    struct late *l = arg;
    nap_ms(300);
    l->cbfunc(PMIX_SUCCESS, NULL, 0, l->cbdata, NULL, NULL);
    free(l);
    return NULL;
}

static pmix_status_t host_monitor(const pmix_proc_t *requestor, const pmix_info_t *monitor,
                                  pmix_status_t error, const pmix_info_t directives[], size_t ndirs,
                                  pmix_info_cbfunc_t cbfunc, void *cbdata) {
    (void)error;
    int uid_ok = 0, gid_ok = 0, late = 0;
    for (size_t i = 0; i < ndirs; ++i) {
        if (PMIX_CHECK_KEY(&directives[i], PMIX_MONITOR_ID) &&
            directives[i].value.type == PMIX_STRING &&
            strcmp(directives[i].value.data.string, "dup") == 0)
            late = 1;
        if (PMIX_CHECK_KEY(&directives[i], PMIX_USERID) &&
            directives[i].value.data.uint32 == (uint32_t)getuid())
            uid_ok = 1;
        if (PMIX_CHECK_KEY(&directives[i], PMIX_GRPID) &&
            directives[i].value.data.uint32 == (uint32_t)getgid())
            gid_ok = 1;
    }
    pthread_mutex_lock(&lock);
    ++n_monitor;
    if (requestor == NULL || strcmp(requestor->nspace, "monH") != 0 || requestor->rank != 0)
        ids_ok = 0;
    if (PMIX_CHECK_KEY(monitor, PMIX_SEND_HEARTBEAT)) {
        ++n_beats;
    } else if (!uid_ok || !gid_ok) {
        ids_ok = 0; /* every request carries the requestor's ids */
    }
    if (PMIX_CHECK_KEY(monitor, PMIX_MONITOR_HEARTBEAT)) ++n_heartbeat_mon;
    if (PMIX_CHECK_KEY(monitor, PMIX_MONITOR_CANCEL)) ++n_cancel;
    if (PMIX_CHECK_KEY(monitor, PROC_RESOURCE_USAGE)) ++n_resource;
    pthread_mutex_unlock(&lock);
    if (PMIX_CHECK_KEY(monitor, PMIX_SEND_HEARTBEAT)) return PMIX_OPERATION_SUCCEEDED;
    if (late) {
        struct late *l = malloc(sizeof *l);
        l->cbfunc = cbfunc;
        l->cbdata = cbdata;
        pthread_t t;
        if (pthread_create(&t, NULL, answer_late, l) != 0) return PMIX_ERR_OUT_OF_RESOURCE;
        pthread_detach(t);
        return PMIX_SUCCESS;
    }
    /* Answer inline with a result the client must see. */
    pmix_info_t result;
    PMIX_INFO_CONSTRUCT(&result);
    PMIX_INFO_LOAD(&result, PMIX_MONITOR_ID, "granted-by-host", PMIX_STRING);
    cbfunc(PMIX_SUCCESS, &result, 1, cbdata, NULL, NULL);
    PMIX_INFO_DESTRUCT(&result);
    return PMIX_SUCCESS;
}

static void host_handler(size_t ref, pmix_status_t status, const pmix_proc_t *source,
                         pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                         pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)ref, (void)source, (void)results, (void)nresults;
    if (status == OUR_CODE) {
        pthread_mutex_lock(&lock);
        ++n_alerts;
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_MONITOR_APP_CONTROL))
                alert_app_control = info[i].value.data.flag ? 1 : 0;
        }
        pthread_mutex_unlock(&lock);
    }
    if (cbfunc != NULL) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static _Atomic int client_alerts = 0; /* the handler runs on the progress thread */
static void client_handler(size_t ref, pmix_status_t status, const pmix_proc_t *source,
                           pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                           pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)ref, (void)status, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    ++client_alerts;
    if (cbfunc != NULL) cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static pmix_status_t hb_monitor(const char *id, pmix_info_t **results, size_t *nresults) {
    pmix_info_t mon, d[2];
    uint32_t one = 1;
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    PMIX_INFO_LOAD(&d[0], PMIX_MONITOR_HEARTBEAT_TIME, &one, PMIX_UINT32);
    PMIX_INFO_LOAD(&d[1], PMIX_MONITOR_ID, id, PMIX_STRING);
    pmix_status_t rc = PMIx_Process_monitor(&mon, OUR_CODE, d, 2, results, nresults);
    PMIX_INFO_DESTRUCT(&d[1]);
    return rc;
}

static _Atomic int nb_done = 0;
static _Atomic pmix_status_t nb_status[2];
static void nb_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                  pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)info, (void)ninfo;
    nb_status[(int)(intptr_t)cbdata] = status;
    if (release_fn != NULL) release_fn(release_cbdata);
    __sync_fetch_and_add(&nb_done, 1);
}

/* Two requests with one id, sent back to back before the host answered the
 * first: exactly one is granted, the other refused with PMIX_ERR_EXISTS. */
static void same_id_twice(void) {
    pmix_info_t mon, d[2];
    uint32_t one = 1;
    PMIX_INFO_LOAD(&mon, PMIX_MONITOR_HEARTBEAT, NULL, PMIX_POINTER);
    PMIX_INFO_LOAD(&d[0], PMIX_MONITOR_HEARTBEAT_TIME, &one, PMIX_UINT32);
    PMIX_INFO_LOAD(&d[1], PMIX_MONITOR_ID, "dup", PMIX_STRING);
    CHECK(PMIx_Process_monitor_nb(&mon, OUR_CODE, d, 2, nb_cb, (void *)0) == PMIX_SUCCESS, "nb 0");
    CHECK(PMIx_Process_monitor_nb(&mon, OUR_CODE, d, 2, nb_cb, (void *)1) == PMIX_SUCCESS, "nb 1");
    while (atomic_load(&nb_done) < 2) nap_ms(5);
    PMIX_INFO_DESTRUCT(&d[1]);
    const int granted = (nb_status[0] == PMIX_SUCCESS) + (nb_status[1] == PMIX_SUCCESS);
    const int refused = (nb_status[0] == PMIX_ERR_EXISTS) + (nb_status[1] == PMIX_ERR_EXISTS);
    CHECK(granted == 1 && refused == 1, "same id twice: %s and %s", PMIx_Error_string(nb_status[0]),
          PMIx_Error_string(nb_status[1]));
}

static pmix_status_t cancel(const char *id) {
    pmix_info_t mon;
    PMIX_INFO_CONSTRUCT(&mon);
    if (id != NULL) {
        PMIX_INFO_LOAD(&mon, PMIX_MONITOR_CANCEL, id, PMIX_STRING);
    } else {
        PMIX_LOAD_KEY(mon.key, PMIX_MONITOR_CANCEL);
    }
    pmix_status_t rc = PMIx_Process_monitor(&mon, PMIX_SUCCESS, NULL, 0, NULL, NULL);
    PMIX_INFO_DESTRUCT(&mon);
    return rc;
}

static int client_main(void) {
    who = "client";
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "init");
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc;
    if (strcmp(mode, "none") == 0) {
        rc = hb_monitor("h", &results, &nresults);
        CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "without upcall: %s", PMIx_Error_string(rc));
        if (results != NULL) PMIX_INFO_FREE(results, nresults); /* the refusal's reason */
        rc = cancel("h");
        CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "cancel without upcall: %s", PMIx_Error_string(rc));
    } else if (strcmp(mode, "upcall") == 0) {
        rc = hb_monitor("h", &results, &nresults);
        CHECK(rc == PMIX_SUCCESS, "heartbeat monitor: %s", PMIx_Error_string(rc));
        CHECK(nresults == 1 && PMIX_CHECK_KEY(&results[0], PMIX_MONITOR_ID) &&
                  strcmp(results[0].value.data.string, "granted-by-host") == 0,
              "the host's results did not come back");
        PMIX_INFO_FREE(results, nresults);
        for (int i = 0; i < 3; ++i) PMIx_Heartbeat();
        rc = cancel("h"); /* after the beats on the same connection */
        CHECK(rc == PMIX_SUCCESS, "cancel: %s", PMIx_Error_string(rc));
        same_id_twice();
    } else {
        pmix_status_t code = OUR_CODE;
        CHECK(PMIx_Register_event_handler(&code, 1, NULL, 0, client_handler, NULL, NULL) >= 0,
              "register");
        rc = hb_monitor("h", &results, &nresults);
        CHECK(rc == PMIX_SUCCESS, "heartbeat monitor: %s", PMIx_Error_string(rc));
        CHECK(nresults == 1 && PMIX_CHECK_KEY(&results[0], PMIX_MONITOR_ID) &&
                  strcmp(results[0].value.data.string, "h") == 0,
              "the library's answer names the monitor");
        PMIX_INFO_FREE(results, nresults);
        pmix_info_t mon;
        PMIX_INFO_LOAD(&mon, PROC_RESOURCE_USAGE, NULL, PMIX_POINTER);
        rc = PMIx_Process_monitor(&mon, OUR_CODE, NULL, 0, NULL, NULL);
        CHECK(rc == PMIX_SUCCESS, "resource usage (the host's): %s", PMIx_Error_string(rc));
        while (client_alerts == 0) nap_ms(10); /* no beats: the alert (bounded by alarm) */
        rc = cancel(NULL);
        CHECK(rc == PMIX_SUCCESS, "cancel all: %s", PMIx_Error_string(rc));
    }
    PMIx_Finalize(NULL, 0);
    printf("monitor client %s ok\n", mode);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    mode = argv[1];
    alarm(60);
    if (argc > 2 && strcmp(argv[2], "client") == 0) return client_main();
    CHECK(strcmp(mode, "upcall") == 0 || strcmp(mode, "none") == 0 || strcmp(mode, "enabled") == 0,
          "unknown mode %s", mode);
    signal(SIGPIPE, SIG_IGN);
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    if (strcmp(mode, "none") != 0) module.monitor = host_monitor;
    pmix_info_t init;
    bool on = true;
    PMIX_INFO_LOAD(&init, PMIX_SERVER_ENABLE_MONITORING, &on, PMIX_BOOL);
    const int enabled = strcmp(mode, "enabled") == 0;
    CHECK(PMIx_server_init(&module, enabled ? &init : NULL, enabled ? 1 : 0) == PMIX_SUCCESS,
          "server init");
    CHECK(PMIx_Register_event_handler(NULL, 0, NULL, 0, host_handler, NULL, NULL) >= 0,
          "host handler");
    CHECK(host_register_job("monH", 1) == PMIX_SUCCESS, "register job");
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "monH", 0);
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        execl("/proc/self/exe", argv[0], mode, "client", (char *)NULL);
        _exit(127);
    }
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the client failed (%d)", status);
    pthread_mutex_lock(&lock);
    CHECK(ids_ok, "an upcall without the requestor or its PMIX_USERID/PMIX_GRPID");
    if (strcmp(mode, "upcall") == 0) {
        CHECK(n_heartbeat_mon == 2, "%d heartbeat monitor upcalls ('h', 'dup' once)",
              n_heartbeat_mon);
        /* Beats called while one is on its way merge with it: 1 to 3 arrive. */
        CHECK(n_beats >= 1 && n_beats <= 3, "%d heartbeats reached the host, 3 sent", n_beats);
        CHECK(n_cancel == 1, "%d cancel upcalls", n_cancel);
    } else if (enabled) {
        CHECK(n_heartbeat_mon == 0, "the library's heartbeat monitor reached the host");
        CHECK(n_resource == 1, "%d resource usage upcalls", n_resource);
        CHECK(n_cancel == 1, "%d cancel upcalls (the host had one monitor)", n_cancel);
        CHECK(n_alerts >= 1, "the host process's handler saw no alert");
        CHECK(alert_app_control == 0, "PMIX_MONITOR_APP_CONTROL %d", alert_app_control);
    } else {
        CHECK(n_monitor == 0, "an upcall without a monitor upcall?");
    }
    pthread_mutex_unlock(&lock);
    PMIx_server_finalize();
    printf("monitor host %s ok\n", mode);
    return 0;
}
