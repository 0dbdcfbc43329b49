/* The client half of the fault matrix (issue 19, deliverable 4): a client
 * SIGKILLed at one protocol step while its peers are in, or come to, the same
 * step. Run under pmixrun -n N (N >= 2); the highest rank is the victim.
 *
 * usage: fault_client STEP     (STEP: handshake fence fence_shm get connect
 *                               spawn group query iof; "child" is the program
 *                               the victim of `spawn` asks for)
 *
 * The victim issues the step's request (the non-blocking call, or for
 * `handshake` the first bytes of a handshake frame on a raw connection to the
 * server) and SIGKILLs itself at once, so it dies with the request in the
 * server's hands or still in its own: no sleep decides where. Every other rank
 * (a survivor) runs the same step as a blocking call involving the victim,
 * and when that succeeded (the victim's part may have reached the server
 * before it died) one more fence of the whole job, which cannot complete
 * without the victim. A survivor prints
 *     "survivor R STEP: <step status> then <fence status or ->"
 * and exits 0 only when one of them was an error; alarm() bounds it (a hang
 * prints "survivor R STEP: HUNG" and exits 2). The test counts the lines and
 * checks pmixrun's status and its "killed by signal 9" line. */
#include <pmix.h>
#include <pmix_tool.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

enum { kBound = 30 }; /* seconds a survivor may take; pmixrun's grace is 10 s after a death */

static const char *g_step = "?";
static pmix_rank_t g_rank = 0;

static void hung(int sig) {
    (void)sig;
    char line[96];
    int n = snprintf(line, sizeof line, "survivor %u %s: HUNG\n", g_rank, g_step);
    if (write(1, line, (size_t)n) < 0) _exit(3);
    _exit(2);
}

static void ignore_cb(pmix_status_t status, void *cbdata) {
    (void)status, (void)cbdata;
}

static void ignore_info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                           pmix_release_cbfunc_t release_fn, void *release_cbdata) {
    (void)status, (void)info, (void)ninfo, (void)cbdata;
    if (release_fn != NULL) release_fn(release_cbdata);
}

static void ignore_value_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    (void)status, (void)kv, (void)cbdata;
}

static void ignore_spawn_cb(pmix_status_t status, char nspace[], void *cbdata) {
    (void)status, (void)nspace, (void)cbdata;
}

static void ignore_iof(size_t id, pmix_iof_channel_t channel, pmix_proc_t *source,
                       pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    (void)id, (void)channel, (void)source, (void)payload, (void)info, (void)ninfo;
}

static void ignore_reg(pmix_status_t status, size_t id, void *cbdata) {
    (void)status, (void)id, (void)cbdata;
}

/* A raw connection to the server's first URI (usock://[@]name or tcp4://a:p). */
static int connect_raw(const char *uri) {
    if (strncmp(uri, "usock://", 8) == 0) {
        struct sockaddr_un a;
        memset(&a, 0, sizeof a);
        a.sun_family = AF_UNIX;
        socklen_t len = sizeof a;
        if (uri[8] == '@') {
            size_t n = strlen(uri + 9);
            if (n >= sizeof a.sun_path) return -1;
            memcpy(a.sun_path + 1, uri + 9, n);
            len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
        } else {
            snprintf(a.sun_path, sizeof a.sun_path, "%s", uri + 8);
        }
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        return fd >= 0 && connect(fd, (struct sockaddr *)&a, len) == 0 ? fd : -1;
    }
    if (strncmp(uri, "tcp4://", 7) == 0) {
        char host[64];
        snprintf(host, sizeof host, "%s", uri + 7);
        char *colon = strrchr(host, ':');
        if (colon == NULL) return -1;
        *colon = '\0';
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_port = htons((unsigned short)atoi(colon + 1));
        inet_pton(AF_INET, host, &a.sin_addr);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        return fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0 ? fd : -1;
    }
    return -1;
}

/* The victim of `handshake`: a frame header announcing a 200-byte handshake
 * (command 1) and 20 bytes of it, then death mid-frame. */
static void die_in_handshake(void) {
    char uris[1024];
    const char *all = getenv("PMIXPP_SERVER_URIS");
    snprintf(uris, sizeof uris, "%s", all != NULL ? all : "");
    char *comma = strchr(uris, ',');
    if (comma != NULL) *comma = '\0';
    int fd = connect_raw(uris);
    if (fd < 0) {
        fprintf(stderr, "fault_client: cannot reach the server at '%s'\n", uris);
        _exit(4);
    }
    unsigned char frame[12 + 20] = {1, 0, 1, 0, 1, 0, 0, 0, 200, 0, 0, 0};
    memset(frame + 12, 0, 20);
    frame[12] = 4; /* the start of a protocol number */
    if (write(fd, frame, sizeof frame) != (ssize_t)sizeof frame) _exit(4);
    raise(SIGKILL);
}

static void victim(const char *step, const pmix_proc_t *me, const char *self) {
    if (strcmp(step, "handshake") == 0) die_in_handshake();
    pmix_proc_t p;
    if (PMIx_Init(&p, NULL, 0) != PMIX_SUCCESS) _exit(4);
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me->nspace, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIX_ERR_NOT_SUPPORTED;
    if (strcmp(step, "fence") == 0 || strcmp(step, "fence_shm") == 0) {
        pmix_info_t collect;
        bool yes = true;
        PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        int data = strcmp(step, "fence") == 0;
        rc = PMIx_Fence_nb(&all, 1, data ? &collect : NULL, data ? 1 : 0, ignore_cb, NULL);
    } else if (strcmp(step, "get") == 0) {
        pmix_proc_t zero;
        PMIX_LOAD_PROCID(&zero, me->nspace, 0);
        rc = PMIx_Get_nb(&zero, "fault.never.put", NULL, 0, ignore_value_cb, NULL);
    } else if (strcmp(step, "connect") == 0) {
        rc = PMIx_Connect_nb(&all, 1, NULL, 0, ignore_cb, NULL);
    } else if (strcmp(step, "group") == 0) {
        rc = PMIx_Group_construct_nb("fault.group", &all, 1, NULL, 0, ignore_info_cb, NULL);
    } else if (strcmp(step, "spawn") == 0) {
        pmix_app_t app;
        PMIX_APP_CONSTRUCT(&app);
        app.cmd = strdup(self);
        char *argv[] = {(char *)self, "child", NULL};
        app.argv = argv;
        app.maxprocs = 1;
        rc = PMIx_Spawn_nb(NULL, 0, &app, 1, ignore_spawn_cb, NULL);
    } else if (strcmp(step, "query") == 0) {
        pmix_query_t *q;
        PMIX_QUERY_CREATE(q, 1);
        PMIX_ARGV_APPEND(rc, q[0].keys, PMIX_QUERY_PROC_TABLE);
        PMIX_INFO_CREATE(q[0].qualifiers, 1);
        q[0].nqual = 1;
        PMIX_INFO_LOAD(&q[0].qualifiers[0], PMIX_NSPACE, me->nspace, PMIX_STRING);
        rc = PMIx_Query_info_nb(q, 1, ignore_info_cb, NULL);
    } else if (strcmp(step, "iof") == 0) {
        rc = PMIx_IOF_pull(&all, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, ignore_iof, ignore_reg, NULL);
    }
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        fprintf(stderr, "fault_client: victim's %s request refused: %s\n", step,
                PMIx_Error_string(rc));
        _exit(4);
    }
    raise(SIGKILL);
}

static pmix_status_t survivor_step(const char *step, const pmix_proc_t *me) {
    pmix_proc_t all;
    PMIX_LOAD_PROCID(&all, me->nspace, PMIX_RANK_WILDCARD);
    if (strcmp(step, "fence") == 0) {
        pmix_info_t collect;
        bool yes = true;
        PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        return PMIx_Fence(&all, 1, &collect, 1);
    }
    if (strcmp(step, "get") == 0) {
        pmix_value_t *v = NULL;
        pmix_proc_t victim;
        PMIX_LOAD_PROCID(&victim, me->nspace, PMIX_RANK_UNDEF);
        pmix_value_t *size = NULL;
        pmix_status_t rc = PMIx_Get(&all, PMIX_JOB_SIZE, NULL, 0, &size);
        if (rc != PMIX_SUCCESS) return rc;
        victim.rank = size->data.uint32 - 1;
        PMIX_VALUE_RELEASE(size);
        rc = PMIx_Get(&victim, "fault.never.put", NULL, 0, &v);
        if (v != NULL) PMIX_VALUE_RELEASE(v);
        return rc;
    }
    if (strcmp(step, "connect") == 0) return PMIx_Connect(&all, 1, NULL, 0);
    if (strcmp(step, "group") == 0) {
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        pmix_status_t rc =
            PMIx_Group_construct("fault.group", &all, 1, NULL, 0, &results, &nresults);
        if (results != NULL) PMIX_INFO_FREE(results, nresults);
        return rc;
    }
    /* handshake, fence_shm, spawn, query, iof: the victim's own request;
     * the survivors meet it in a fence without data. */
    return PMIx_Fence(&all, 1, NULL, 0);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: fault_client STEP\n");
        return 64;
    }
    g_step = argv[1];
    if (strcmp(g_step, "child") == 0) { /* what the victim of `spawn` asked for */
        pmix_proc_t me;
        pmix_status_t rc = PMIx_Init(&me, NULL, 0);
        printf("spawned child: init %s\n", PMIx_Error_string(rc));
        if (rc == PMIX_SUCCESS) PMIx_Finalize(NULL, 0);
        return 0;
    }
    const char *ns = getenv("PMIX_NAMESPACE"), *rank = getenv("PMIX_RANK");
    if (ns == NULL || rank == NULL) {
        fprintf(stderr, "fault_client: not started by a PMIx server\n");
        return 64;
    }
    pmix_proc_t me;
    PMIX_LOAD_PROCID(&me, ns, (pmix_rank_t)atoi(rank));
    g_rank = me.rank;
    signal(SIGALRM, hung);
    alarm(kBound);
    /* The victim is the highest rank: the job size is known only after Init,
     * which the victim of `handshake` must not run, so the test says it. */
    const char *size_env = getenv("FAULT_JOB_SIZE");
    if (size_env == NULL) {
        fprintf(stderr, "fault_client: set FAULT_JOB_SIZE to the job's size\n");
        return 64;
    }
    if (me.rank == (pmix_rank_t)atoi(size_env) - 1) victim(g_step, &me, argv[0]);

    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) {
        printf("survivor %u %s: PMIx_Init failed\n", me.rank, g_step);
        return 1;
    }
    pmix_status_t rc = survivor_step(g_step, &me);
    pmix_status_t after = PMIX_SUCCESS;
    int fenced = 0;
    if (rc == PMIX_SUCCESS) {
        pmix_proc_t all;
        PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
        after = PMIx_Fence(&all, 1, NULL, 0);
        fenced = 1;
    }
    alarm(0);
    printf("survivor %u %s: %s then %s\n", me.rank, g_step, PMIx_Error_string(rc),
           fenced ? PMIx_Error_string(after) : "-");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return rc != PMIX_SUCCESS || after != PMIX_SUCCESS ? 0 : 1;
}
