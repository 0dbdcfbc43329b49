/* A job (2 ranks under pmixrun) that starts a tool outside itself and
 * exchanges events with it (tool_tool.c).
 *
 *   tool_job pid|uri <path of tool_tool>
 * Both ranks register for CODE_TOOL_READY and fence; rank 0 then starts the
 * tool with every PMIX_* variable but PMIX_MCA_* removed (the tool is not part
 * of the job), giving it pmixrun's pid (pid) or the server URI (uri), and the
 * job's nspace. When the tool's CODE_TOOL_READY arrives (its source: the
 * tool), rank 1 pings the tool in a CUSTOM range holding only the tool, and
 * rank 0 pings with range GLOBAL. Rank 0 waits for the tool to exit 0.
 * Prints "job ok rank N" per rank. */
#include <pmix.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool_common.h"

extern char **environ;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready = 0;
static pmix_proc_t tool;

static void fail(const char *what, pmix_status_t rc) {
    printf("job FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

static void on_ready(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    tool = *source;
    ready = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static pid_t start_tool(const char *mode, const char *path, const char *nspace) {
    char where[4096];
    if (strcmp(mode, "pid") == 0) {
        snprintf(where, sizeof where, "%ld", (long)getppid()); /* pmixrun */
    } else {
        const char *uri = getenv("PMIX_SERVER_URI41");
        if (uri == NULL) fail("no PMIX_SERVER_URI41", PMIX_ERR_NOT_FOUND);
        snprintf(where, sizeof where, "%s", uri);
    }
    pid_t pid = fork();
    if (pid != 0) return pid;
    /* Outside the job: nothing of the job's PMIx environment. */
    for (;;) {
        char *victim = NULL;
        for (char **e = environ; *e != NULL; ++e) {
            if (strncmp(*e, "PMIX", 4) == 0 && strncmp(*e, "PMIX_MCA_", 9) != 0) {
                victim = *e;
                break;
            }
        }
        if (victim == NULL) break;
        char name[256];
        size_t n = strcspn(victim, "=");
        if (n >= sizeof name) n = sizeof name - 1;
        memcpy(name, victim, n);
        name[n] = '\0';
        unsetenv(name);
    }
    execl(path, path, mode, where, nspace, (char *)NULL);
    perror("exec tool");
    _exit(127);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3) {
        fprintf(stderr, "usage: tool_job pid|uri TOOL\n");
        return 2;
    }
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_Init", rc);
    pmix_status_t code = CODE_TOOL_READY;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_ready, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_Fence", rc);
    pid_t child = -1;
    if (me.rank == 0) child = start_tool(argv[1], argv[2], me.nspace);

    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    int wrc = 0;
    pthread_mutex_lock(&lock);
    while (!ready && wrc == 0) wrc = pthread_cond_timedwait(&cond, &lock, &deadline);
    const int got = ready;
    const pmix_proc_t target = tool;
    pthread_mutex_unlock(&lock);
    if (!got) {
        if (child > 0) kill(child, SIGKILL);
        fail("no CODE_TOOL_READY from the tool", PMIX_ERR_TIMEOUT);
    }
    if (strcmp(target.nspace, me.nspace) == 0) fail("the tool has the job's nspace", PMIX_ERROR);

    if (me.rank == 1) {
        pmix_info_t info;
        PMIX_INFO_CONSTRUCT(&info);
        pmix_data_array_t darray = {PMIX_PROC, 1, (void *)&target};
        PMIX_INFO_LOAD(&info, PMIX_EVENT_CUSTOM_RANGE, &darray, PMIX_DATA_ARRAY);
        rc = PMIx_Notify_event(CODE_PING_CUSTOM, &me, PMIX_RANGE_CUSTOM, &info, 1, NULL, NULL);
        PMIX_INFO_DESTRUCT(&info);
        if (rc != PMIX_SUCCESS) fail("custom ping", rc);
    } else {
        rc = PMIx_Notify_event(CODE_PING_GLOBAL, &me, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
        if (rc != PMIX_SUCCESS) fail("global ping", rc);
        int status = 0;
        pid_t w = 0;
        for (int i = 0; i < 600 && (w = waitpid(child, &status, WNOHANG)) == 0; ++i) usleep(50000);
        if (w != child) {
            kill(child, SIGKILL);
            fail("the tool did not exit", PMIX_ERR_TIMEOUT);
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("the tool failed", PMIX_ERROR);
    }
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("final fence", rc);
    printf("job ok rank %u (tool %s:%u)\n", me.rank, target.nspace, target.rank);
    PMIx_Finalize(NULL, 0);
    return 0;
}
