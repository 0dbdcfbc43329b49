/* A minimal host embedding the server API: the launch-time set-up calls.
 *
 * PMIx_server_setup_application with PMIX_SETUP_APP_ENVARS answers, through
 * its callback, a PMIX_SET_ENVAR for the PMIX_MCA_* variable of this
 * process; PMIx_server_setup_local_support takes that answer; setup_fork of a
 * process of the job then carries the variable. Every callback comes exactly
 * once (counted after PMIx_server_finalize, which runs what is still queued). */
#include <pmix_server.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int app_calls, local_calls;
static pmix_info_t *answer;
static size_t nanswer;
static pmix_op_cbfunc_t answer_release;
static void *answer_release_data;

#define CHECK(cond, ...)                     \
    do {                                     \
        if (!(cond)) {                       \
            fprintf(stderr, "setup_host: "); \
            fprintf(stderr, __VA_ARGS__);    \
            fprintf(stderr, "\n");           \
            exit(1);                         \
        }                                    \
    } while (0)

static void on_app(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *cbdata,
                   pmix_op_cbfunc_t release, void *release_data) {
    (void)cbdata;
    pthread_mutex_lock(&lock);
    ++app_calls;
    CHECK(status == PMIX_SUCCESS, "setup_application: %s", PMIx_Error_string(status));
    answer = info;
    nanswer = ninfo;
    answer_release = release;
    answer_release_data = release_data;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void on_local(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    pthread_mutex_lock(&lock);
    ++local_calls;
    CHECK(status == PMIX_SUCCESS, "setup_local_support: %s", PMIx_Error_string(status));
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void wait_for(int *counter) {
    pthread_mutex_lock(&lock);
    while (*counter == 0) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

int main(void) {
    setenv("PMIX_MCA_setup_host_test", "carried", 1);
    /* network (issue 16): the fabric libraries' variables travel too
     * (server_base_setup_envar_prefixes), others do not. */
    setenv("FI_PROVIDER", "tcp", 1);
    setenv("UCX_TLS", "tcp", 1);
    setenv("SETUP_HOST_NOT_CARRIED", "no", 1);
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    pmix_status_t rc = PMIx_server_init(&module, NULL, 0);
    CHECK(rc == PMIX_SUCCESS, "server_init: %s", PMIx_Error_string(rc));

    pmix_nspace_t ns, other;
    PMIX_LOAD_NSPACE(ns, "setup-host-job");
    PMIX_LOAD_NSPACE(other, "other-job");
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, ns, 0);
    rc = PMIx_server_register_client(&proc, getuid(), getgid(), NULL, NULL, NULL);
    CHECK(rc == PMIX_OPERATION_SUCCEEDED || rc == PMIX_SUCCESS, "register_client: %s",
          PMIx_Error_string(rc));
    uint32_t one = 1;
    pmix_info_t jinfo;
    PMIX_INFO_LOAD(&jinfo, PMIX_JOB_SIZE, &one, PMIX_UINT32);
    rc = PMIx_server_register_nspace(ns, 1, &jinfo, 1, NULL, NULL);
    CHECK(rc == PMIX_OPERATION_SUCCEEDED || rc == PMIX_SUCCESS, "register_nspace: %s",
          PMIx_Error_string(rc));

    /* --- setup_application --- */
    char *node_map = NULL, *proc_map = NULL;
    PMIx_generate_regex("localhost", &node_map);
    PMIx_generate_ppn("0", &proc_map);
    pmix_info_t req[3];
    bool yes = true;
    PMIX_INFO_LOAD(&req[0], PMIX_NODE_MAP, node_map, PMIX_STRING);
    PMIX_INFO_LOAD(&req[1], PMIX_PROC_MAP, proc_map, PMIX_STRING);
    PMIX_INFO_LOAD(&req[2], PMIX_SETUP_APP_ENVARS, &yes, PMIX_BOOL);
    rc = PMIx_server_setup_application(ns, req, 3, on_app, NULL);
    CHECK(rc == PMIX_SUCCESS, "setup_application returned %s", PMIx_Error_string(rc));
    wait_for(&app_calls);
    int found = 0;
    for (size_t i = 0; i < nanswer; ++i) {
        if (PMIX_CHECK_KEY(&answer[i], PMIX_SET_ENVAR) && answer[i].value.type == PMIX_ENVAR &&
            strcmp(answer[i].value.data.envar.envar, "PMIX_MCA_setup_host_test") == 0 &&
            strcmp(answer[i].value.data.envar.value, "carried") == 0) {
            found = 1;
        }
    }
    CHECK(found, "setup_application's answer (%zu entries) lacks PMIX_MCA_setup_host_test",
          nanswer);
    int fabric_vars = 0;
    for (size_t i = 0; i < nanswer; ++i) {
        if (!PMIX_CHECK_KEY(&answer[i], PMIX_SET_ENVAR) || answer[i].value.type != PMIX_ENVAR)
            continue;
        const char *name = answer[i].value.data.envar.envar;
        if (strcmp(name, "FI_PROVIDER") == 0 || strcmp(name, "UCX_TLS") == 0) ++fabric_vars;
        CHECK(strcmp(name, "SETUP_HOST_NOT_CARRIED") != 0, "SETUP_HOST_NOT_CARRIED carried");
    }
    CHECK(fabric_vars == 2, "%d of FI_PROVIDER, UCX_TLS carried", fabric_vars);

    /* --- setup_local_support with that answer, then release it --- */
    rc = PMIx_server_setup_local_support(ns, answer, nanswer, on_local, NULL);
    CHECK(rc == PMIX_SUCCESS, "setup_local_support returned %s", PMIx_Error_string(rc));
    wait_for(&local_calls);
    CHECK(answer_release != NULL, "setup_application gave no release function");
    answer_release(PMIX_SUCCESS, answer_release_data);
    rc = PMIx_server_setup_local_support(other, NULL, 0, NULL, NULL);
    CHECK(rc == PMIX_OPERATION_SUCCEEDED, "blocking setup_local_support returned %s",
          PMIx_Error_string(rc));

    /* --- the child's environment carries the variable --- */
    char **env = calloc(1, sizeof(char *));
    rc = PMIx_server_setup_fork(&proc, &env);
    CHECK(rc == PMIX_SUCCESS, "setup_fork: %s", PMIx_Error_string(rc));
    int carried = 0;
    for (char **e = env; *e != NULL; ++e) {
        if (strcmp(*e, "PMIX_MCA_setup_host_test=carried") == 0) carried = 1;
        free(*e);
    }
    free(env);
    CHECK(carried, "setup_fork's environment lacks PMIX_MCA_setup_host_test=carried");

    PMIx_server_deregister_client(&proc, NULL, NULL);
    PMIx_server_deregister_nspace(ns, NULL, NULL);
    PMIx_server_finalize();
    CHECK(app_calls == 1, "setup_application's callback ran %d times", app_calls);
    CHECK(local_calls == 1, "setup_local_support's callback ran %d times", local_calls);
    for (int i = 0; i < 3; ++i) PMIX_INFO_DESTRUCT(&req[i]);
    free(node_map);
    free(proc_map);
    printf("setup ok\n");
    return 0;
}
