/* A client's registration completes without the server's answer
 * (docs/events.md, "Registration without a round trip"), and its handler
 * still gets every event exactly once.
 *
 * A host embedding the server forks one client. The client registers a
 * default handler H0, then raises G0 with range GLOBAL. The server routes G0
 * back to H0, caches it, and makes the host's notify_event upcall on its
 * progress thread; the upcall tells the client (pipe) that the server is
 * held, then waits (at most 20 s) for the client's byte on another pipe.
 * Meanwhile the client registers H1 for {G0, G1, G2} and H2 for {G3} with
 * PMIX_RANGE NAMESPACE (blocking form): both must return while the server is
 * held; a second registration with H1's name must still fail at once
 * (PMIX_ERR_EVENT_REGISTRATION). Then the client writes its byte. The
 * upcall, before it returns, raises two host events: G1 (cached) and G2
 * (PMIX_EVENT_NON_DEFAULT, PMIX_EVENT_DO_NOT_CACHE); the server routes both
 * before it reads H1's registration, so both reach the client while the
 * server does not know H1 yet. Then the server acknowledges H1 and replays
 * the cache (G0, G1) to it.
 *
 * What the client checks, after its own G3 has come back behind the
 * replays: H1 had G0 once (the replay: it was not registered when G0 came
 * live), G1 once (live after its callback and replayed), G2 once (only live:
 * not cached, and no registration the server knew wanted it), in the
 * server's order G0, G1, G2 (the live ones wait for the server's answer);
 * H2 had G3 once; H0 had G0, G1 and G3 once and never G2 (a NON_DEFAULT
 * event skips default handlers).
 * Before this rule the blocking registration waited for the held server, and
 * the host failed: its upcall gave up without the byte.
 * usage: evreg_host [lost]       (the host; forks itself as the client) */
#include <pmix.h>
#include <pmix_server.h>

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host_common.h"

#define G0 (PMIX_EXTERNAL_ERR_BASE - 41)
#define G1 (PMIX_EXTERNAL_ERR_BASE - 42)
#define G2 (PMIX_EXTERNAL_ERR_BASE - 43)
#define G3 (PMIX_EXTERNAL_ERR_BASE - 44)

#define CHECK(cond, ...) HOST_CHECK("evreg", cond, __VA_ARGS__)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

/* seen[h][i]: how often handler h (0: H0, 1: H1, 2: H2, 3: H3) had event Gi
 * (i = 4: the lost connection). */
static int seen[4][5];

static int index_of(pmix_status_t status) {
    switch (status) {
        case G0:
            return 0;
        case G1:
            return 1;
        case G2:
            return 2;
        case G3:
            return 3;
        case PMIX_ERR_LOST_CONNECTION:
            return 4;
        default:
            return -1;
    }
}

/* H1's events in the order it had them ("0" for G0, ...). */
static char h1_order[16];
/* The handlers that had G1, in the order they ran ("0" for H0, ...): one
 * chain, in the chain's order (H3 FIRST, H1 multi-code, H0 default). */
static char g1_chain[16];

static void count(int h, pmix_status_t status, pmix_event_notification_cbfunc_fn_t cbfunc,
                  void *cbdata) {
    const int i = index_of(status);
    pthread_mutex_lock(&lock);
    if (i >= 0) ++seen[h][i];
    const size_t len = strlen(h1_order);
    if (h == 1 && len + 1 < sizeof h1_order) h1_order[len] = (char)(i >= 0 ? '0' + i : '?');
    const size_t glen = strlen(g1_chain);
    if (i == 1 && glen + 1 < sizeof g1_chain) g1_chain[glen] = (char)('0' + h);
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    cbfunc(PMIX_EVENT_NO_ACTION_TAKEN, NULL, 0, NULL, NULL, cbdata);
}

static void h0(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
               size_t ninfo, pmix_info_t results[], size_t nresults,
               pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    count(0, status, cbfunc, cbdata);
}

static void h1(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
               size_t ninfo, pmix_info_t results[], size_t nresults,
               pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    count(1, status, cbfunc, cbdata);
}

static void h2(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
               size_t ninfo, pmix_info_t results[], size_t nresults,
               pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    count(2, status, cbfunc, cbdata);
}

static void h3(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
               size_t ninfo, pmix_info_t results[], size_t nresults,
               pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)info, (void)ninfo, (void)results, (void)nresults;
    count(3, status, cbfunc, cbdata);
}

/* Waits (30 s at most) until seen[h][i] >= n. */
static bool wait_seen(int h, int i, int n) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    pthread_mutex_lock(&lock);
    int rc = 0;
    while (seen[h][i] < n && rc == 0) rc = pthread_cond_timedwait(&cond, &lock, &deadline);
    const bool ok = seen[h][i] >= n;
    pthread_mutex_unlock(&lock);
    return ok;
}

static int seen_now(int h, int i) {
    pthread_mutex_lock(&lock);
    const int n = seen[h][i];
    pthread_mutex_unlock(&lock);
    return n;
}

/* ------------------------------------------------------------------ client */
static int client_main(int to_host, int from_host) {
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "client init");
    pmix_status_t rc = PMIx_Register_event_handler(NULL, 0, NULL, 0, h0, NULL, NULL);
    CHECK(rc >= 0, "register H0: %s", PMIx_Error_string(rc));
    rc = PMIx_Notify_event(G0, NULL, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "notify G0: %s", PMIx_Error_string(rc));
    CHECK(wait_seen(0, 0, 1), "H0 did not get G0");
    /* The host is in its upcall: the server's progress thread is held. */
    struct pollfd p = {from_host, POLLIN, 0};
    char byte = 0;
    CHECK(poll(&p, 1, 30000) == 1 && read(from_host, &byte, 1) == 1, "no word from the upcall");

    pmix_status_t codes[] = {G0, G1, G2};
    pmix_info_t name;
    PMIX_INFO_LOAD(&name, PMIX_EVENT_HDLR_NAME, "evreg-late", PMIX_STRING);
    rc = PMIx_Register_event_handler(codes, 3, &name, 1, h1, NULL, NULL);
    CHECK(rc >= 0, "register H1: %s", PMIx_Error_string(rc));
    /* Its errors are still reported, at once. */
    pmix_status_t dup = PMIx_Register_event_handler(codes, 1, &name, 1, h1, NULL, NULL);
    CHECK(dup == PMIX_ERR_EVENT_REGISTRATION, "a second registration named evreg-late: %s",
          PMIx_Error_string(dup));
    PMIX_INFO_DESTRUCT(&name);
    pmix_status_t g3 = G3;
    pmix_info_t ns_range;
    pmix_data_range_t r = PMIX_RANGE_NAMESPACE;
    PMIX_INFO_LOAD(&ns_range, PMIX_RANGE, &r, PMIX_DATA_RANGE);
    rc = PMIx_Register_event_handler(&g3, 1, &ns_range, 1, h2, NULL, NULL);
    CHECK(rc >= 0, "register H2: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&ns_range);
    /* H3: G1 only, first of every chain. */
    pmix_status_t g1 = G1;
    pmix_info_t first;
    bool yes = true;
    PMIX_INFO_LOAD(&first, PMIX_EVENT_HDLR_FIRST, &yes, PMIX_BOOL);
    rc = PMIx_Register_event_handler(&g1, 1, &first, 1, h3, NULL, NULL);
    CHECK(rc >= 0, "register H3: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&first);
    byte = 1;
    CHECK(write(to_host, &byte, 1) == 1, "write to the host's pipe");
    close(to_host);
    printf("evreg client registered while the server was held\n");
    fflush(stdout);

    CHECK(wait_seen(1, 0, 1), "H1 never had G0 (the replay)");
    CHECK(wait_seen(1, 1, 1), "H1 never had G1 (raised after its callback)");
    CHECK(wait_seen(1, 2, 1), "H1 never had G2 (NON_DEFAULT, not cached, after its callback)");
    CHECK(wait_seen(0, 1, 1), "H0 never had G1");
    /* The server routes G3 after H1's and H2's registrations and replays:
     * once H0 has it, every duplicate would have come. */
    rc = PMIx_Notify_event(G3, NULL, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "notify G3: %s", PMIx_Error_string(rc));
    CHECK(wait_seen(0, 3, 1), "H0 never had G3");
    CHECK(seen_now(1, 0) == 1, "H1 had G0 %d times", seen_now(1, 0));
    CHECK(seen_now(1, 1) == 1, "H1 had G1 %d times", seen_now(1, 1));
    CHECK(seen_now(1, 2) == 1, "H1 had G2 %d times", seen_now(1, 2));
    CHECK(seen_now(1, 3) == 0, "H1 had G3 %d times", seen_now(1, 3));
    pthread_mutex_lock(&lock);
    /* The replay G0 first; G1 and G2 came live together, and each runs its
     * own chain (G1's through H3 first), as any two live events do. */
    const int in_order = strlen(h1_order) == 3 && h1_order[0] == '0';
    pthread_mutex_unlock(&lock);
    CHECK(in_order, "H1 had G0, G1, G2 as %s, not the replay G0 first", h1_order);
    /* G1 came live while H1 and H3 were not answered yet: one chain, in its
     * order, once each (not H0 first and the others one by one later). */
    CHECK(seen_now(3, 1) == 1, "H3 had G1 %d times", seen_now(3, 1));
    pthread_mutex_lock(&lock);
    const int one_chain = strcmp(g1_chain, "310") == 0;
    pthread_mutex_unlock(&lock);
    CHECK(one_chain, "G1 ran through the handlers %s, not as one chain H3 H1 H0 (310)", g1_chain);
    CHECK(wait_seen(2, 3, 1), "H2 never had G3");
    CHECK(seen_now(2, 3) == 1, "H2 had G3 %d times", seen_now(2, 3));
    CHECK(seen_now(0, 0) == 1, "H0 had G0 %d times", seen_now(0, 0));
    CHECK(seen_now(0, 1) == 1, "H0 had G1 %d times", seen_now(0, 1));
    CHECK(seen_now(0, 2) == 0, "H0 (default) had the NON_DEFAULT G2 %d times", seen_now(0, 2));
    CHECK(seen_now(0, 3) == 1, "H0 had G3 %d times", seen_now(0, 3));
    printf("evreg client ok\n");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* "lost": the host exits in its upcall once it has the client's byte. H1,
 * registered for PMIX_ERR_LOST_CONNECTION while the server is held and
 * completed before the server answered, hears of the loss exactly once, as
 * H0 does (docs/events.md, "A handler registered after the loss"). */
static int client_lost_main(int to_host, int from_host) {
    signal(SIGPIPE, SIG_IGN);
    pmix_proc_t me;
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "client init");
    pmix_status_t rc = PMIx_Register_event_handler(NULL, 0, NULL, 0, h0, NULL, NULL);
    CHECK(rc >= 0, "register H0: %s", PMIx_Error_string(rc));
    rc = PMIx_Notify_event(G0, NULL, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS, "notify G0: %s", PMIx_Error_string(rc));
    struct pollfd p = {from_host, POLLIN, 0};
    char byte = 0;
    CHECK(poll(&p, 1, 30000) == 1 && read(from_host, &byte, 1) == 1, "no word from the upcall");
    pmix_status_t lost = PMIX_ERR_LOST_CONNECTION;
    rc = PMIx_Register_event_handler(&lost, 1, NULL, 0, h1, NULL, NULL);
    CHECK(rc >= 0, "register H1: %s", PMIx_Error_string(rc));
    byte = 1;
    CHECK(write(to_host, &byte, 1) == 1, "write to the host's pipe");
    CHECK(wait_seen(1, 4, 1), "H1 never heard of the loss");
    CHECK(wait_seen(0, 4, 1), "H0 never heard of the loss");
    sleep(1);
    CHECK(seen_now(1, 4) == 1, "H1 heard of the loss %d times", seen_now(1, 4));
    CHECK(seen_now(0, 4) == 1, "H0 heard of the loss %d times", seen_now(0, 4));
    printf("evreg lost client ok\n");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* -------------------------------------------------------------------- host */
static int exit_in_upcall;
static int upcall_read = -1, upcall_write = -1;
static int held_upcalls, byte_in_upcall;

static void raised(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    if (status != PMIX_SUCCESS)
        printf("evreg host: raising an event: %s\n", PMIx_Error_string(status));
}

/* On the server's progress thread: nothing else runs there until it returns. */
static pmix_status_t on_notify_event(pmix_status_t code, const pmix_proc_t *source,
                                     pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)source, (void)range, (void)info, (void)ninfo, (void)cbfunc, (void)cbdata;
    if (code != G0) return PMIX_OPERATION_SUCCEEDED;
    char byte = 1;
    int got = write(upcall_write, &byte, 1) == 1;
    struct pollfd p = {upcall_read, POLLIN, 0};
    got = got && poll(&p, 1, 20000) == 1 && read(upcall_read, &byte, 1) == 1;
    if (exit_in_upcall) {
        if (got) printf("evreg lost host: the registration completed while held\n");
        fflush(stdout);
        _exit(0);
    }
    /* Routed (posted) before the server reads the client's registration. */
    PMIx_Notify_event(G1, NULL, PMIX_RANGE_GLOBAL, NULL, 0, raised, NULL);
    pmix_info_t flags[2];
    bool yes = true;
    PMIX_INFO_LOAD(&flags[0], PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
    PMIX_INFO_LOAD(&flags[1], PMIX_EVENT_DO_NOT_CACHE, &yes, PMIX_BOOL);
    PMIx_Notify_event(G2, NULL, PMIX_RANGE_GLOBAL, flags, 2, raised, NULL);
    PMIX_INFO_DESTRUCT(&flags[0]);
    PMIX_INFO_DESTRUCT(&flags[1]);
    pthread_mutex_lock(&lock);
    ++held_upcalls;
    byte_in_upcall = got;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    return PMIX_OPERATION_SUCCEEDED;
}

int main(int argc, char **argv) {
    if (argc > 4 && strcmp(argv[1], "client") == 0)
        return strcmp(argv[4], "lost") == 0 ? client_lost_main(atoi(argv[2]), atoi(argv[3]))
                                            : client_main(atoi(argv[2]), atoi(argv[3]));
    exit_in_upcall = argc > 1 && strcmp(argv[1], "lost") == 0;
    int to_host[2], to_client[2];
    CHECK(pipe(to_host) == 0 && pipe(to_client) == 0, "pipe");
    upcall_read = to_host[0];
    upcall_write = to_client[1];
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.notify_event = on_notify_event;
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");

    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, "evreg");
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, ns, 0);
    CHECK(host_register_job("evreg", 1) == PMIX_SUCCESS, "register the job");
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&proc, &env) == PMIX_SUCCESS, "setup_fork");
    pid_t pid = fork();
    if (pid == 0) {
        close(to_host[0]);
        close(to_client[1]);
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        char a[16], b[16];
        snprintf(a, sizeof a, "%d", to_host[1]);
        snprintf(b, sizeof b, "%d", to_client[0]);
        execl("/proc/self/exe", argv[0], "client", a, b, exit_in_upcall ? "lost" : "main",
              (char *)NULL);
        _exit(127);
    }
    close(to_host[1]);
    close(to_client[0]);
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    const int rc = host_reap(pid);
    pthread_mutex_lock(&lock);
    const int upcalls = held_upcalls, in_upcall = byte_in_upcall;
    pthread_mutex_unlock(&lock);
    CHECK(upcalls == 1, "%d notify_event upcalls for G0", upcalls);
    CHECK(in_upcall,
          "the registrations did not complete while the server was "
          "held (it waited for the server's answer)");
    CHECK(rc == 0, "client failed");
    PMIx_server_deregister_client(&proc, NULL, NULL);
    PMIx_server_deregister_nspace(ns, NULL, NULL);
    PMIx_server_finalize();
    printf("evreg host ok\n");
    return 0;
}
