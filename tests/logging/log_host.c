/* A host embedding the server (public API only) that shows what its `log`
 * upcall receives, and logs itself through PMIx_Log in the server process.
 *
 *   log_host plain     no gateway: a client (this program, forked) logs
 *                      STDOUT with PMIX_LOG_GENERATE_TIMESTAMP, STDERR with its
 *                      own PMIX_LOG_TIMESTAMP and PMIX_LOG_SOURCE, and
 *                      GLOBAL_SYSLOG; then the host logs STDOUT itself.
 *   log_host gateway   started with PMIX_SERVER_GATEWAY: the host logs
 *                      GLOBAL_SYSLOG "gateway record" (written by plog_syslog,
 *                      no upcall) and STDOUT (upcall).
 * The upcall prints one line per call:
 *   upcall KEY=VALUE from NSPACE:RANK uid=ok|bad gid=ok|bad source=NS:RANK|none ts=N|none
 * and answers success for stdout/stderr, PMIX_ERR_NOT_SUPPORTED otherwise.
 * Prints "log_host <mode> ok" at the end. */
#include <pmix.h>
#include <pmix_server.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../integration/host_common.h"

#define NSPACE "loghost"

static void fail(const char *what, pmix_status_t rc) {
    printf("log_host FAILED: %s: %s (%d)\n", what, PMIx_Error_string(rc), rc);
    fflush(stdout);
    exit(1);
}

static void on_log(const pmix_proc_t *client, const pmix_info_t data[], size_t ndata,
                   const pmix_info_t directives[], size_t ndirs, pmix_op_cbfunc_t cbfunc,
                   void *cbdata) {
    const char *uid = "none", *gid = "none";
    char source[PMIX_MAX_NSLEN + 16] = "none", ts[32] = "none";
    for (size_t i = 0; i < ndirs; ++i) {
        const pmix_info_t *d = &directives[i];
        if (PMIX_CHECK_KEY(d, PMIX_USERID)) {
            uid = d->value.type == PMIX_UINT32 && d->value.data.uint32 == getuid() ? "ok" : "bad";
        } else if (PMIX_CHECK_KEY(d, PMIX_GRPID)) {
            gid = d->value.type == PMIX_UINT32 && d->value.data.uint32 == getgid() ? "ok" : "bad";
        } else if (PMIX_CHECK_KEY(d, PMIX_LOG_SOURCE) && d->value.type == PMIX_PROC) {
            snprintf(source, sizeof source, "%s:%u", d->value.data.proc->nspace,
                     d->value.data.proc->rank);
        } else if (PMIX_CHECK_KEY(d, PMIX_LOG_TIMESTAMP) && d->value.type == PMIX_TIME) {
            snprintf(ts, sizeof ts, "%ld", (long)d->value.data.time);
        }
    }
    bool handled = true;
    for (size_t i = 0; i < ndata; ++i) {
        printf("upcall %s=%s from %s:%u uid=%s gid=%s source=%s ts=%s\n", data[i].key,
               data[i].value.type == PMIX_STRING ? data[i].value.data.string : "?", client->nspace,
               client->rank, uid, gid, source, ts);
        handled = handled && (PMIX_CHECK_KEY(&data[i], PMIX_LOG_STDOUT) ||
                              PMIX_CHECK_KEY(&data[i], PMIX_LOG_STDERR));
    }
    fflush(stdout);
    if (cbfunc != NULL) cbfunc(handled ? PMIX_SUCCESS : PMIX_ERR_NOT_SUPPORTED, cbdata);
}

static pmix_status_t log1(const char *key, const char *text, pmix_info_t *dirs, size_t ndirs) {
    pmix_info_t data;
    PMIX_INFO_LOAD(&data, key, text, PMIX_STRING);
    pmix_status_t rc = PMIx_Log(&data, 1, dirs, ndirs);
    PMIX_INFO_DESTRUCT(&data);
    return rc;
}

static int client_main(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("client PMIx_Init", rc);
    pmix_info_t gen;
    bool yes = true;
    PMIX_INFO_LOAD(&gen, PMIX_LOG_GENERATE_TIMESTAMP, &yes, PMIX_BOOL);
    rc = log1(PMIX_LOG_STDOUT, "stamped by the caller", &gen, 1);
    PMIX_INFO_DESTRUCT(&gen);
    if (rc != PMIX_SUCCESS) fail("client stdout", rc);
    pmix_info_t dirs[2];
    time_t when = 1234567;
    pmix_proc_t other;
    PMIX_LOAD_PROCID(&other, "other", 5);
    PMIX_INFO_LOAD(&dirs[0], PMIX_LOG_TIMESTAMP, &when, PMIX_TIME);
    PMIX_INFO_LOAD(&dirs[1], PMIX_LOG_SOURCE, &other, PMIX_PROC);
    rc = log1(PMIX_LOG_STDERR, "carried through", dirs, 2);
    PMIX_INFO_DESTRUCT(&dirs[0]);
    PMIX_INFO_DESTRUCT(&dirs[1]);
    if (rc != PMIX_SUCCESS) fail("client stderr", rc);
    rc = log1(PMIX_LOG_GLOBAL_SYSLOG, "to the gateway", NULL, 0);
    if (rc != PMIX_ERR_NOT_SUPPORTED) fail("client global syslog (host: not supported)", rc);
    PMIx_Finalize(NULL, 0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "client") == 0) return client_main();
    if (argc != 2 || (strcmp(argv[1], "plain") != 0 && strcmp(argv[1], "gateway") != 0)) {
        fprintf(stderr, "usage: log_host plain|gateway\n");
        return 2;
    }
    const bool gateway = strcmp(argv[1], "gateway") == 0;
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.log = on_log;
    pmix_info_t init[2];
    size_t ninit = 0;
    PMIX_INFO_LOAD(&init[ninit], PMIX_SERVER_NSPACE, "loghost-server", PMIX_STRING);
    ++ninit;
    if (gateway) {
        bool yes = true;
        PMIX_INFO_LOAD(&init[ninit], PMIX_SERVER_GATEWAY, &yes, PMIX_BOOL);
        ++ninit;
    }
    pmix_status_t rc = PMIx_server_init(&module, init, ninit);
    for (size_t i = 0; i < ninit; ++i) PMIX_INFO_DESTRUCT(&init[i]);
    if (rc != PMIX_SUCCESS) fail("PMIx_server_init", rc);

    if (gateway) {
        rc = log1(PMIX_LOG_GLOBAL_SYSLOG, "gateway record", NULL, 0);
        if (rc != PMIX_SUCCESS) fail("host global syslog on the gateway", rc);
    } else {
        if ((rc = host_register_job(NSPACE, 1)) != PMIX_SUCCESS) fail("register", rc);
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, NSPACE, 0);
        char **env = NULL;
        if ((rc = PMIx_server_setup_fork(&p, &env)) != PMIX_SUCCESS) fail("setup_fork", rc);
        pid_t pid = fork();
        if (pid == 0) {
            for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
            execl("/proc/self/exe", argv[0], "client", (char *)NULL);
            _exit(127);
        }
        for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
        free(env);
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("the client failed", PMIX_ERROR);
    }
    rc = log1(PMIX_LOG_STDOUT, "from the host", NULL, 0);
    if (rc != PMIX_SUCCESS) fail("host stdout", rc);
    PMIx_server_finalize();
    printf("log_host %s ok\n", argv[1]);
    fflush(stdout);
    return 0;
}
