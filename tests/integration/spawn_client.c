/* PMIx_Spawn, PMIx_Connect and PMIx_Disconnect across two jobs.
 *
 * usage: spawn_client parent    - spawns 2 copies of itself ("child"),
 *                                 connects to them, reads their job size and
 *                                 committed key, disconnects
 *        spawn_client badspawn  - spawns a program that does not exist:
 *                                 the spawn must fail, not hang
 *        spawn_client dying     - spawns 2 copies ("dying-child"), the second
 *                                 of which is killed after PMIx_Init: the
 *                                 connect of the others must fail
 *        spawn_client late      - spawns 2 copies ("late-child"), the second
 *                                 of which never joins the connect: the
 *                                 others' connect must end with
 *                                 PMIX_ERR_TIMEOUT (their PMIX_TIMEOUT)
 * (child / dying-child / late-child are the spawned roles.)
 *
 * After a connect, the other job's job-level info and committed keys are
 * read with PMIX_OPTIONAL, i.e. from this process's own store only: they must
 * have come with the connect (or, for the child job's info, with the spawn). */
#include <pmix.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

#define FAIL(...)                                       \
    do {                                                \
        fprintf(stderr, "%s:%u: ", me.nspace, me.rank); \
        fprintf(stderr, __VA_ARGS__);                   \
        fprintf(stderr, "\n");                          \
        exit(1);                                        \
    } while (0)

static uint32_t job_size(const char *nspace, int local_only) {
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    pmix_info_t opt;
    bool yes = true;
    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    PMIX_LOAD_PROCID(&wild, nspace, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Get(&wild, PMIX_JOB_SIZE, local_only ? &opt : NULL, local_only, &val);
    if (rc != PMIX_SUCCESS) FAIL("Get %s job size: %s", nspace, PMIx_Error_string(rc));
    if (val->type != PMIX_UINT32) FAIL("job size of %s has type %d", nspace, val->type);
    uint32_t n = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    return n;
}

static void put_commit(const char *key, const char *text) {
    pmix_value_t v;
    v.type = PMIX_STRING;
    v.data.string = (char *)text;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc != PMIX_SUCCESS) FAIL("Put: %s", PMIx_Error_string(rc));
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) FAIL("Commit: %s", PMIx_Error_string(rc));
}

/* The value of `key` committed by nspace:rank, from the local store only. */
static void expect_key(const char *nspace, pmix_rank_t rank, const char *key,
                       const char *expected) {
    pmix_proc_t peer;
    pmix_value_t *val = NULL;
    pmix_info_t opt;
    bool yes = true;
    PMIX_INFO_LOAD(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    PMIX_LOAD_PROCID(&peer, nspace, rank);
    pmix_status_t rc = PMIx_Get(&peer, key, &opt, 1, &val);
    if (rc != PMIX_SUCCESS) FAIL("Get %s of %s:%u: %s", key, nspace, rank, PMIx_Error_string(rc));
    if (val->type != PMIX_STRING || strcmp(val->data.string, expected) != 0)
        FAIL("%s of %s:%u is not '%s'", key, nspace, rank, expected);
    PMIX_VALUE_RELEASE(val);
}

static int connect_timeout = 30;

static pmix_status_t connect_jobs(const char *a, const char *b, int disconnect) {
    pmix_proc_t procs[2];
    pmix_info_t info;
    int timeout = connect_timeout;
    PMIX_LOAD_PROCID(&procs[0], a, PMIX_RANK_WILDCARD);
    PMIX_LOAD_PROCID(&procs[1], b, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
    return disconnect ? PMIx_Disconnect(procs, 2, &info, 1) : PMIx_Connect(procs, 2, &info, 1);
}

static pmix_status_t spawn_copies(const char *program, const char *role, pmix_nspace_t child) {
    pmix_app_t app;
    char *argv[] = {(char *)program, (char *)role, NULL};
    char cwd[4096];
    memset(&app, 0, sizeof app);
    app.cmd = (char *)program;
    app.argv = argv;
    app.maxprocs = 2;
    if (getcwd(cwd, sizeof cwd) != NULL) app.cwd = cwd;
    return PMIx_Spawn(NULL, 0, &app, 1, child);
}

static void parent(const char *self, const char *role) {
    pmix_nspace_t child;
    put_commit("parent.key", "from the parent");
    pmix_status_t rc = spawn_copies(self, role, child);
    if (rc != PMIX_SUCCESS) FAIL("Spawn: %s", PMIx_Error_string(rc));
    if (strcmp(child, me.nspace) == 0) FAIL("the child job got the parent's nspace");
    if (strcmp(role, "dying-child") == 0) {
        rc = connect_jobs(me.nspace, child, 0);
        if (rc == PMIX_SUCCESS) FAIL("connect with a dead peer succeeded");
        printf("connect failed as expected: %s\n", PMIx_Error_string(rc));
        return;
    }
    if (strcmp(role, "late-child") == 0) {
        connect_timeout = 2;
        rc = connect_jobs(me.nspace, child, 0);
        if (rc != PMIX_ERR_TIMEOUT) FAIL("connect without a peer: %s", PMIx_Error_string(rc));
        printf("connect timed out as expected\n");
        return;
    }
    /* The child job's info came with the spawn's answer. */
    if (job_size(child, 1) != 2) FAIL("child job size is not 2");
    if ((rc = connect_jobs(me.nspace, child, 0)) != PMIX_SUCCESS)
        FAIL("Connect: %s", PMIx_Error_string(rc));
    expect_key(child, 0, "child.key", "child 0");
    expect_key(child, 1, "child.key", "child 1");
    if ((rc = connect_jobs(child, me.nspace, 1)) != PMIX_SUCCESS)
        FAIL("Disconnect: %s", PMIx_Error_string(rc));
    printf("parent ok: spawned %s\n", child);
}

/* The child job alone: ends the late-child case once its rank 0 gave up. */
static void fence_own_job(void) {
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) FAIL("Fence: %s", PMIx_Error_string(rc));
}

static void child(int dying, int late) {
    pmix_proc_t wild;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    char parent_ns[PMIX_MAX_NSLEN + 1], text[64];
    if (dying && me.rank == 1) raise(SIGKILL);
    if (late && me.rank == 1) {
        fence_own_job();
        return;
    }
    if (job_size(me.nspace, 0) != 2) FAIL("own job size is not 2");
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Get(&wild, PMIX_SPAWNED, NULL, 0, &val)) != PMIX_SUCCESS)
        FAIL("Get spawned: %s", PMIx_Error_string(rc));
    if (val->type != PMIX_BOOL || !val->data.flag) FAIL("PMIX_SPAWNED is not true");
    PMIX_VALUE_RELEASE(val);
    if ((rc = PMIx_Get(&wild, PMIX_PARENT_ID, NULL, 0, &val)) != PMIX_SUCCESS)
        FAIL("Get parent id: %s", PMIx_Error_string(rc));
    if (val->type != PMIX_PROC) FAIL("PMIX_PARENT_ID has type %d", val->type);
    PMIX_LOAD_NSPACE(parent_ns, val->data.proc->nspace);
    if (strcmp(parent_ns, me.nspace) == 0) FAIL("the parent is in my own job");
    PMIX_VALUE_RELEASE(val);

    snprintf(text, sizeof text, "child %u", me.rank);
    put_commit("child.key", text);
    if (late) connect_timeout = 2;
    rc = connect_jobs(parent_ns, me.nspace, 0);
    if (late) {
        if (rc != PMIX_ERR_TIMEOUT) FAIL("connect without a peer: %s", PMIx_Error_string(rc));
        printf("connect timed out as expected\n");
        fence_own_job();
        return;
    }
    if (dying) {
        if (rc == PMIX_SUCCESS) FAIL("connect with a dead peer succeeded");
        printf("connect failed as expected: %s\n", PMIx_Error_string(rc));
        return;
    }
    if (rc != PMIX_SUCCESS) FAIL("Connect: %s", PMIx_Error_string(rc));
    if (job_size(parent_ns, 1) != 1) FAIL("parent job size is not 1");
    expect_key(parent_ns, 0, "parent.key", "from the parent");
    if ((rc = connect_jobs(me.nspace, parent_ns, 1)) != PMIX_SUCCESS)
        FAIL("Disconnect: %s", PMIx_Error_string(rc));
    printf("child ok: rank %u of %s, parent %s\n", me.rank, me.nspace, parent_ns);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: spawn_client parent|badspawn|dying|late\n");
        return 2;
    }
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "spawn_client: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    const char *role = argv[1];
    if (strcmp(role, "parent") == 0) {
        parent(argv[0], "child");
    } else if (strcmp(role, "dying") == 0) {
        parent(argv[0], "dying-child");
    } else if (strcmp(role, "child") == 0) {
        child(0, 0);
    } else if (strcmp(role, "dying-child") == 0) {
        child(1, 0);
    } else if (strcmp(role, "late") == 0) {
        parent(argv[0], "late-child");
    } else if (strcmp(role, "late-child") == 0) {
        child(0, 1);
    } else if (strcmp(role, "badspawn") == 0) {
        pmix_nspace_t ns;
        rc = spawn_copies("/nonexistent/program", "child", ns);
        if (rc == PMIX_SUCCESS) FAIL("spawning a nonexistent program succeeded");
        printf("spawn failed as expected: %s\n", PMIx_Error_string(rc));
    } else {
        FAIL("unknown role %s", role);
    }
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}
