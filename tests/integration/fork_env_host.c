/* PMIx_server_setup_fork from the host's threads (issue 17; startup area).
 *
 * setup_fork copies a per-namespace template in the caller's thread
 * (framework/server/fork_env.hpp). This host checks that what it gives is
 * what a child needs, and stays so while the server changes:
 *   1. ranks 0-3 of a registered job: PMIX_NAMESPACE, PMIX_RANK, the five
 *      PMIX_SERVER_URI* variables (one value), PMIXPP_JOB_SECRET,
 *      PMIX_VERSION 4.2.2, PMIX_SECURITY_MODE native; every other variable the
 *      same for every rank;
 *   2. a thread calls setup_fork for ranks 0-3 in a loop while the main
 *      thread registers, sets up and deregisters other namespaces (which drops
 *      the templates): every answer is the one of step 1 (run it under TSan
 *      to see no race);
 *   3. setup_local_support of the job with a PMIX_SET_ENVAR: the next
 *      setup_fork carries it;
 *   4. the job deregistered and registered again has a new secret: the next
 *      setup_fork gives the new one (a kept template would give the old), and
 *      a child started with that environment initializes, gets its job size
 *      and finalizes: the environment is a working one.
 * Prints "fork_env host ok" and "fork_env client ok". */
#include <pmix.h>
#include <pmix_server.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(cond, ...) HOST_CHECK("fork_env_host", cond, __VA_ARGS__)

#define NRANKS 4
#define LOOPS 300
#define OTHERS 40

static const char *const uri_vars[] = {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3",
                                       "PMIX_SERVER_URI21", "PMIX_SERVER_URI2"};

static char **fork_env(const char *nspace, pmix_rank_t rank) {
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, nspace, rank);
    char **env = calloc(1, sizeof(char *));
    CHECK(env != NULL, "calloc");
    pmix_status_t rc = PMIx_server_setup_fork(&p, &env);
    CHECK(rc == PMIX_SUCCESS, "setup_fork %s.%u: %s", nspace, rank, PMIx_Error_string(rc));
    return env;
}

static void free_env(char **env) {
    for (char **e = env; *e != NULL; ++e) free(*e);
    free(env);
}

static size_t env_count(char **env) {
    size_t n = 0;
    while (env[n] != NULL) ++n;
    return n;
}

static const char *env_get(char **env, const char *name) {
    const size_t len = strlen(name);
    for (char **e = env; *e != NULL; ++e)
        if (strncmp(*e, name, len) == 0 && (*e)[len] == '=') return *e + len + 1;
    return NULL;
}

/* Whether `a` and `b` hold the same variables with the same values, PMIX_RANK
 * aside. */
static int same_but_rank(char **a, char **b) {
    if (env_count(a) != env_count(b)) return 0;
    for (char **e = a; *e != NULL; ++e) {
        if (strncmp(*e, "PMIX_RANK=", 10) == 0) continue;
        const char *eq = strchr(*e, '=');
        if (eq == NULL) return 0;
        char name[256];
        const size_t len = (size_t)(eq - *e);
        if (len >= sizeof name) return 0;
        memcpy(name, *e, len);
        name[len] = '\0';
        const char *other = env_get(b, name);
        if (other == NULL || strcmp(other, eq + 1) != 0) return 0;
    }
    return 1;
}

/* Step 1's checks of one rank's environment. */
static void check_env(char **env, const char *nspace, pmix_rank_t rank) {
    const char *v = env_get(env, "PMIX_NAMESPACE");
    CHECK(v != NULL && strcmp(v, nspace) == 0, "PMIX_NAMESPACE %s, not %s", v ? v : "unset",
          nspace);
    char want[32];
    snprintf(want, sizeof want, "%u", rank);
    v = env_get(env, "PMIX_RANK");
    CHECK(v != NULL && strcmp(v, want) == 0, "PMIX_RANK %s, not %s", v ? v : "unset", want);
    const char *uri = env_get(env, uri_vars[0]);
    CHECK(uri != NULL && strstr(uri, ";") != NULL, "%s: %s", uri_vars[0], uri ? uri : "unset");
    for (size_t i = 1; i < sizeof uri_vars / sizeof uri_vars[0]; ++i) {
        v = env_get(env, uri_vars[i]);
        CHECK(v != NULL && strcmp(v, uri) == 0, "%s: %s, not %s", uri_vars[i], v ? v : "unset",
              uri);
    }
    v = env_get(env, "PMIXPP_JOB_SECRET");
    CHECK(v != NULL && strlen(v) >= 16, "PMIXPP_JOB_SECRET: %s", v ? v : "unset");
    v = env_get(env, "PMIX_VERSION");
    CHECK(v != NULL && strcmp(v, "4.2.2") == 0, "PMIX_VERSION: %s", v ? v : "unset");
    v = env_get(env, "PMIX_SECURITY_MODE");
    CHECK(v != NULL && strcmp(v, "native") == 0, "PMIX_SECURITY_MODE: %s", v ? v : "unset");
}

/* Step 2: the thread that calls setup_fork while namespaces come and go. */
static char **expected[NRANKS];
static int mismatches;

static void *forker(void *arg) {
    (void)arg;
    for (int i = 0; i < LOOPS; ++i) {
        const pmix_rank_t r = (pmix_rank_t)(i % NRANKS);
        char **env = fork_env("fe", r);
        char want[32];
        snprintf(want, sizeof want, "%u", r);
        const char *rank = env_get(env, "PMIX_RANK");
        if (!same_but_rank(env, expected[r]) || rank == NULL || strcmp(rank, want) != 0)
            ++mismatches;
        free_env(env);
    }
    return NULL;
}

static int client_main(void) {
    alarm(30);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "client init: %s", PMIx_Error_string(rc));
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val);
    CHECK(
        rc == PMIX_SUCCESS && val != NULL && val->type == PMIX_UINT32 && val->data.uint32 == NRANKS,
        "client: PMIX_JOB_SIZE: %s", PMIx_Error_string(rc));
    PMIX_VALUE_RELEASE(val);
    printf("fork_env client ok %s.%u\n", me.nspace, me.rank);
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "client") == 0) return client_main();
    alarm(120); /* a hang is a failure, not a stuck test */
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    pmix_status_t rc = PMIx_server_init(&module, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "server init: %s", PMIx_Error_string(rc));
    rc = host_register_job("fe", NRANKS);
    CHECK(rc == PMIX_SUCCESS, "register fe: %s", PMIx_Error_string(rc));

    /* 1. what every rank gets */
    for (int r = 0; r < NRANKS; ++r) {
        expected[r] = fork_env("fe", (pmix_rank_t)r);
        check_env(expected[r], "fe", (pmix_rank_t)r);
        CHECK(same_but_rank(expected[r], expected[0]),
              "rank %d's environment differs from rank "
              "0's beyond PMIX_RANK",
              r);
    }
    /* twice the same rank: the same */
    char **again = fork_env("fe", 1);
    CHECK(same_but_rank(again, expected[1]) &&
              strcmp(env_get(again, "PMIX_RANK"), env_get(expected[1], "PMIX_RANK")) == 0,
          "a second setup_fork of rank 1 differs");
    free_env(again);

    /* 2. setup_fork from another thread while namespaces come and go */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, forker, NULL) == 0, "pthread_create");
    for (int i = 0; i < OTHERS; ++i) {
        char name[PMIX_MAX_NSLEN + 1];
        snprintf(name, sizeof name, "other-%d", i);
        rc = host_register_job(name, 1);
        CHECK(rc == PMIX_SUCCESS, "register %s: %s", name, PMIx_Error_string(rc));
        pmix_nspace_t ns;
        PMIX_LOAD_NSPACE(ns, name);
        pmix_envar_t envar = {"FORK_ENV_OTHER", "yes", ':'};
        pmix_info_t set;
        PMIX_INFO_LOAD(&set, PMIX_SET_ENVAR, &envar, PMIX_ENVAR);
        rc = PMIx_server_setup_local_support(ns, &set, 1, NULL, NULL);
        CHECK(host_registered(rc), "setup_local_support %s: %s", name, PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&set);
        char **env = fork_env(name, 0);
        const char *v = env_get(env, "FORK_ENV_OTHER");
        CHECK(v != NULL && strcmp(v, "yes") == 0, "%s's child lacks FORK_ENV_OTHER=yes", name);
        CHECK(strcmp(env_get(env, "PMIXPP_JOB_SECRET"), env_get(expected[0], "PMIXPP_JOB_SECRET")),
              "%s has fe's secret", name);
        free_env(env);
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, name, 0);
        PMIx_server_deregister_client(&p, NULL, NULL);
        PMIx_server_deregister_nspace(ns, NULL, NULL);
    }
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    CHECK(mismatches == 0, "%d of %d setup_fork answers from the other thread differed", mismatches,
          LOOPS);

    /* 3. a PMIX_SET_ENVAR given after the first setup_fork */
    pmix_nspace_t fe;
    PMIX_LOAD_NSPACE(fe, "fe");
    pmix_envar_t envar = {"FORK_ENV_SET", "later", ':'};
    pmix_info_t set;
    PMIX_INFO_LOAD(&set, PMIX_SET_ENVAR, &envar, PMIX_ENVAR);
    rc = PMIx_server_setup_local_support(fe, &set, 1, NULL, NULL);
    CHECK(host_registered(rc), "setup_local_support fe: %s", PMIx_Error_string(rc));
    PMIX_INFO_DESTRUCT(&set);
    char **env = fork_env("fe", 2);
    const char *v = env_get(env, "FORK_ENV_SET");
    CHECK(v != NULL && strcmp(v, "later") == 0, "fe's child lacks FORK_ENV_SET=later (%s)",
          v ? v : "unset");
    check_env(env, "fe", 2);
    free_env(env);

    /* 4. the job again: a new secret, and a child that works with it */
    char old_secret[512];
    snprintf(old_secret, sizeof old_secret, "%s", env_get(expected[0], "PMIXPP_JOB_SECRET"));
    for (int r = 0; r < NRANKS; ++r) {
        pmix_proc_t p;
        PMIX_LOAD_PROCID(&p, "fe", (pmix_rank_t)r);
        PMIx_server_deregister_client(&p, NULL, NULL);
    }
    PMIx_server_deregister_nspace(fe, NULL, NULL);
    rc = host_register_job("fe", NRANKS);
    CHECK(rc == PMIX_SUCCESS, "register fe again: %s", PMIx_Error_string(rc));
    env = fork_env("fe", 3);
    check_env(env, "fe", 3);
    CHECK(strcmp(env_get(env, "PMIXPP_JOB_SECRET"), old_secret) != 0,
          "the job registered again still has its old secret in setup_fork");
    CHECK(env_get(env, "FORK_ENV_SET") == NULL,
          "the job registered again still has its old PMIX_SET_ENVAR in setup_fork");
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        for (char **e = env; *e != NULL; ++e) putenv(*e);
        execl("/proc/self/exe", argv[0], "client", (char *)NULL);
        _exit(127);
    }
    const int status = host_reap(pid);
    CHECK(status == 0, "the child with the new environment ended with %d", status);
    free_env(env);

    for (int r = 0; r < NRANKS; ++r) free_env(expected[r]);
    PMIx_server_deregister_nspace(fe, NULL, NULL);
    PMIx_server_finalize();
    printf("fork_env host ok\n");
    return 0;
}
