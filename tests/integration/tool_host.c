/* A host and a tool (tool_tool.c) that it starts with only the server's URI
 * in the tool's environment.
 *
 * "accept": the host passes PMIX_SERVER_TOOL_SUPPORT and has tool_connected.
 * The tool notifies CODE_TOOL_READY (the host's own handler gets it), the
 * host notifies CODE_PING_GLOBAL (the tool's handler gets it), the tool
 * answers CODE_PING_CUSTOM, and the host finalizes its server: the tool must
 * then get PMIX_ERR_LOST_CONNECTION. Prints "tool_host accept ok".
 *
 * A host that does not accept tools, in two ways the standard names
 * (Chap_API_Tools, Chap_API_Security): no PMIX_SERVER_TOOL_SUPPORT at
 * PMIx_server_init ("nosupport"), or no tool_connected upcall ("nohook").
 * It starts tool_tool in "refused" mode with only the server's URI in its
 * environment; the tool must get PMIX_ERR_NOT_SUPPORTED at once, and the
 * upcall must never run. Prints "tool_host <mode> ok".
 *
 *   tool_host accept|nosupport|nohook <path of tool_tool> */
#include <pmix.h>
#include <pmix_server.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool_common.h"

static _Atomic int upcalls = 0;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int got_ready = 0, got_answer = 0;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    if (status == CODE_TOOL_READY) got_ready++;
    if (status == CODE_PING_CUSTOM) got_answer++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Waits (at most 30 s) until *flag is non-zero. */
static int wait_flag(int *flag) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    int rc = 0;
    pthread_mutex_lock(&lock);
    while (*flag == 0 && rc == 0) rc = pthread_cond_timedwait(&cond, &lock, &deadline);
    int ok = *flag != 0;
    pthread_mutex_unlock(&lock);
    return ok;
}

static void on_tool(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                    void *cbdata) {
    (void)info, (void)ninfo;
    upcalls++;
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, "tool-host-tool", 0);
    cbfunc(PMIX_SUCCESS, &proc, cbdata);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const int accept = argc == 3 && strcmp(argv[1], "accept") == 0;
    if (argc != 3 ||
        (!accept && strcmp(argv[1], "nosupport") != 0 && strcmp(argv[1], "nohook") != 0)) {
        fprintf(stderr, "usage: tool_host accept|nosupport|nohook TOOL\n");
        return 2;
    }
    const int support = accept || strcmp(argv[1], "nohook") == 0;
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    if (strcmp(argv[1], "nohook") != 0) module.tool_connected = on_tool;
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_server_init(&module, support ? &info : NULL, support ? 1 : 0);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        printf("tool_host FAILED: PMIx_server_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (accept) {
        pmix_status_t codes[2] = {CODE_TOOL_READY, CODE_PING_CUSTOM};
        rc = PMIx_Register_event_handler(codes, 2, NULL, 0, on_event, NULL, NULL);
        if (rc < 0) {
            printf("tool_host FAILED: PMIx_Register_event_handler: %s\n", PMIx_Error_string(rc));
            return 1;
        }
    }
    /* The server's URI, as a child of this host would get it. */
    pmix_proc_t child;
    PMIX_LOAD_PROCID(&child, "tool-host-job", 0);
    char **env = NULL;
    rc = PMIx_server_setup_fork(&child, &env);
    const char *uri = NULL;
    for (char **e = env; e != NULL && *e != NULL; ++e) {
        if (strncmp(*e, "PMIX_SERVER_URI41=", 18) == 0) uri = *e + 18;
    }
    if (rc != PMIX_SUCCESS || uri == NULL) {
        printf("tool_host FAILED: no server URI from setup_fork\n");
        return 1;
    }
    char uri_copy[4096];
    snprintf(uri_copy, sizeof uri_copy, "%s", uri);
    for (char **e = env; *e != NULL; ++e) free(*e);
    free(env);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("PMIX_SERVER_URI41", uri_copy, 1);
        execl(argv[2], argv[2], accept ? "hosted" : "refused", (char *)NULL);
        _exit(127);
    }
    if (accept) {
        if (!wait_flag(&got_ready)) {
            kill(pid, SIGKILL);
            printf("tool_host FAILED: no CODE_TOOL_READY from the tool\n");
            return 1;
        }
        rc = PMIx_Notify_event(CODE_PING_GLOBAL, NULL, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
        if (rc != PMIX_SUCCESS || !wait_flag(&got_answer)) {
            kill(pid, SIGKILL);
            printf("tool_host FAILED: ping %s, answer %d\n", PMIx_Error_string(rc), got_answer);
            return 1;
        }
        PMIx_server_finalize(); /* the tool loses its server */
    }
    int status = 0;
    pid_t w = 0;
    for (int i = 0; i < 600 && (w = waitpid(pid, &status, WNOHANG)) == 0; ++i) usleep(50000);
    if (w != pid) {
        kill(pid, SIGKILL);
        printf("tool_host FAILED: the tool did not exit\n");
        return 1;
    }
    if (!accept) PMIx_server_finalize();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || upcalls != (accept ? 1 : 0)) {
        printf("tool_host FAILED: tool status %d, %d tool_connected upcalls\n", status, upcalls);
        return 1;
    }
    printf("tool_host %s ok\n", argv[1]);
    return 0;
}
