/* Helpers of the tests of a tool attached to several session servers
 * (tool_lost.c, tool_lost_current.c; docs/tools.md, "Several servers"):
 * starting and ending rdv_host servers, and recording the sources of
 * PMIX_ERR_LOST_CONNECTION. The includer defines, before including this,
 *   static void fail(const char *what, pmix_status_t rc);   (prints, exits 1) */
#ifndef PMIXPP_TESTS_TOOL_SERVERS_H
#define PMIXPP_TESTS_TOOL_SERVERS_H

#include <pmix_tool.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lost_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lost_cond = PTHREAD_COND_INITIALIZER;
static char lost[4][PMIX_MAX_NSLEN + 1];
static int nlost = 0;

/* A PMIX_ERR_LOST_CONNECTION handler: records the source's nspace. */
static void on_lost(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)status, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&lost_lock);
    if (nlost < 4) snprintf(lost[nlost++], PMIX_MAX_NSLEN + 1, "%s", source ? source->nspace : "");
    pthread_cond_broadcast(&lost_cond);
    pthread_mutex_unlock(&lost_lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Waits (at most 30 s) for the n-th loss; returns its source or NULL. */
static const char *wait_lost(int n) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    int rc = 0;
    pthread_mutex_lock(&lost_lock);
    while (nlost < n && rc == 0) rc = pthread_cond_timedwait(&lost_cond, &lost_lock, &deadline);
    const char *src = nlost >= n ? lost[n - 1] : NULL;
    pthread_mutex_unlock(&lost_lock);
    return src;
}

struct host {
    pid_t pid;
    FILE *in;
};

/* Starts `path` (rdv_host) as a session server of `nspace` in `dir` and
 * waits (at most 30 s) until it is ready. */
static struct host start_host(const char *path, const char *nspace, const char *dir) {
    int to[2], from[2];
    /* close-on-exec: a host started later must not hold this one's stdin open */
    if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0) fail("pipe", PMIX_ERROR);
    char ns[64], td[512];
    snprintf(ns, sizeof ns, "nspace=%s", nspace);
    snprintf(td, sizeof td, "tmpdir=%s", dir);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        execl(path, path, "session", ns, td, (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    FILE *out = fdopen(from[0], "r");
    char line[256] = "";
    alarm(30); /* a host that never gets ready fails the test */
    if (fgets(line, sizeof line, out) == NULL || strncmp(line, "rdv_host ready", 14) != 0)
        fail("a host did not start", PMIX_ERROR);
    alarm(0);
    struct host h = {pid, fdopen(to[1], "w")};
    return h;
}

/* Closes the host's stdin (it finalizes its server) and waits for it. */
static void stop_host(struct host *h) {
    fclose(h->in);
    int st;
    waitpid(h->pid, &st, 0);
}

#endif
