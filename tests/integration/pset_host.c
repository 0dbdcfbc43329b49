/* Process sets (server/process_sets.hpp, docs/process_sets.md).
 * usage: pset_host host     a host embedding the server API: registers nspace
 *                           "ps" of 3 ranks with launch sets (rank 0:
 *                           "launch-a" as a string, rank 1 as an array of
 *                           one; rank 2: "launch-b,launch-c" as one comma
 *                           string), forks itself 3 times as the clients,
 *                           then defines and deletes set "blue" {ps:0, ps:2}.
 *        pset_host launch   a client under `pmixrun -n 2 --pset ocean --pset
 *                           deep`: each rank is in both sets.
 * The host and its clients take turns through a pipe: each client writes one
 * byte when it is ready for the next step, the host reads one per client.
 * Prints "pset ok: <what>" per check; every wait is bounded (alarm). */
#include <pmix.h>
#include <pmix_server.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(cond, ...) HOST_CHECK("pset_host", cond, __VA_ARGS__)

static pmix_proc_t me;

/* Whether the DATA_ARRAY of STRING `v` holds exactly the names in `want`
 * (NULL-terminated), in any order. */
static bool names_are(const pmix_value_t *v, const char *const want[]) {
    if (v == NULL || v->type != PMIX_DATA_ARRAY || v->data.darray == NULL ||
        v->data.darray->type != PMIX_STRING)
        return false;
    size_t nwant = 0;
    while (want[nwant] != NULL) ++nwant;
    if (v->data.darray->size != nwant) return false;
    char **have = (char **)v->data.darray->array;
    for (size_t i = 0; i < nwant; ++i) {
        bool found = false;
        for (size_t k = 0; k < nwant; ++k) found = found || strcmp(have[k], want[i]) == 0;
        if (!found) return false;
    }
    return true;
}

/* PMIx_Get(nspace:rank, PMIX_PSET_NAMES) compared with `want` (NULL: not found). */
static void expect_sets(pmix_rank_t rank, const char *const want[], const char *what) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, me.nspace, rank);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&p, PMIX_PSET_NAMES, NULL, 0, &v);
    if (want == NULL) {
        CHECK(rc == PMIX_ERR_NOT_FOUND, "%s: rank %u: %s, wanted NOT_FOUND", what, rank,
              PMIx_Error_string(rc));
    } else {
        CHECK(rc == PMIX_SUCCESS && names_are(v, want), "%s: rank %u: %s or other names", what,
              rank, PMIx_Error_string(rc));
        PMIX_VALUE_RELEASE(v);
    }
}

/* One PMIx_Query_info key (with an optional string qualifier); the value found. */
static pmix_status_t query_one(const char *key, const char *qkey, const char *qval,
                               pmix_value_t *out) {
    pmix_query_t q;
    PMIX_QUERY_CONSTRUCT(&q);
    pmix_status_t rc0;
    PMIX_ARGV_APPEND(rc0, q.keys, key);
    (void)rc0;
    if (qkey != NULL) {
        PMIX_QUERY_QUALIFIERS_CREATE(&q, 1);
        PMIX_INFO_LOAD(&q.qualifiers[0], qkey, qval, PMIX_STRING);
    }
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    pmix_status_t rc = PMIx_Query_info(&q, 1, &results, &nresults);
    PMIX_QUERY_DESTRUCT(&q);
    if (rc != PMIX_SUCCESS) return rc;
    rc = PMIX_ERR_NOT_FOUND;
    for (size_t i = 0; i < nresults; ++i) {
        if (results[i].value.type != PMIX_DATA_ARRAY) continue;
        pmix_info_t *inner = (pmix_info_t *)results[i].value.data.darray->array;
        for (size_t k = 0; k < results[i].value.data.darray->size; ++k) {
            if (PMIX_CHECK_KEY(&inner[k], key)) {
                PMIx_Value_xfer(out, &inner[k].value);
                rc = PMIX_SUCCESS;
            }
        }
    }
    PMIX_INFO_FREE(results, nresults);
    return rc;
}

static size_t num_psets(void) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    pmix_status_t rc = query_one(PMIX_QUERY_NUM_PSETS, NULL, NULL, &v);
    CHECK(rc == PMIX_SUCCESS && v.type == PMIX_SIZE, "query NUM_PSETS: %s", PMIx_Error_string(rc));
    return v.data.size;
}

static void expect_members(const char *set, const pmix_rank_t ranks[], size_t n) {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    pmix_status_t rc = query_one(PMIX_QUERY_PSET_MEMBERSHIP, PMIX_PSET_NAME, set, &v);
    CHECK(rc == PMIX_SUCCESS && v.type == PMIX_DATA_ARRAY && v.data.darray->type == PMIX_PROC &&
              v.data.darray->size == n,
          "membership of %s: %s", set, PMIx_Error_string(rc));
    pmix_proc_t *procs = (pmix_proc_t *)v.data.darray->array;
    for (size_t i = 0; i < n; ++i)
        CHECK(PMIX_CHECK_NSPACE(procs[i].nspace, me.nspace) && procs[i].rank == ranks[i],
              "membership of %s: member %zu is %s:%u", set, i, procs[i].nspace, procs[i].rank);
    PMIX_VALUE_DESTRUCT(&v);
}

/* ------------------------------------------------------------------ events */
static _Atomic int defined = 0, deleted = 0;
static char defined_name[PMIX_MAX_NSLEN + 1], deleted_name[PMIX_MAX_NSLEN + 1];
static size_t defined_members = 0;
static pmix_rank_t defined_ranks[4];

static void on_pset_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                          pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    (void)id, (void)source, (void)results, (void)nresults;
    const char *name = "";
    for (size_t i = 0; i < ninfo; ++i) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_PSET_NAME) && info[i].value.type == PMIX_STRING)
            name = info[i].value.data.string;
        if (PMIX_CHECK_KEY(&info[i], PMIX_PSET_MEMBERS) && info[i].value.type == PMIX_DATA_ARRAY &&
            info[i].value.data.darray->type == PMIX_PROC) {
            pmix_proc_t *p = (pmix_proc_t *)info[i].value.data.darray->array;
            defined_members = info[i].value.data.darray->size;
            for (size_t k = 0; k < defined_members && k < 4; ++k) defined_ranks[k] = p[k].rank;
        }
    }
    if (status == PMIX_PROCESS_SET_DEFINE) {
        snprintf(defined_name, sizeof defined_name, "%s", name);
        atomic_store(&defined, 1);
    } else if (status == PMIX_PROCESS_SET_DELETE) {
        snprintf(deleted_name, sizeof deleted_name, "%s", name);
        atomic_store(&deleted, 1);
    }
    if (cbfunc != NULL) cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void wait_for(_Atomic int *flag, const char *what) {
    for (int i = 0; i < 30000 && !atomic_load(flag); ++i) usleep(1000);
    CHECK(*flag, "no %s event", what);
}

static _Atomic int nb_done = 0;
static pmix_status_t nb_status;
static bool nb_blue = false;

static void on_get_nb(pmix_status_t status, pmix_value_t *kv, void *cbdata) {
    (void)cbdata;
    nb_status = status;
    const char *const want[] = {"launch-b", "launch-c", "blue", NULL};
    nb_blue = status == PMIX_SUCCESS && names_are(kv, want);
    atomic_store(&nb_done, 1);
}

/* ------------------------------------------------------------------ client */
static int client_main(int fd) {
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "client init");
    const char *const a[] = {"launch-a", NULL};
    const char *const bc[] = {"launch-b", "launch-c", NULL};
    expect_sets(0, a, "launch");
    expect_sets(1, a, "launch");
    expect_sets(2, bc, "launch");
    CHECK(num_psets() == 3, "launch: %zu sets, wanted 3", num_psets());
    const pmix_rank_t r01[] = {0, 1};
    expect_members("launch-a", r01, 2);
    if (me.rank == 0) printf("pset ok: launch sets\n");

    pmix_status_t codes[] = {PMIX_PROCESS_SET_DEFINE, PMIX_PROCESS_SET_DELETE};
    CHECK(PMIx_Register_event_handler(codes, 2, NULL, 0, on_pset_event, NULL, NULL) >= 0,
          "register handler");
    CHECK(write(fd, "r", 1) == 1, "ready"); /* the host defines "blue" */
    wait_for(&defined, "PROCESS_SET_DEFINE");
    CHECK(strcmp(defined_name, "blue") == 0 && defined_members == 2 && defined_ranks[0] == 0 &&
              defined_ranks[1] == 2,
          "define event: '%s' with %zu members", defined_name, defined_members);
    const char *const ablue[] = {"launch-a", "blue", NULL};
    expect_sets(0, ablue, "defined");
    expect_sets(1, a, "defined");
    pmix_proc_t two;
    PMIX_LOAD_PROCID(&two, me.nspace, 2);
    CHECK(PMIx_Get_nb(&two, PMIX_PSET_NAMES, NULL, 0, on_get_nb, NULL) == PMIX_SUCCESS, "get_nb");
    wait_for(&nb_done, "Get_nb callback");
    CHECK(nb_blue, "get_nb of rank 2: %s or other names", PMIx_Error_string(nb_status));
    CHECK(num_psets() == 4, "defined: %zu sets, wanted 4", num_psets());
    const pmix_rank_t r02[] = {0, 2};
    expect_members("blue", r02, 2);
    if (me.rank == 0) printf("pset ok: defined by the host\n");

    CHECK(write(fd, "r", 1) == 1, "ready"); /* the host deletes "blue" */
    wait_for(&deleted, "PROCESS_SET_DELETE");
    CHECK(strcmp(deleted_name, "blue") == 0, "delete event: '%s'", deleted_name);
    expect_sets(0, a, "deleted");
    CHECK(num_psets() == 3, "deleted: %zu sets, wanted 3", num_psets());
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    CHECK(query_one(PMIX_QUERY_PSET_MEMBERSHIP, PMIX_PSET_NAME, "blue", &v) == PMIX_ERR_NOT_FOUND,
          "membership of a deleted set");
    if (me.rank == 0) printf("pset ok: deleted by the host\n");
    fflush(stdout);
    CHECK(write(fd, "r", 1) == 1, "done");
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* Under pmixrun --pset ocean --pset deep. */
static int launch_main(void) {
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "client init");
    const char *const both[] = {"ocean", "deep", NULL};
    expect_sets(me.rank, both, "pmixrun");
    expect_sets(me.rank == 0 ? 1 : 0, both, "pmixrun");
    const pmix_rank_t r01[] = {0, 1};
    expect_members("ocean", r01, 2);
    printf("pset ok: pmixrun rank %u in ocean and deep\n", me.rank);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* -------------------------------------------------------------------- host */
static void read_turn(int fd, int nclients) {
    for (int i = 0; i < nclients; ++i) {
        char c;
        CHECK(read(fd, &c, 1) == 1, "a client ended before its turn");
    }
}

/* Rank `rank`'s PMIX_PROC_DATA with its PMIX_PSET_NAMES: one STRING, or a
 * DATA_ARRAY of STRING when `as_array`. */
static pmix_info_t proc_data(pmix_rank_t rank, pmix_info_t pd[2], const char *names[],
                             size_t nnames, bool as_array) {
    PMIX_INFO_LOAD(&pd[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
    if (!as_array) {
        PMIX_INFO_LOAD(&pd[1], PMIX_PSET_NAMES, names[0], PMIX_STRING);
    } else {
        pmix_data_array_t sets = {PMIX_STRING, nnames, (void *)names};
        PMIX_INFO_LOAD(&pd[1], PMIX_PSET_NAMES, &sets, PMIX_DATA_ARRAY);
    }
    pmix_info_t out;
    pmix_data_array_t arr = {PMIX_INFO, 2, pd};
    PMIX_INFO_LOAD(&out, PMIX_PROC_DATA, &arr, PMIX_DATA_ARRAY);
    return out;
}

static int host_main(const char *self) {
    alarm(90); /* a hang is a failure, not a stuck test */
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    pmix_proc_t none[1];
    PMIX_LOAD_PROCID(&none[0], "ps", 0);
    CHECK(PMIx_server_define_process_set(none, 1, "") == PMIX_ERR_BAD_PARAM, "empty name");

    const int n = 3;
    for (int r = 0; r < n; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, "ps", (pmix_rank_t)r);
        CHECK(
            host_registered(PMIx_server_register_client(&p, getuid(), getgid(), NULL, NULL, NULL)),
            "register client");
    }
    pmix_info_t info[4], pd[3][2];
    uint32_t size = (uint32_t)n;
    PMIX_INFO_LOAD(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    const char *a[] = {"launch-a"};
    const char *bc[] = {"launch-b,launch-c"};
    info[1] = proc_data(0, pd[0], a, 1, false);
    info[2] = proc_data(1, pd[1], a, 1, true);
    info[3] = proc_data(2, pd[2], bc, 1, false);
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, "ps");
    CHECK(host_registered(PMIx_server_register_nspace(ns, n, info, 4, NULL, NULL)),
          "register nspace");
    for (int r = 0; r < n; ++r) {
        PMIX_INFO_DESTRUCT(&pd[r][0]);
        PMIX_INFO_DESTRUCT(&pd[r][1]);
    }

    int turn[2];
    CHECK(pipe(turn) == 0, "pipe");
    pid_t pids[3];
    for (int r = 0; r < n; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, "ps", (pmix_rank_t)r);
        char **env = NULL;
        CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
        pids[r] = fork();
        if (pids[r] == 0) {
            close(turn[0]);
            for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
            char fd[16];
            snprintf(fd, sizeof fd, "%d", turn[1]);
            execl("/proc/self/exe", self, "client", fd, (char *)NULL);
            _exit(127);
        }
        for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
        free(env);
    }
    close(turn[1]);

    /* The host's own view, as a server process: PMIx_Get answers from its sets. */
    pmix_value_t *v = NULL;
    pmix_proc_t two;
    PMIX_LOAD_PROCID(&two, "ps", 2);
    const char *const want_bc[] = {"launch-b", "launch-c", NULL};
    CHECK(PMIx_Get(&two, PMIX_PSET_NAMES, NULL, 0, &v) == PMIX_SUCCESS && names_are(v, want_bc),
          "the host's Get of rank 2's sets");
    PMIX_VALUE_RELEASE(v);

    read_turn(turn[0], n);
    pmix_proc_t blue[2];
    PMIX_LOAD_PROCID(&blue[0], "ps", 0);
    PMIX_LOAD_PROCID(&blue[1], "ps", 2);
    CHECK(PMIx_server_define_process_set(blue, 2, "blue") == PMIX_SUCCESS, "define blue");
    /* Refusals: each with its own status, the sets unchanged. */
    CHECK(PMIx_server_define_process_set(blue, 2, "blue") == PMIX_ERR_EXISTS, "define twice");
    CHECK(PMIx_server_define_process_set(blue, 2, "launch-a") == PMIX_ERR_EXISTS,
          "define a launch set's name");
    CHECK(PMIx_server_define_process_set(blue, 2, NULL) == PMIX_ERR_BAD_PARAM, "NULL name");
    CHECK(PMIx_server_define_process_set(blue, 0, "empty") == PMIX_ERR_BAD_PARAM, "no members");
    CHECK(PMIx_server_define_process_set(NULL, 2, "nomem") == PMIX_ERR_BAD_PARAM, "NULL members");
    CHECK(PMIx_server_define_process_set(blue, 2, "ps") == PMIX_ERR_BAD_PARAM, "an nspace's name");
    char longname[PMIX_MAX_NSLEN + 8];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK(PMIx_server_define_process_set(blue, 2, longname) == PMIX_ERR_BAD_PARAM, "a long name");
    CHECK(PMIx_server_delete_process_set("nope") == PMIX_ERR_NOT_FOUND, "delete unknown");
    CHECK(PMIx_server_delete_process_set(NULL) == PMIX_ERR_BAD_PARAM, "delete NULL");
    printf("pset ok: the host's refusals\n");
    fflush(stdout);

    read_turn(turn[0], n);
    CHECK(PMIx_server_delete_process_set("blue") == PMIX_SUCCESS, "delete blue");
    read_turn(turn[0], n);
    for (int r = 0; r < n; ++r) CHECK(host_reap(pids[r]) == 0, "client %d failed", r);

    /* A job's launch sets go with it. */
    PMIx_server_deregister_nspace(ns, NULL, NULL);
    CHECK(PMIx_Get(&two, PMIX_PSET_NAMES, NULL, 0, &v) == PMIX_ERR_NOT_FOUND,
          "launch sets after deregistration");
    printf("pset ok: launch sets go with their job\n");
    for (int i = 0; i < 4; ++i) PMIX_INFO_DESTRUCT(&info[i]);
    PMIx_server_finalize();
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    alarm(90);
    if (argc > 2 && strcmp(argv[1], "client") == 0) return client_main(atoi(argv[2]));
    if (argc > 1 && strcmp(argv[1], "launch") == 0) return launch_main();
    CHECK(argc > 1 && strcmp(argv[1], "host") == 0, "usage: pset_host host|launch");
    return host_main(argv[0]);
}
