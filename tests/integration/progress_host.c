/* PMIX_EXTERNAL_PROGRESS and PMIx_Progress (runtime/progress.hpp,
 * docs/progress.md).
 * usage: progress_host host   a host embedding the server API with
 *   PMIX_EXTERNAL_PROGRESS: it registers job "xp" of 2 ranks, forks them, and
 *   drives the library with PMIx_Progress until both have exited. The library
 *   must start no thread of its own: the process stays single-threaded.
 *        progress_host client a client that inits with PMIX_EXTERNAL_PROGRESS:
 *   single-threaded too; its blocking calls (Fence, Get) progress the library
 *   while they wait, and a PMIx_Get_nb's callback runs on its thread from
 *   PMIx_Progress.
 * Prints "progress ok: <what>"; every wait is bounded (alarm). */
#define _GNU_SOURCE
#include <pmix.h>
#include <pmix_server.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(cond, ...) HOST_CHECK("progress_host", cond, __VA_ARGS__)

/* The "Threads:" count of /proc/self/status, or -1. */
static int threads(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL) return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "Threads:", 8) == 0) n = atoi(line + 8);
    }
    fclose(f);
    return n;
}

static _Atomic int got = 0;
static _Atomic long got_tid = 0;
static _Atomic pmix_status_t got_status = PMIX_ERR_TIMEOUT;

static void on_value(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    (void)kv, (void)cbdata;
    got_status = status;
    got_tid = (long)syscall(SYS_gettid);
    got = 1;
}

static int client_main(void) {
    pmix_proc_t me;
    pmix_info_t ext;
    bool yes = true;
    PMIX_INFO_LOAD(&ext, PMIX_EXTERNAL_PROGRESS, &yes, PMIX_BOOL);
    CHECK(PMIx_Init(&me, &ext, 1) == PMIX_SUCCESS, "client init");
    PMIX_INFO_DESTRUCT(&ext);
    CHECK(threads() == 1, "client %u: %d threads after PMIx_Init", me.rank, threads());

    pmix_value_t v;
    char text[32];
    snprintf(text, sizeof text, "from %u", me.rank);
    PMIX_VALUE_LOAD(&v, text, PMIX_STRING);
    CHECK(PMIx_Put(PMIX_GLOBAL, "xp.key", &v) == PMIX_SUCCESS, "put");
    PMIX_VALUE_DESTRUCT(&v);
    CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");
    pmix_info_t collect;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Fence(NULL, 0, &collect, 1) == PMIX_SUCCESS, "fence");
    PMIX_INFO_DESTRUCT(&collect);

    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, me.nspace, 1 - me.rank);
    pmix_value_t *pv = NULL;
    CHECK(PMIx_Get(&peer, "xp.key", NULL, 0, &pv) == PMIX_SUCCESS, "get peer's key");
    snprintf(text, sizeof text, "from %u", peer.rank);
    CHECK(pv->type == PMIX_STRING && strcmp(pv->data.string, text) == 0, "peer's value");
    PMIX_VALUE_RELEASE(pv);

    /* A non-blocking call completes from PMIx_Progress, on this thread. */
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    CHECK(PMIx_Get_nb(&wild, PMIX_JOB_SIZE, NULL, 0, on_value, NULL) == PMIX_SUCCESS, "get_nb");
    while (!got) {
        PMIx_Progress();
        usleep(1000); /* bounded by alarm() */
    }
    CHECK(got_status == PMIX_SUCCESS, "get_nb: %s", PMIx_Error_string(got_status));
    CHECK(got_tid == (long)getpid(), "the callback ran on thread %ld, not the caller's",
          (long)got_tid);
    CHECK(threads() == 1, "client %u: %d threads", me.rank, threads());
    CHECK(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "last fence");
    printf("progress ok: client rank %u single-threaded\n", me.rank);
    fflush(stdout);
    CHECK(PMIx_Finalize(NULL, 0) == PMIX_SUCCESS, "finalize");
    return 0;
}

static int host_main(const char *self) {
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    pmix_info_t ext;
    bool yes = true;
    PMIX_INFO_LOAD(&ext, PMIX_EXTERNAL_PROGRESS, &yes, PMIX_BOOL);
    CHECK(PMIx_server_init(&module, &ext, 1) == PMIX_SUCCESS, "server init");
    PMIX_INFO_DESTRUCT(&ext);
    CHECK(threads() == 1, "host: %d threads after PMIx_server_init", threads());
    CHECK(host_register_job("xp", 2) == PMIX_SUCCESS, "register job");

    pid_t pids[2];
    for (int r = 0; r < 2; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, "xp", (pmix_rank_t)r);
        char **env = NULL;
        CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
        pids[r] = fork();
        if (pids[r] == 0) {
            for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
            execl("/proc/self/exe", self, "client", (char *)NULL);
            _exit(127);
        }
        for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
        free(env);
    }
    /* The host's loop: nothing progresses the clients' requests but this. */
    int left = 2, failed = 0;
    while (left > 0) {
        PMIx_Progress();
        for (int r = 0; r < 2; ++r) {
            int status = 0;
            if (pids[r] > 0 && waitpid(pids[r], &status, WNOHANG) == pids[r]) {
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
                pids[r] = 0;
                --left;
            }
        }
        usleep(200); /* bounded by alarm() */
    }
    CHECK(!failed, "a client failed");
    CHECK(threads() == 1, "host: %d threads", threads());
    printf("progress ok: host single-threaded\n");
    fflush(stdout);
    CHECK(PMIx_server_finalize() == PMIX_SUCCESS, "server finalize");
    return 0;
}

int main(int argc, char **argv) {
    alarm(90); /* a hang is a failure, not a stuck test */
    if (argc > 1 && strcmp(argv[1], "client") == 0) return client_main();
    CHECK(argc > 1 && strcmp(argv[1], "host") == 0, "usage: progress_host host");
    return host_main(argv[0]);
}
