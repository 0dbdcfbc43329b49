/* IO forwarding through a host that embeds the server (docs/iof.md).
 *
 * The host registers job "iofjob" (ranks 0 and 1) and delivers output as if
 * the job's processes wrote it; the pullers are rank 0 ("A", the checks),
 * rank 1 ("B", push and a puller that vanishes) and a tool ("T"). Output is
 * delivered with PMIx_server_IOF_deliver; every step ends with a marker
 * chunk on iofjob:1's stdout, so that a puller that received the marker has
 * received everything delivered before it (one connection keeps order).
 *
 *  1. before any client: rank 1 stdout "early-1\n" "early-2\n", rank 1
 *     stderr "early-err\n", rank 0 stdout: cached (nobody pulls yet).
 *  2. A: bad arguments; then pulls iofjob:1 STDOUT and gets the two cached
 *     chunks first, in order; the host delivers rank 1 stdout and stderr,
 *     rank 0 stdout, binary bytes with info: A sees exactly rank 1's stdout
 *     bytes, with channel, source and info. A pull without cbfunc writes to
 *     A's own stdout (standard), counted by ctest.
 *  3. A pulls rank 1 STDERR (blocking form: the reference is the return
 *     value) and gets the cached stderr; deregisters it; nothing more comes.
 *  4. cache limits: a pull naming STDERR with PMIX_IOF_CACHE_SIZE 10 and
 *     DROP_NEWEST, then three 4-byte chunks nobody pulls: a later pull gets
 *     "aaaabbbbcc"; with DROP_OLDEST: "ddeeeeffff".
 *  5. B pushes stdin bytes (the host's push_stdin sees them exactly, or
 *     NOT_SUPPORTED without the upcall), pulls, and exits without
 *     finalizing: the next delivery still reaches A.
 *  6. a tool pushes stdin bytes to rank 0 (the host's push_stdin sees them,
 *     from the tool's identity; NOT_SUPPORTED without the upcall), pulls
 *     iofjob:1 STDOUT and receives the next chunk.
 * Mode "upcalls": the module has iof_pull (checked: procs, channel, the
 * client's uid) and push_stdin; a pull with directive "iof.test.refuse" is
 * refused by the host, and the pull fails with the host's status.
 * Mode "plain": neither upcall; pulls work, pushes are NOT_SUPPORTED.
 * With PMIX_MCA_server_base_iof_cache_size=8 in the environment, step 1
 * keeps 8 bytes per channel ("early-1\n", "early-er") and A expects that.
 *
 *   iof_host upcalls|plain   (re-executes itself as the clients and the tool) */
#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NS "iofjob"
#define REFUSE_KEY "iof.test.refuse"

static const char *who = "iof_host";

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("%s FAILED: ", who);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    _exit(1);
}
#define CHECK(cond, ...)                \
    do {                                \
        if (!(cond)) fail(__VA_ARGS__); \
    } while (0)

/* ------------------------------------------------------------ line pipes */
static void put_line(int fd, const char *line) {
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%s\n", line);
    CHECK(write(fd, buf, (size_t)n) == n, "write %s", line);
}

static void expect_line(int fd, const char *line) {
    char buf[128];
    size_t n = 0;
    while (n + 1 < sizeof buf) {
        ssize_t r = read(fd, buf + n, 1);
        CHECK(r == 1, "waiting for '%s': pipe closed", line);
        if (buf[n] == '\n') break;
        ++n;
    }
    buf[n] = '\0';
    CHECK(strcmp(buf, line) == 0, "expected '%s', got '%s'", line, buf);
}

static int env_fd(const char *name) {
    const char *v = getenv(name);
    CHECK(v != NULL, "no %s", name);
    return atoi(v);
}

/* --------------------------------------------------------- what arrives */
#define MAX_CHUNKS 64
typedef struct {
    size_t ref;
    pmix_iof_channel_t channel;
    pmix_proc_t source;
    char bytes[64];
    size_t size;
    int has_test_info;
} chunk_t;
static chunk_t chunks[MAX_CHUNKS];
static int nchunks = 0;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

static void on_output(size_t ref, pmix_iof_channel_t channel, pmix_proc_t *source,
                      pmix_byte_object_t *payload, pmix_info_t info[], size_t ninfo) {
    pthread_mutex_lock(&lock);
    if (nchunks < MAX_CHUNKS && payload->size <= sizeof chunks[0].bytes) {
        chunk_t *c = &chunks[nchunks++];
        c->ref = ref;
        c->channel = channel;
        c->source = *source;
        memcpy(c->bytes, payload->bytes, payload->size);
        c->size = payload->size;
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], "iof.test.info") && info[i].value.type == PMIX_STRING &&
                strcmp(info[i].value.data.string, "meta") == 0)
                c->has_test_info = 1;
        }
    }
    /* The payload is ours (standard): release every other one ourselves. */
    if (nchunks % 2 == 0) PMIX_BYTE_OBJECT_DESTRUCT(payload);
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

/* Waits until a chunk of `ref` with exactly `text` arrived; returns its index. */
static int wait_chunk(size_t ref, const char *text) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 20;
    pthread_mutex_lock(&lock);
    for (int seen = 0;;) {
        for (; seen < nchunks; ++seen) {
            if (chunks[seen].ref == ref && chunks[seen].size == strlen(text) &&
                memcmp(chunks[seen].bytes, text, chunks[seen].size) == 0) {
                pthread_mutex_unlock(&lock);
                return seen;
            }
        }
        if (pthread_cond_timedwait(&cond, &lock, &deadline) != 0) break;
    }
    pthread_mutex_unlock(&lock);
    fail("no chunk '%s' for handler %zu", text, ref);
    return -1;
}

/* The bytes of `ref` from chunk `from` on, concatenated (checks channel and source). */
static size_t collect(size_t ref, int from, pmix_iof_channel_t channel, pmix_rank_t rank, char *out,
                      size_t cap) {
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (int i = from; i < nchunks; ++i) {
        if (chunks[i].ref != ref) continue;
        CHECK(chunks[i].channel == channel, "chunk %d: channel %u", i, chunks[i].channel);
        CHECK(strcmp(chunks[i].source.nspace, NS) == 0 && chunks[i].source.rank == rank,
              "chunk %d: source %s:%u", i, chunks[i].source.nspace, chunks[i].source.rank);
        CHECK(n + chunks[i].size <= cap, "too many bytes");
        memcpy(out + n, chunks[i].bytes, chunks[i].size);
        n += chunks[i].size;
    }
    pthread_mutex_unlock(&lock);
    return n;
}

static int count_of(size_t ref) {
    int n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nchunks; ++i) n += chunks[i].ref == ref;
    pthread_mutex_unlock(&lock);
    return n;
}

static pmix_proc_t proc_of(pmix_rank_t rank) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, NS, rank);
    return p;
}

static _Atomic int reg_done = 0;
static _Atomic size_t reg_ref = 0;
static _Atomic pmix_status_t reg_status = PMIX_ERROR;
static void on_registered(pmix_status_t status, size_t ref, void *cbdata) {
    (void)cbdata;
    pthread_mutex_lock(&lock);
    reg_status = status;
    reg_ref = ref;
    reg_done = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

/* A non-blocking pull; returns the status the registration callback gave. */
static pmix_status_t pull_nb(pmix_rank_t rank, pmix_iof_channel_t channel, pmix_info_t *dirs,
                             size_t ndirs, size_t *ref) {
    pmix_proc_t p = proc_of(rank);
    reg_done = 0;
    pmix_status_t rc = PMIx_IOF_pull(&p, 1, dirs, ndirs, channel, on_output, on_registered, NULL);
    if (rc != PMIX_SUCCESS) return rc;
    pthread_mutex_lock(&lock);
    while (!reg_done) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    *ref = reg_ref;
    return reg_status;
}

/* A blocking pull with a cache policy for STDERR on rank 0 (nobody delivers that). */
static size_t pull_policy(uint32_t size, const char *drop) {
    pmix_info_t dirs[2];
    PMIX_INFO_LOAD(&dirs[0], PMIX_IOF_CACHE_SIZE, &size, PMIX_UINT32);
    bool yes = true;
    PMIX_INFO_LOAD(&dirs[1], drop, &yes, PMIX_BOOL);
    pmix_proc_t p = proc_of(0);
    pmix_status_t rc =
        PMIx_IOF_pull(&p, 1, dirs, 2, PMIX_FWD_STDERR_CHANNEL, on_output, NULL, NULL);
    CHECK(rc >= 0, "policy pull: %s", PMIx_Error_string(rc));
    return (size_t)rc;
}

/* ------------------------------------------------------------ client A */
static int client_a(int upcalls) {
    who = "iof client A";
    int to_host = env_fd("IOF_TO_HOST"), from_host = env_fd("IOF_FROM_HOST");
    pmix_proc_t me, r1 = proc_of(1);
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "init");

    /* Bad arguments. */
    CHECK(PMIx_IOF_pull(NULL, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, on_output, on_registered,
                        NULL) == PMIX_ERR_BAD_PARAM,
          "NULL procs");
    CHECK(PMIx_IOF_pull(&r1, 0, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, on_output, on_registered, NULL) ==
              PMIX_ERR_BAD_PARAM,
          "no procs");
    CHECK(PMIx_IOF_pull(&r1, 1, NULL, 0, 0, on_output, on_registered, NULL) == PMIX_ERR_BAD_PARAM,
          "no channel");
    CHECK(PMIx_IOF_pull(&r1, 1, NULL, 0, PMIX_FWD_STDIN_CHANNEL, on_output, on_registered, NULL) ==
              PMIX_ERR_NOT_SUPPORTED,
          "stdin pulled");
    pmix_info_t tag;
    bool yes = true;
    PMIX_INFO_LOAD(&tag, PMIX_IOF_TAG_OUTPUT, &yes, PMIX_BOOL);
    PMIX_INFO_REQUIRED(&tag);
    CHECK(PMIx_IOF_pull(&r1, 1, &tag, 1, PMIX_FWD_STDOUT_CHANNEL, on_output, on_registered, NULL) ==
              PMIX_ERR_NOT_SUPPORTED,
          "required tag output");
    CHECK(PMIx_IOF_deregister(4242, NULL, 0, NULL, NULL) == PMIX_ERR_NOT_FOUND, "unknown handler");
    size_t ref = 0;
    if (upcalls) { /* the host refuses this one */
        pmix_info_t refuse;
        PMIX_INFO_LOAD(&refuse, REFUSE_KEY, &yes, PMIX_BOOL);
        pmix_status_t rc = pull_nb(1, PMIX_FWD_STDOUT_CHANNEL, &refuse, 1, &ref);
        CHECK(rc == PMIX_ERR_NOT_AVAILABLE, "refused pull: %s", PMIx_Error_string(rc));
    }

    /* 2. the cached output first, then exactly rank 1's stdout. */
    PMIX_INFO_LOAD(&tag, PMIX_IOF_TAG_OUTPUT, &yes, PMIX_BOOL); /* optional: ignored */
    size_t out = 0;
    pmix_status_t rc = pull_nb(1, PMIX_FWD_STDOUT_CHANNEL, &tag, 1, &out);
    CHECK(rc == PMIX_SUCCESS, "pull: %s", PMIx_Error_string(rc));
    pmix_proc_t r0 = proc_of(0);
    rc = PMIx_IOF_pull(&r0, 1, NULL, 0, PMIX_FWD_STDDIAG_CHANNEL, NULL, NULL, NULL);
    CHECK(rc >= 0, "pull without cbfunc: %s", PMIx_Error_string(rc));
    put_line(to_host, "pulled");
    expect_line(from_host, "step2");
    int end = wait_chunk(out, "END2");
    /* PMIX_MCA_server_base_iof_cache_size=8: only "early-1\n" fit in step 1. */
    const int small = getenv("PMIX_MCA_server_base_iof_cache_size") != NULL;
    static const char full2[] = "early-1\nearly-2\nlive-1\nbin\0\xff\nEND2";
    static const char small2[] = "early-1\nlive-1\nbin\0\xff\nEND2";
    const char *want2 = small ? small2 : full2;
    const size_t nwant2 = small ? sizeof small2 - 1 : sizeof full2 - 1;
    char got[256];
    size_t n = collect(out, 0, PMIX_FWD_STDOUT_CHANNEL, 1, got, sizeof got);
    CHECK(n == nwant2 && memcmp(got, want2, n) == 0, "step 2: %zu bytes '%.*s'", n, (int)n, got);
    CHECK(count_of(out) == (small ? 4 : 5), "step 2: %d chunks", count_of(out));
    int bin = end - 1;
    while (bin >= 0 && chunks[bin].ref != out) --bin;
    CHECK(bin >= 0 && chunks[bin].size == 6 && chunks[bin].has_test_info,
          "the info of a chunk did not arrive");

    /* 3. cached stderr through a blocking pull, then deregistered. */
    pmix_status_t err =
        PMIx_IOF_pull(&r1, 1, NULL, 0, PMIX_FWD_STDERR_CHANNEL, on_output, NULL, NULL);
    CHECK(err >= 0 && (size_t)err != out, "blocking pull: %d", err);
    /* small: "early-err\n" cut to 8 bytes, "err-1\n" dropped (cache full) */
    const char *want3 = small ? "early-er" : "early-err\nerr-1\n";
    wait_chunk((size_t)err, small ? "early-er" : "err-1\n");
    n = collect((size_t)err, 0, PMIX_FWD_STDERR_CHANNEL, 1, got, sizeof got);
    CHECK(n == strlen(want3) && memcmp(got, want3, n) == 0, "step 3: '%.*s'", (int)n, got);
    CHECK(PMIx_IOF_deregister((size_t)err, NULL, 0, NULL, NULL) == PMIX_SUCCESS, "deregister");
    CHECK(PMIx_IOF_deregister((size_t)err, NULL, 0, NULL, NULL) == PMIX_ERR_NOT_FOUND, "twice");

    /* 4. cache limits, both policies. */
    pull_policy(10, PMIX_IOF_DROP_NEWEST);
    put_line(to_host, "newest");
    expect_line(from_host, "step4a");
    wait_chunk(out, "END4a");
    CHECK(count_of((size_t)err) == (small ? 1 : 2), "output after deregister");
    size_t e2 = 0;
    CHECK(pull_nb(1, PMIX_FWD_STDERR_CHANNEL, NULL, 0, &e2) == PMIX_SUCCESS, "pull e2");
    int first = wait_chunk(e2, "cc");
    n = collect(e2, 0, PMIX_FWD_STDERR_CHANNEL, 1, got, sizeof got);
    CHECK(n == 10 && memcmp(got, "aaaabbbbcc", 10) == 0, "drop newest: '%.*s'", (int)n, got);
    (void)first;
    CHECK(PMIx_IOF_deregister(e2, NULL, 0, NULL, NULL) == PMIX_SUCCESS, "deregister e2");
    pull_policy(10, PMIX_IOF_DROP_OLDEST);
    put_line(to_host, "oldest");
    expect_line(from_host, "step4b");
    wait_chunk(out, "END4b");
    size_t e3 = 0;
    CHECK(pull_nb(1, PMIX_FWD_STDERR_CHANNEL, NULL, 0, &e3) == PMIX_SUCCESS, "pull e3");
    wait_chunk(e3, "ffff");
    n = collect(e3, 0, PMIX_FWD_STDERR_CHANNEL, 1, got, sizeof got);
    CHECK(n == 10 && memcmp(got, "ddeeeeffff", 10) == 0, "drop oldest: '%.*s'", (int)n, got);
    put_line(to_host, "cached");

    /* 5. and 6.: B vanished; the tool pulls too. */
    expect_line(from_host, "step5");
    wait_chunk(out, "after-B");
    expect_line(from_host, "step6");
    wait_chunk(out, "to-tool");
    PMIx_Finalize(NULL, 0);
    printf("iof client A ok\n");
    return 0;
}

/* ------------------------------------------------------------ client B */
static int client_b(int upcalls) {
    who = "iof client B";
    int to_host = env_fd("IOF_TO_HOST");
    pmix_proc_t me, r0 = proc_of(0);
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "init");
    static char data[] = "stdin\0bytes";
    pmix_byte_object_t bo = {data, sizeof data - 1};
    pmix_status_t rc = PMIx_IOF_push(&r0, 1, &bo, NULL, 0, NULL, NULL);
    CHECK(rc == (upcalls ? PMIX_SUCCESS : PMIX_ERR_NOT_SUPPORTED), "push: %s",
          PMIx_Error_string(rc));
    pmix_info_t dir;
    bool yes = true;
    PMIX_INFO_LOAD(&dir, PMIX_IOF_PUSH_STDIN, &yes, PMIX_BOOL);
    CHECK(PMIx_IOF_push(&r0, 1, NULL, &dir, 1, NULL, NULL) == PMIX_ERR_NOT_SUPPORTED, "push stdin");
    CHECK(PMIx_IOF_push(&r0, 1, NULL, NULL, 0, NULL, NULL) == PMIX_ERR_BAD_PARAM, "NULL bo");
    PMIX_INFO_LOAD(&dir, PMIX_IOF_COMPLETE, &yes, PMIX_BOOL);
    rc = PMIx_IOF_push(&r0, 1, NULL, &dir, 1, NULL, NULL);
    CHECK(rc == (upcalls ? PMIX_SUCCESS : PMIX_ERR_NOT_SUPPORTED), "end of stream: %s",
          PMIx_Error_string(rc));
    size_t ref = 0;
    CHECK(pull_nb(1, PMIX_FWD_STDOUT_CHANNEL, NULL, 0, &ref) == PMIX_SUCCESS, "pull");
    put_line(to_host, "B pulled");
    _exit(0); /* no finalize: the server sees the connection drop */
}

/* ------------------------------------------------------------------ tool */
static int tool_main(int upcalls) {
    who = "iof tool";
    int to_host = env_fd("IOF_TO_HOST");
    pmix_proc_t me, r0 = proc_of(0);
    CHECK(PMIx_tool_init(&me, NULL, 0) == PMIX_SUCCESS, "tool init");
    /* A tool pushes stdin to a process of the job, as a client does. */
    static char data[] = "stdin\0bytes";
    pmix_byte_object_t bo = {data, sizeof data - 1};
    pmix_status_t rc = PMIx_IOF_push(&r0, 1, &bo, NULL, 0, NULL, NULL);
    CHECK(rc == (upcalls ? PMIX_SUCCESS : PMIX_ERR_NOT_SUPPORTED), "tool push: %s",
          PMIx_Error_string(rc));
    size_t ref = 0;
    CHECK(pull_nb(1, PMIX_FWD_STDOUT_CHANNEL, NULL, 0, &ref) == PMIX_SUCCESS, "tool pull");
    put_line(to_host, "T pulled");
    wait_chunk(ref, "to-tool");
    CHECK(count_of(ref) == 1, "tool: %d chunks", count_of(ref));
    PMIx_tool_finalize();
    printf("iof tool ok\n");
    return 0;
}

/* -------------------------------------------------------------------- host */
static int pulls_seen = 0, pushes_seen = 0, ends_seen = 0, tool_pushes_seen = 0;

static pmix_status_t on_iof_pull(const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t directives[], size_t ndirs,
                                 pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata) {
    int uid_ok = 0, refuse = 0;
    for (size_t i = 0; i < ndirs; ++i) {
        if (PMIX_CHECK_KEY(&directives[i], PMIX_USERID))
            uid_ok = directives[i].value.data.uint32 == (uint32_t)getuid();
        if (PMIX_CHECK_KEY(&directives[i], REFUSE_KEY)) refuse = 1;
    }
    CHECK(uid_ok && nprocs == 1 && strcmp(procs[0].nspace, NS) == 0 && channels != 0,
          "iof_pull upcall arguments");
    if (refuse) return PMIX_ERR_NOT_AVAILABLE;
    ++pulls_seen;
    cbfunc(PMIX_SUCCESS, cbdata); /* inline, before returning: allowed */
    return PMIX_SUCCESS;
}

static pmix_status_t on_push(const pmix_proc_t *source, const pmix_proc_t targets[],
                             size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                             const pmix_byte_object_t *bo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    (void)cbfunc, (void)cbdata;
    if (strcmp(source->nspace, "iof-tool") == 0 && source->rank == 0) { /* step 6's tool */
        CHECK(ntargets == 1 && strcmp(targets[0].nspace, NS) == 0 && targets[0].rank == 0 &&
                  bo != NULL && bo->size == 11 && memcmp(bo->bytes, "stdin\0bytes", 11) == 0,
              "the tool's push");
        ++tool_pushes_seen;
        return PMIX_OPERATION_SUCCEEDED;
    }
    CHECK(strcmp(source->nspace, NS) == 0 && source->rank == 1, "push source");
    CHECK(ntargets == 1 && targets[0].rank == 0, "push targets");
    int complete = 0;
    for (size_t i = 0; i < ndirs; ++i)
        complete |= PMIX_CHECK_KEY(&directives[i], PMIX_IOF_COMPLETE);
    if (complete) {
        CHECK(bo != NULL && bo->size == 0, "end of stream payload");
        ++ends_seen;
    } else {
        CHECK(bo != NULL && bo->size == 11 && memcmp(bo->bytes, "stdin\0bytes", 11) == 0,
              "pushed bytes");
        ++pushes_seen;
    }
    return PMIX_OPERATION_SUCCEEDED;
}

static void on_tool(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                    void *cbdata) {
    (void)info, (void)ninfo;
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, "iof-tool", 0);
    cbfunc(PMIX_SUCCESS, &proc, cbdata);
}

static _Atomic int delivered = 0;
static void on_delivered(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    CHECK(status == PMIX_SUCCESS, "deliver callback: %s", PMIx_Error_string(status));
    __sync_fetch_and_add(&delivered, 1);
}

/* Delivers (blocking form) and checks. */
static void deliver(pmix_rank_t rank, pmix_iof_channel_t channel, const char *bytes, size_t n,
                    pmix_info_t *info, size_t ninfo) {
    pmix_proc_t src = proc_of(rank);
    pmix_byte_object_t bo = {(char *)bytes, n};
    pmix_status_t rc = PMIx_server_IOF_deliver(&src, channel, &bo, info, ninfo, NULL, NULL);
    CHECK(rc == PMIX_OPERATION_SUCCEEDED, "deliver: %s", PMIx_Error_string(rc));
}
#define DELIVER(rank, channel, text) deliver(rank, channel, text, strlen(text), NULL, 0)

static pid_t start(const char *self, const char *mode, const char *role, pmix_rank_t rank,
                   int to_host, int from_host, const char *uri) {
    char **env = NULL;
    pmix_proc_t p = proc_of(rank);
    if (uri == NULL) CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        if (uri != NULL) setenv("PMIX_SERVER_URI41", uri, 1);
        char fd[16];
        snprintf(fd, sizeof fd, "%d", to_host);
        setenv("IOF_TO_HOST", fd, 1);
        snprintf(fd, sizeof fd, "%d", from_host);
        setenv("IOF_FROM_HOST", fd, 1);
        execl("/proc/self/exe", self, mode, role, (char *)NULL);
        _exit(127);
    }
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    return pid;
}

static void reap(pid_t pid, const char *what) {
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid %s", what);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s failed (status %d)", what, status);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2 || (strcmp(argv[1], "upcalls") != 0 && strcmp(argv[1], "plain") != 0)) {
        fprintf(stderr, "usage: iof_host upcalls|plain\n");
        return 2;
    }
    const int upcalls = strcmp(argv[1], "upcalls") == 0;
    if (argc == 3 && strcmp(argv[2], "A") == 0) return client_a(upcalls);
    if (argc == 3 && strcmp(argv[2], "B") == 0) return client_b(upcalls);
    if (argc == 3 && strcmp(argv[2], "T") == 0) return tool_main(upcalls);
    alarm(90); /* a hang is a failure, not a stuck test */

    pmix_proc_t r1 = proc_of(1);
    pmix_byte_object_t bo = {(char *)"x", 1};
    CHECK(PMIx_server_IOF_deliver(&r1, PMIX_FWD_STDOUT_CHANNEL, &bo, NULL, 0, NULL, NULL) ==
              PMIX_ERR_INIT,
          "deliver before init");
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.tool_connected = on_tool;
    if (upcalls) {
        module.iof_pull = on_iof_pull;
        module.push_stdin = on_push;
    }
    pmix_info_t tools;
    bool yes = true;
    PMIX_INFO_LOAD(&tools, PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    CHECK(PMIx_server_init(&module, &tools, 1) == PMIX_SUCCESS, "server init");
    CHECK(PMIx_server_IOF_deliver(NULL, PMIX_FWD_STDOUT_CHANNEL, &bo, NULL, 0, NULL, NULL) ==
              PMIX_ERR_BAD_PARAM,
          "deliver without source");
    CHECK(PMIx_IOF_pull(&r1, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, on_output, NULL, NULL) ==
              PMIX_ERR_NOT_SUPPORTED,
          "pull in a server");
    CHECK(PMIx_IOF_push(&r1, 1, &bo, NULL, 0, NULL, NULL) == PMIX_ERR_NOT_SUPPORTED,
          "push in a server");

    pmix_info_t size;
    uint32_t two = 2;
    PMIX_INFO_LOAD(&size, PMIX_JOB_SIZE, &two, PMIX_UINT32);
    for (pmix_rank_t r = 0; r < 2; ++r) {
        pmix_proc_t p = proc_of(r);
        pmix_status_t rc = PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL);
        CHECK(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "register client");
    }
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, NS);
    pmix_status_t rc = PMIx_server_register_nspace(ns, 2, &size, 1, NULL, NULL);
    CHECK(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED, "register nspace");

    /* 1. nobody pulls yet: cached (the non-blocking form once). */
    pmix_byte_object_t early = {(char *)"early-1\n", 8};
    CHECK(PMIx_server_IOF_deliver(&r1, PMIX_FWD_STDOUT_CHANNEL, &early, NULL, 0, on_delivered,
                                  NULL) == PMIX_SUCCESS,
          "deliver with a callback");
    DELIVER(1, PMIX_FWD_STDOUT_CHANNEL, "early-2\n");
    DELIVER(1, PMIX_FWD_STDERR_CHANNEL, "early-err\n");
    DELIVER(0, PMIX_FWD_STDOUT_CHANNEL, "r0-early\n");

    int up[2], down[2];
    CHECK(pipe(up) == 0 && pipe(down) == 0, "pipes");
    pid_t a = start(argv[0], argv[1], "A", 0, up[1], down[0], NULL);
    expect_line(up[0], "pulled");
    CHECK(delivered == 1, "the deliver callback ran %d times", delivered);

    /* 2. */
    DELIVER(1, PMIX_FWD_STDOUT_CHANNEL, "live-1\n");
    DELIVER(1, PMIX_FWD_STDERR_CHANNEL, "err-1\n");
    DELIVER(0, PMIX_FWD_STDOUT_CHANNEL, "r0-1\n");
    DELIVER(0, PMIX_FWD_STDDIAG_CHANNEL, "iof pulled without cbfunc\n");
    pmix_info_t meta;
    PMIX_INFO_LOAD(&meta, "iof.test.info", "meta", PMIX_STRING);
    deliver(1, PMIX_FWD_STDOUT_CHANNEL, "bin\0\xff\n", 6, &meta, 1);
    PMIX_INFO_DESTRUCT(&meta);
    DELIVER(1, PMIX_FWD_STDOUT_CHANNEL, "END2");
    put_line(down[1], "step2");

    /* 4. */
    expect_line(up[0], "newest");
    DELIVER(1, PMIX_FWD_STDERR_CHANNEL, "aaaa");
    DELIVER(1, PMIX_FWD_STDERR_CHANNEL, "bbbb");
    DELIVER(1, PMIX_FWD_STDERR_CHANNEL, "cccc");
    DELIVER(1, PMIX_FWD_STDOUT_CHANNEL, "END4a");
    put_line(down[1], "step4a");
    expect_line(up[0], "oldest");
    DELIVER(1, PMIX_FWD_STDERR_CHANNEL, "dddd");
    DELIVER(1, PMIX_FWD_STDERR_CHANNEL, "eeee");
    DELIVER(1, PMIX_FWD_STDERR_CHANNEL, "ffff");
    DELIVER(1, PMIX_FWD_STDOUT_CHANNEL, "END4b");
    put_line(down[1], "step4b");
    expect_line(up[0], "cached");

    /* 5. */
    pid_t b = start(argv[0], argv[1], "B", 1, up[1], -1, NULL);
    expect_line(up[0], "B pulled");
    reap(b, "client B");
    usleep(200000); /* let the server see B's connection close */
    DELIVER(1, PMIX_FWD_STDOUT_CHANNEL, "after-B");
    put_line(down[1], "step5");
    if (upcalls)
        CHECK(pushes_seen == 1 && ends_seen == 1, "push_stdin upcalls %d %d", pushes_seen,
              ends_seen);

    /* 6. */
    char **env = NULL;
    pmix_proc_t p0 = proc_of(0);
    CHECK(PMIx_server_setup_fork(&p0, &env) == PMIX_SUCCESS, "setup_fork for the tool");
    char uri[4096] = "";
    for (char **e = env; e != NULL && *e != NULL; ++e) {
        if (strncmp(*e, "PMIX_SERVER_URI41=", 18) == 0) snprintf(uri, sizeof uri, "%s", *e + 18);
        free(*e);
    }
    free(env);
    pid_t t = start(argv[0], argv[1], "T", 0, up[1], -1, uri);
    expect_line(up[0], "T pulled");
    DELIVER(1, PMIX_FWD_STDOUT_CHANNEL, "to-tool");
    put_line(down[1], "step6");
    reap(t, "the tool");
    reap(a, "client A");
    if (upcalls)
        CHECK(tool_pushes_seen == 1, "the tool's push reached push_stdin %d times",
              tool_pushes_seen);

    /* A's 7 accepted pulls, B's and the tool's reached the host's upcall. */
    if (upcalls) CHECK(pulls_seen == 9, "%d iof_pull upcalls", pulls_seen);
    PMIx_server_deregister_nspace(ns, NULL, NULL);
    PMIx_server_finalize();
    printf("iof host ok\n");
    return 0;
}
