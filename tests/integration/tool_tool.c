/* A PMIx tool (pmix_tool.h, public API only), started outside any job.
 *
 *   tool_tool pid <server pid> <job nspace>   connect by the server's pid
 *   tool_tool uri <server uri> <job nspace>   connect by PMIX_SERVER_URI
 *       First asks for the job's own nspace as its identity (refused: in
 *       use), then connects with an assigned identity, registers for the two
 *       pings, notifies CODE_TOOL_READY (range GLOBAL) and waits for a ping
 *       in its CUSTOM range (from rank 1) and a GLOBAL one (from rank 0).
 *   tool_tool env        run by pmixrun: finds its server by PMIX_SERVER_URI* and is
 *                        the job's rank (PMIX_NAMESPACE / PMIX_RANK)
 *   tool_tool refused    run by tool_host.c, whose server does not take tools
 *   tool_tool hosted     run by tool_host.c: events with the host, then its loss
 *   tool_tool errors     no server anywhere: every failure is an error, at once
 *   tool_tool standalone PMIX_TOOL_DO_NOT_CONNECT
 * Prints "tool <mode> ok" on success; exits non-zero with a reason otherwise. */
#include <pmix_tool.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tool_common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int got_custom = 0, got_global = 0, got_local = 0, got_lost = 0;
static pmix_proc_t custom_src, global_src;

static void fail(const char *what, pmix_status_t rc) {
    printf("tool FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)info, (void)ninfo, (void)results, (void)nresults;
    pthread_mutex_lock(&lock);
    if (status == CODE_PING_CUSTOM) {
        got_custom++;
        custom_src = *source;
    } else if (status == CODE_PING_GLOBAL) {
        got_global++;
        global_src = *source;
    } else if (status == CODE_LOCAL) {
        got_local++;
    } else if (status == PMIX_ERR_LOST_CONNECTION) {
        got_lost++;
    }
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Waits (at most 30 s) until *a and *b are non-zero. */
static int wait_both(int *a, int *b) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    int rc = 0;
    pthread_mutex_lock(&lock);
    while ((*a == 0 || *b == 0) && rc == 0) rc = pthread_cond_timedwait(&cond, &lock, &deadline);
    int ok = *a != 0 && *b != 0;
    pthread_mutex_unlock(&lock);
    return ok;
}

static int events_mode(const char *how, const char *where, const char *job_nspace) {
    pmix_info_t info[2];
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    if (strcmp(how, "pid") == 0) {
        pid_t pid = (pid_t)atol(where);
        PMIX_INFO_LOAD(&info[0], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    } else {
        PMIX_INFO_LOAD(&info[0], PMIX_SERVER_URI, where, PMIX_STRING);
    }
    pmix_proc_t me;
    /* The job's nspace is taken: the server refuses it as a tool identity. */
    PMIX_INFO_LOAD(&info[1], PMIX_TOOL_NSPACE, job_nspace, PMIX_STRING);
    pmix_status_t rc = PMIx_tool_init(&me, info, 2);
    if (rc == PMIX_SUCCESS) fail("a tool took the job's nspace", rc);
    if (rc != PMIX_ERR_INVALID_CRED) fail("refusal of the job's nspace", rc);

    rc = PMIx_tool_init(&me, info, 1);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init", rc);
    if (me.nspace[0] == '\0' || me.rank != 0 || strcmp(me.nspace, job_nspace) == 0)
        fail("assigned identity", PMIX_ERROR);
    pmix_status_t codes[2] = {CODE_PING_CUSTOM, CODE_PING_GLOBAL};
    rc = PMIx_Register_event_handler(codes, 2, NULL, 0, handler, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);
    rc = PMIx_Notify_event(CODE_TOOL_READY, NULL, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
    if (rc != PMIX_SUCCESS) fail("PMIx_Notify_event", rc);
    if (!wait_both(&got_custom, &got_global)) {
        printf("tool FAILED: pings custom=%d global=%d\n", got_custom, got_global);
        return 1;
    }
    if (strcmp(custom_src.nspace, job_nspace) != 0 || custom_src.rank != 1 ||
        strcmp(global_src.nspace, job_nspace) != 0 || global_src.rank != 0) {
        printf("tool FAILED: ping sources %s:%u %s:%u\n", custom_src.nspace, custom_src.rank,
               global_src.nspace, global_src.rank);
        return 1;
    }
    rc = PMIx_tool_finalize();
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_finalize", rc);
    if (PMIx_tool_finalize() != PMIX_ERR_INIT) fail("second finalize", PMIX_ERROR);
    printf("tool %s ok: %s:%u got the custom ping of %s:%u and the global one of %s:%u\n", how,
           me.nspace, me.rank, custom_src.nspace, custom_src.rank, global_src.nspace,
           global_src.rank);
    return 0;
}

/* Started by a host that does not accept tools (tool_host.c). */
static int refused_mode(void) {
    pmix_proc_t me;
    pmix_info_t alone;
    PMIX_INFO_CONSTRUCT(&alone);
    bool yes = true;
    PMIX_INFO_LOAD(&alone, PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_tool_init(&me, &alone, 1); /* the tool face itself works */
    PMIX_INFO_DESTRUCT(&alone);
    if (rc != PMIX_SUCCESS || PMIx_tool_finalize() != PMIX_SUCCESS) fail("unconnected tool", rc);
    rc = PMIx_tool_init(&me, NULL, 0);
    if (rc == PMIX_SUCCESS) fail("a host without tool support accepted the tool", rc);
    if (rc != PMIX_ERR_NOT_SUPPORTED) fail("refusal", rc);
    printf("tool refused ok\n");
    return 0;
}

/* Started by tool_host.c "accept": events with the host, then its loss. */
static int hosted_mode(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init", rc);
    if (strcmp(me.nspace, "tool-host-tool") != 0 || me.rank != 0) fail("identity", PMIX_ERROR);
    pmix_status_t codes[2] = {CODE_PING_GLOBAL, PMIX_ERR_LOST_CONNECTION};
    rc = PMIx_Register_event_handler(codes, 2, NULL, 0, handler, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);
    rc = PMIx_Notify_event(CODE_TOOL_READY, NULL, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
    if (rc != PMIX_SUCCESS) fail("PMIx_Notify_event ready", rc);
    int one = 1;
    if (!wait_both(&got_global, &one)) fail("no ping from the host", PMIX_ERR_TIMEOUT);
    rc = PMIx_Notify_event(CODE_PING_CUSTOM, NULL, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
    if (rc != PMIX_SUCCESS) fail("PMIx_Notify_event answer", rc);
    if (!wait_both(&got_lost, &one)) fail("no PMIX_ERR_LOST_CONNECTION", PMIX_ERR_TIMEOUT);
    PMIx_tool_finalize();
    printf("tool hosted ok: %s:%u\n", me.nspace, me.rank);
    return 0;
}

static int env_mode(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init from the environment", rc);
    /* Started by pmixrun as a job's process: it is that job's member. */
    const char *job = getenv("PMIX_NAMESPACE"), *rank = getenv("PMIX_RANK");
    if (job == NULL || rank == NULL || strcmp(me.nspace, job) != 0 ||
        me.rank != (pmix_rank_t)atoi(rank))
        fail("the job's identity", PMIX_ERROR);
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v->type != PMIX_UINT32 || v->data.uint32 != 1)
        fail("the job's size", rc);
    PMIX_VALUE_RELEASE(v);
    rc = PMIx_tool_finalize();
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_finalize", rc);
    printf("tool env ok: %s:%u\n", me.nspace, me.rank);
    return 0;
}

/* One PMIx_tool_init that must fail with `want`. */
static void expect_init(const char *what, pmix_info_t *info, size_t n, pmix_status_t want) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, info, n);
    if (rc == PMIX_SUCCESS) {
        PMIx_tool_finalize();
        fail(what, rc);
    }
    if (rc != want) {
        printf("tool FAILED: %s: got %s, want %s\n", what, PMIx_Error_string(rc),
               PMIx_Error_string(want));
        exit(1);
    }
}

static int errors_mode(void) {
    if (PMIx_tool_finalize() != PMIX_ERR_INIT) fail("finalize before init", PMIX_ERROR);
    pmix_info_t info[3];
    for (int i = 0; i < 3; ++i) PMIX_INFO_CONSTRUCT(&info[i]);

    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_URI, "tcp4://127.0.0.1:1", PMIX_STRING);
    expect_init("wrong tcp URI", info, 1, PMIX_ERR_UNREACH);
    PMIX_INFO_DESTRUCT(&info[0]);

    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_URI, "usock:///nonexistent/pmix.sock", PMIX_STRING);
    uint32_t retries = 2, delay = 0;
    PMIX_INFO_LOAD(&info[1], PMIX_CONNECT_MAX_RETRIES, &retries, PMIX_UINT32);
    PMIX_INFO_LOAD(&info[2], PMIX_CONNECT_RETRY_DELAY, &delay, PMIX_UINT32);
    expect_init("wrong usock URI, with retries", info, 3, PMIX_ERR_UNREACH);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    PMIX_INFO_DESTRUCT(&info[2]);

    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_URI, "bogus", PMIX_STRING);
    expect_init("URI of no transport", info, 1, PMIX_ERR_UNREACH);
    PMIX_INFO_DESTRUCT(&info[0]);

    pid_t pid = getpid(); /* no server here */
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    expect_init("pid of no server", info, 1, PMIX_ERR_NOT_FOUND);
    PMIX_INFO_DESTRUCT(&info[0]);

    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_URI, "tcp4://127.0.0.1:1", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_TCP_URI, "tcp4://127.0.0.1:1", PMIX_STRING);
    expect_init("both URIs", info, 2, PMIX_ERR_BAD_PARAM);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);

    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_LAUNCHER_DAEMON, "/bin/true", PMIX_STRING);
    PMIX_INFO_REQUIRED(&info[0]);
    expect_init("required unsupported attribute", info, 1, PMIX_ERR_NOT_SUPPORTED);
    PMIX_INFO_DESTRUCT(&info[0]);

    PMIX_INFO_LOAD(&info[0], PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, "/nonexistent-pmixpp-dir", PMIX_STRING);
    expect_init("no system server", info, 2, PMIX_ERR_UNREACH);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);

    if (PMIx_tool_finalize() != PMIX_ERR_INIT) fail("finalize after failed inits", PMIX_ERROR);
    /* PMIX_TOOL_CONNECT_OPTIONAL: no server, so it goes on unconnected. */
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_URI, "tcp4://127.0.0.1:1", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_TOOL_CONNECT_OPTIONAL, &yes, PMIX_BOOL);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, info, 2);
    if (rc != PMIX_SUCCESS) fail("PMIX_TOOL_CONNECT_OPTIONAL", rc);
    if (me.nspace[0] != '\0' || me.rank != PMIX_RANK_UNDEF) fail("optional identity", PMIX_ERROR);
    rc = PMIx_Notify_event(CODE_LOCAL, &me, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
    if (rc != PMIX_ERR_NOT_SUPPORTED) fail("GLOBAL notify while unconnected", rc);
    if (PMIx_tool_finalize() != PMIX_SUCCESS) fail("finalize of the optional tool", PMIX_ERROR);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    printf("tool errors ok\n");
    return 0;
}

static int standalone_mode(void) {
    pmix_info_t info[3];
    for (int i = 0; i < 3; ++i) PMIX_INFO_CONSTRUCT(&info[i]);
    bool yes = true;
    PMIX_INFO_LOAD(&info[0], PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, info, 1);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init unconnected", rc);
    if (me.nspace[0] != '\0' || me.rank != PMIX_RANK_UNDEF) fail("anonymous identity", PMIX_ERROR);
    if (PMIx_tool_finalize() != PMIX_SUCCESS) fail("PMIx_tool_finalize", PMIX_ERROR);

    uint32_t rank = 3;
    PMIX_INFO_LOAD(&info[1], PMIX_TOOL_NSPACE, "my-tool", PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_TOOL_RANK, &rank, PMIX_UINT32);
    rc = PMIx_tool_init(&me, info, 3);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init named", rc);
    if (strcmp(me.nspace, "my-tool") != 0 || me.rank != 3) fail("named identity", PMIX_ERROR);
    pmix_proc_t again;
    if (PMIx_tool_init(&again, info, 3) != PMIX_SUCCESS || strcmp(again.nspace, "my-tool") != 0)
        fail("nested PMIx_tool_init", PMIX_ERROR);
    pmix_status_t code = CODE_LOCAL;
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, handler, NULL, NULL);
    if (rc < 0) fail("PMIx_Register_event_handler", rc);
    rc = PMIx_Notify_event(CODE_LOCAL, &me, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
    if (rc != PMIX_SUCCESS) fail("PMIx_Notify_event PROC_LOCAL", rc);
    int one = 1;
    if (!wait_both(&got_local, &one)) fail("local event", PMIX_ERR_TIMEOUT);
    rc = PMIx_Notify_event(CODE_LOCAL, &me, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
    if (rc != PMIX_ERR_NOT_SUPPORTED) fail("GLOBAL notify without a server", rc);
    if (PMIx_tool_finalize() != PMIX_SUCCESS || PMIx_tool_finalize() != PMIX_SUCCESS)
        fail("PMIx_tool_finalize x2", PMIX_ERROR);
    if (PMIx_tool_finalize() != PMIX_ERR_INIT) fail("third finalize", PMIX_ERROR);
    for (int i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    printf("tool standalone ok\n");
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 4 && (strcmp(argv[1], "pid") == 0 || strcmp(argv[1], "uri") == 0))
        return events_mode(argv[1], argv[2], argv[3]);
    if (argc == 2 && strcmp(argv[1], "env") == 0) return env_mode();
    if (argc == 2 && strcmp(argv[1], "refused") == 0) return refused_mode();
    if (argc == 2 && strcmp(argv[1], "hosted") == 0) return hosted_mode();
    if (argc == 2 && strcmp(argv[1], "errors") == 0) return errors_mode();
    if (argc == 2 && strcmp(argv[1], "standalone") == 0) return standalone_mode();
    fprintf(stderr,
            "usage: tool_tool pid PID NSPACE | uri URI NSPACE | env | refused | hosted | errors | "
            "standalone\n");
    return 2;
}
