/* A host embedding the server API: every way a client departs releases every
 * kind of waiter on it, with an error, within a bound, and the server goes on
 * serving the others (framework/server/README.md, "Departures").
 *
 * usage: departure_host KIND WAITER    (forks itself as the clients)
 *   KIND   finalized          the departing client calls PMIx_Finalize (never
 *                             having committed anything)
 *          lost               it exits without finalizing
 *          deregister_client  the host deregisters it (PMIx_server_deregister_client)
 *          deregister_nspace  the host deregisters its namespace
 *   WAITER get      the waiter's PMIx_Get(departer, "never.put") without
 *                   PMIX_TIMEOUT: PMIX_ERR_NOT_FOUND
 *          fence    PMIx_Fence over {waiter, departer}, no timeout:
 *                   PMIX_ERR_LOST_CONNECTION
 *          connect  PMIx_Connect over {waiter's job, departer's job}:
 *                   PMIX_ERR_LOST_CONNECTION
 *          shm      both in one job run on this node: a blocking PMIx_Fence of
 *                   the whole job waits in the shared-memory barrier:
 *                   PMIX_ERR_LOST_CONNECTION
 *          cleanup  the departer registered a file for cleanup
 *                   (PMIX_REGISTER_CLEANUP): the file is gone after its departure
 *          dmodex   the host's PMIx_server_dmodex_request for the departer
 *                   (which never commits): its callback gets PMIX_ERR_NOT_FOUND
 *          group    PMIx_Group_construct over {waiter, departer}:
 *                   PMIX_ERR_LOST_CONNECTION
 * The departer (D) connects first and waits; the waiter (W) signals that it
 * is about to block, the host gives the request 0.5 s to reach the server,
 * then the departure happens. W then fences over itself alone (the server
 * still serves it) unless its own job was the one deregistered. W's answer
 * must come within 10 s; W is killed by SIGALRM after 20 s (a hang fails). */
#include <pmix.h>
#include <pmix_server.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(...) HOST_CHECK("departure_host", __VA_ARGS__)

static const char *kind, *waiter;

/* The waiter W and the departer D. With the shm waiter both are ranks of one
 * job (its fence runs in the job's segment); otherwise each has its own job. */
static const char *w_nspace(void) {
    return strcmp(waiter, "shm") == 0 ? "dpS" : "dpW";
}
static const char *d_nspace(void) {
    return strcmp(waiter, "shm") == 0 ? "dpS" : "dpD";
}
static pmix_rank_t d_rank(void) {
    return strcmp(waiter, "shm") == 0 ? 1 : 0;
}

static void signal_fd(const char *name) {
    const char *fd = getenv(name);
    CHECK(fd != NULL && write(atoi(fd), "x", 1) == 1, "%s", name);
}

/* ---------------------------------------------------------------- departer */
static int departer_main(void) {
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "departer init");
    if (strcmp(waiter, "cleanup") == 0) {
        pmix_info_t d;
        PMIX_INFO_LOAD(&d, PMIX_REGISTER_CLEANUP, getenv("DEPARTURE_FILE"), PMIX_STRING);
        pmix_status_t rc = PMIx_Job_control(&me, 1, &d, 1, NULL, NULL);
        CHECK(rc == PMIX_SUCCESS, "register cleanup: %s", PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&d);
    }
    signal_fd("DEPARTURE_READY_FD");
    char c = 0;
    const char *go = getenv("DEPARTURE_GO_FD");
    CHECK(go != NULL && read(atoi(go), &c, 1) == 1, "departer go");
    if (strcmp(kind, "finalized") == 0) {
        pmix_status_t rc = PMIx_Finalize(NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "departer finalize: %s", PMIx_Error_string(rc));
    }
    /* lost: gone without a word; deregistered: the server closed us. */
    _exit(0);
}

/* ------------------------------------------------------------------ waiter */
static int waiter_main(void) {
    alarm(20);
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "waiter init");
    pmix_proc_t d;
    PMIX_LOAD_PROCID(&d, d_nspace(), d_rank());
    pmix_status_t want = PMIX_ERR_LOST_CONNECTION, rc = PMIX_SUCCESS;
    signal_fd("DEPARTURE_READY_FD");
    const double start = host_now();
    if (strcmp(waiter, "get") == 0) {
        pmix_value_t *val = NULL;
        want = PMIX_ERR_NOT_FOUND;
        rc = PMIx_Get(&d, "never.put", NULL, 0, &val);
        if (val != NULL) PMIX_VALUE_RELEASE(val);
    } else if (strcmp(waiter, "fence") == 0) {
        pmix_proc_t procs[2];
        PMIX_LOAD_PROCID(&procs[0], me.nspace, me.rank);
        procs[1] = d;
        rc = PMIx_Fence(procs, 2, NULL, 0);
    } else if (strcmp(waiter, "connect") == 0) {
        pmix_proc_t procs[2];
        PMIX_LOAD_PROCID(&procs[0], me.nspace, PMIX_RANK_WILDCARD);
        PMIX_LOAD_PROCID(&procs[1], d.nspace, PMIX_RANK_WILDCARD);
        rc = PMIx_Connect(procs, 2, NULL, 0);
    } else if (strcmp(waiter, "shm") == 0) {
        rc = PMIx_Fence(NULL, 0, NULL, 0);
    } else if (strcmp(waiter, "group") == 0) {
        pmix_proc_t procs[2];
        PMIX_LOAD_PROCID(&procs[0], me.nspace, me.rank);
        procs[1] = d;
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        rc = PMIx_Group_construct("departure.group", procs, 2, NULL, 0, &results, &nresults);
        if (results != NULL) PMIX_INFO_FREE(results, nresults);
    } else {
        want = PMIX_SUCCESS; /* cleanup, dmodex: the host checks */
    }
    const double took = host_now() - start;
    CHECK(rc == want, "%s after %s: %s after %.1f s (want %s)", waiter, kind, PMIx_Error_string(rc),
          took, PMIx_Error_string(want));
    const int own_job_gone = strcmp(kind, "deregister_nspace") == 0 && strcmp(waiter, "shm") == 0;
    if (!own_job_gone) {
        rc = PMIx_Fence(&me, 1, NULL, 0);
        CHECK(rc == PMIX_SUCCESS, "fence over itself after the departure: %s",
              PMIx_Error_string(rc));
    }
    printf("departure waiter %s %s ok\n", kind, waiter);
    fflush(stdout);
    if (!own_job_gone) PMIx_Finalize(NULL, 0);
    return 0;
}

/* -------------------------------------------------------------------- host */
/* The dmodex waiter's answer (progress thread). */
static _Atomic int dmodex_answered = 0;
static _Atomic pmix_status_t dmodex_status = PMIX_SUCCESS;

static void on_dmodex(pmix_status_t status, char *data, size_t size, void *cbdata) {
    (void)data, (void)size, (void)cbdata;
    dmodex_status = status;
    dmodex_answered = 1;
}

static void register_job(const char *nspace, int size) {
    pmix_status_t rc = host_register_job(nspace, size);
    CHECK(rc == PMIX_SUCCESS, "register job %s: %s", nspace, PMIx_Error_string(rc));
}

static pid_t start_client(const char *self, const char *nspace, pmix_rank_t rank, const char *role,
                          int ready_fd, int go_fd) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, rank);
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork %s", nspace);
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        char fd[16];
        snprintf(fd, sizeof fd, "%d", ready_fd);
        setenv("DEPARTURE_READY_FD", fd, 1);
        snprintf(fd, sizeof fd, "%d", go_fd);
        setenv("DEPARTURE_GO_FD", fd, 1);
        execl("/proc/self/exe", self, kind, waiter, role, (char *)NULL);
        _exit(127);
    }
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    return pid;
}

int main(int argc, char **argv) {
    CHECK(argc >= 3, "usage: departure_host KIND WAITER");
    kind = argv[1];
    waiter = argv[2];
    if (argc > 3 && strcmp(argv[3], "departer") == 0) return departer_main();
    if (argc > 3 && strcmp(argv[3], "waiter") == 0) return waiter_main();
    CHECK(strcmp(kind, "finalized") == 0 || strcmp(kind, "lost") == 0 ||
              strcmp(kind, "deregister_client") == 0 || strcmp(kind, "deregister_nspace") == 0,
          "unknown departure %s", kind);
    CHECK(strcmp(waiter, "get") == 0 || strcmp(waiter, "fence") == 0 ||
              strcmp(waiter, "connect") == 0 || strcmp(waiter, "shm") == 0 ||
              strcmp(waiter, "cleanup") == 0 || strcmp(waiter, "dmodex") == 0 ||
              strcmp(waiter, "group") == 0,
          "unknown waiter %s", waiter);
    unsetenv("PMIX_TIMEOUT");
    alarm(60); /* a hang is a failure, not a stuck test */
    signal(SIGPIPE, SIG_IGN);

    char file[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(file, sizeof file, "%s/pmixpp-departure-%d.file",
             tmp != NULL && *tmp != '\0' ? tmp : "/tmp", (int)getpid());
    if (strcmp(waiter, "cleanup") == 0) {
        FILE *f = fopen(file, "w");
        CHECK(f != NULL, "create %s", file);
        fclose(f);
        setenv("DEPARTURE_FILE", file, 1);
    }

    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    if (strcmp(waiter, "shm") == 0) {
        register_job("dpS", 2);
    } else {
        register_job("dpW", 1);
        register_job("dpD", 1);
    }
    int ready[2], go[2];
    CHECK(pipe(ready) == 0 && pipe(go) == 0, "pipe");
    char c;
    pid_t d = start_client(argv[0], d_nspace(), d_rank(), "departer", ready[1], go[0]);
    CHECK(read(ready[0], &c, 1) == 1, "the departer did not start");
    pid_t w = start_client(argv[0], w_nspace(), 0, "waiter", ready[1], go[0]);
    CHECK(read(ready[0], &c, 1) == 1, "the waiter did not start");
    usleep(500000); /* its request reaches the server */

    pmix_proc_t dp;
    PMIX_LOAD_PROCID(&dp, d_nspace(), d_rank());
    if (strcmp(waiter, "dmodex") == 0) {
        pmix_status_t rc = PMIx_server_dmodex_request(&dp, on_dmodex, NULL);
        CHECK(rc == PMIX_SUCCESS, "dmodex request: %s", PMIx_Error_string(rc));
    }
    if (strcmp(kind, "deregister_client") == 0) {
        PMIx_server_deregister_client(&dp, NULL, NULL);
    } else if (strcmp(kind, "deregister_nspace") == 0) {
        pmix_nspace_t ns;
        PMIX_LOAD_NSPACE(ns, d_nspace());
        PMIx_server_deregister_nspace(ns, NULL, NULL);
    }
    CHECK(write(go[1], "g", 1) == 1, "go");
    const int drc = host_reap(d);
    CHECK(drc == 0, "the departer exited with %d", drc);
    const int wrc = host_reap(w);
    CHECK(wrc == 0, "the waiter exited with %d", wrc);

    if (strcmp(waiter, "dmodex") == 0) {
        const double start = host_now();
        while (!dmodex_answered && host_now() - start < 10) usleep(10000);
        CHECK(dmodex_answered, "the dmodex request was not answered 10 s after the departure (%s)",
              kind);
        CHECK(dmodex_status == PMIX_ERR_NOT_FOUND, "dmodex after %s: %s (want NOT-FOUND)", kind,
              PMIx_Error_string(dmodex_status));
    }
    if (strcmp(waiter, "cleanup") == 0) {
        struct stat st;
        const double start = host_now();
        while (stat(file, &st) == 0 && host_now() - start < 10) usleep(10000);
        const int left = stat(file, &st) == 0;
        if (left) unlink(file);
        CHECK(!left, "the cleanup file is still there 10 s after the departure (%s)", kind);
    }
    PMIx_server_finalize();
    printf("departure host %s %s ok\n", kind, waiter);
    return 0;
}
