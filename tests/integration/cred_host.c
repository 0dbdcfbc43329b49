/* Credentials (server/credentials.cpp, api/credential_api.cpp,
 * tools/pmixrun/credentials.cpp; docs/security.md "Credentials").
 * usage: cred_host pmixrun   a client under `pmixrun -n 2`: rank 0 gets a
 *                            credential and hands it to rank 1 (Put/Fence/Get);
 *                            rank 1 validates it (the holder's uid, gid and
 *                            proc come back), a tampered copy is refused,
 *                            both _nb forms, PMIX_CRED_TYPE, bad arguments.
 *        cred_host none      a host embedding the server with only the
 *                            validate_credential upcall, which refuses through
 *                            its callback with a reason and checks the
 *                            PMIX_USERID/PMIX_GRPID the library added; it forks
 *                            itself as the client, whose get_credential is
 *                            PMIX_ERR_NOT_SUPPORTED (no upcall) and whose
 *                            validation is PMIX_ERR_INVALID_CRED with the reason.
 * Prints "cred ok: <what>" per check; every wait is bounded. */
#include <pmix.h>
#include <pmix_server.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host_common.h"

#define CHECK(cond, ...) HOST_CHECK("cred_host", cond, __VA_ARGS__)

static pmix_proc_t me;

static const pmix_value_t *value_of(const pmix_info_t *info, size_t n, const char *key) {
    for (size_t i = 0; info != NULL && i < n; ++i)
        if (PMIX_CHECK_KEY(&info[i], key)) return &info[i].value;
    return NULL;
}

static _Atomic int nb_done = 0;
static pmix_status_t nb_status;
static size_t nb_size;
static char nb_type[32];

static void on_credential(pmix_status_t status, pmix_byte_object_t *credential, pmix_info_t info[],
                          size_t ninfo, void *cbdata) {
    (void)cbdata;
    nb_status = status;
    nb_size = credential != NULL ? credential->size : 0;
    const pmix_value_t *t = value_of(info, ninfo, PMIX_CRED_TYPE);
    snprintf(nb_type, sizeof nb_type, "%s",
             t != NULL && t->type == PMIX_STRING ? t->data.string : "");
    atomic_store(&nb_done, 1);
}

static void on_validation(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *cbdata) {
    (void)cbdata;
    const pmix_value_t *uid = value_of(info, ninfo, PMIX_USERID);
    nb_status = status;
    nb_size = uid != NULL && uid->type == PMIX_UINT32 && uid->data.uint32 == (uint32_t)getuid();
    atomic_store(&nb_done, 1);
}

static void wait_nb(const char *what) {
    for (int i = 0; i < 30000 && !atomic_load(&nb_done); ++i) usleep(1000);
    CHECK(nb_done, "%s: no callback", what);
    nb_done = 0;
}

static int pmixrun_main(void) {
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "init");
    CHECK(PMIx_Get_credential(NULL, 0, NULL) == PMIX_ERR_BAD_PARAM, "NULL credential");
    CHECK(PMIx_Validate_credential(NULL, NULL, 0, NULL, NULL) == PMIX_ERR_BAD_PARAM,
          "validate NULL");
    if (me.rank == 0) {
        pmix_byte_object_t cred;
        pmix_status_t rc = PMIx_Get_credential(NULL, 0, &cred);
        CHECK(rc == PMIX_SUCCESS && cred.size == 40 && memcmp(cred.bytes, "PMIXRUN1", 8) == 0,
              "get: %s, %zu bytes", PMIx_Error_string(rc), cred.size);
        pmix_value_t v;
        PMIX_VALUE_LOAD(&v, &cred, PMIX_BYTE_OBJECT);
        CHECK(PMIx_Put(PMIX_GLOBAL, "test.cred", &v) == PMIX_SUCCESS, "put");
        PMIX_VALUE_DESTRUCT(&v);
        PMIX_BYTE_OBJECT_DESTRUCT(&cred);
        CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");

        /* The type directive: a list naming ours is served, one without it is not. */
        pmix_info_t type;
        PMIX_INFO_LOAD(&type, PMIX_CRED_TYPE, "munge", PMIX_STRING);
        rc = PMIx_Get_credential(&type, 1, &cred);
        CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "type munge: %s", PMIx_Error_string(rc));
        PMIX_INFO_DESTRUCT(&type);
        PMIX_INFO_LOAD(&type, PMIX_CRED_TYPE, "munge,pmixrun", PMIX_STRING);
        rc = PMIx_Get_credential_nb(&type, 1, on_credential, NULL);
        CHECK(rc == PMIX_SUCCESS, "get_nb: %s", PMIx_Error_string(rc));
        wait_nb("get_nb");
        CHECK(nb_status == PMIX_SUCCESS && nb_size == 40 && strcmp(nb_type, "pmixrun") == 0,
              "get_nb: %s, %zu bytes, type '%s'", PMIx_Error_string(nb_status), nb_size, nb_type);
        PMIX_INFO_DESTRUCT(&type);
        printf("cred ok: issued\n");
    } else {
        CHECK(PMIx_Commit() == PMIX_SUCCESS, "commit");
    }
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    CHECK(PMIx_Fence(NULL, 0, &collect, 1) == PMIX_SUCCESS, "fence");
    if (me.rank == 1) {
        pmix_proc_t zero;
        PMIX_LOAD_PROCID(&zero, me.nspace, 0);
        pmix_value_t *v = NULL;
        CHECK(PMIx_Get(&zero, "test.cred", NULL, 0, &v) == PMIX_SUCCESS &&
                  v->type == PMIX_BYTE_OBJECT,
              "get rank 0's credential");
        pmix_info_t *results = NULL;
        size_t nresults = 0;
        pmix_status_t rc = PMIx_Validate_credential(&v->data.bo, NULL, 0, &results, &nresults);
        const pmix_value_t *uid = value_of(results, nresults, PMIX_USERID);
        const pmix_value_t *gid = value_of(results, nresults, PMIX_GRPID);
        const pmix_value_t *who = value_of(results, nresults, PMIX_PROCID);
        CHECK(rc == PMIX_SUCCESS && uid != NULL && uid->data.uint32 == (uint32_t)getuid() &&
                  gid != NULL && gid->data.uint32 == (uint32_t)getgid() && who != NULL &&
                  who->type == PMIX_PROC && who->data.proc->rank == 0,
              "validate: %s", PMIx_Error_string(rc));
        PMIX_INFO_FREE(results, nresults);
        printf("cred ok: validated with the holder's identity\n");

        rc = PMIx_Validate_credential_nb(&v->data.bo, NULL, 0, on_validation, NULL);
        CHECK(rc == PMIX_SUCCESS, "validate_nb: %s", PMIx_Error_string(rc));
        wait_nb("validate_nb");
        CHECK(nb_status == PMIX_SUCCESS && nb_size == 1, "validate_nb: %s",
              PMIx_Error_string(nb_status));

        v->data.bo.bytes[20] ^= 0x5a; /* tampered */
        rc = PMIx_Validate_credential(&v->data.bo, NULL, 0, &results, &nresults);
        CHECK(rc == PMIX_ERR_INVALID_CRED, "tampered: %s", PMIx_Error_string(rc));
        PMIX_INFO_FREE(results, nresults);
        pmix_byte_object_t empty = {NULL, 0};
        rc = PMIx_Validate_credential(&empty, NULL, 0, &results, &nresults);
        CHECK(rc == PMIX_ERR_INVALID_CRED, "empty: %s", PMIx_Error_string(rc));
        PMIX_INFO_FREE(results, nresults);
        PMIX_VALUE_RELEASE(v);
        printf("cred ok: forged ones refused\n");
    }
    fflush(stdout);
    CHECK(PMIx_Fence(NULL, 0, NULL, 0) == PMIX_SUCCESS, "last fence");
    PMIx_Finalize(NULL, 0);
    return 0;
}

static int none_client(void) {
    CHECK(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS, "init");
    pmix_byte_object_t cred;
    pmix_status_t rc = PMIx_Get_credential(NULL, 0, &cred);
    CHECK(rc == PMIX_ERR_NOT_SUPPORTED, "get without upcall: %s", PMIx_Error_string(rc));
    pmix_byte_object_t some = {(char *)"abc", 3};
    pmix_info_t *results = NULL;
    size_t nresults = 0;
    /* A forged uid among the directives: the host must see the real one. */
    pmix_info_t forged;
    uint32_t root = 0;
    PMIX_INFO_LOAD(&forged, PMIX_USERID, &root, PMIX_UINT32);
    rc = PMIx_Validate_credential(&some, &forged, 1, &results, &nresults);
    const pmix_value_t *why = value_of(results, nresults, PMIX_EVENT_TEXT_MESSAGE);
    CHECK(rc == PMIX_ERR_INVALID_CRED && why != NULL && why->type == PMIX_STRING &&
              strcmp(why->data.string, "3 bytes from the right uid and gid") == 0,
          "validate refused by the host: %s", PMIx_Error_string(rc));
    PMIX_INFO_FREE(results, nresults);
    PMIX_INFO_DESTRUCT(&forged);
    printf("cred ok: no get upcall, not supported; validation refused by the host\n");
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 0;
}

/* The host's validate_credential: refuses every credential, saying what it saw. */
static pmix_status_t on_validate(const pmix_proc_t *proc, const pmix_byte_object_t *cred,
                                 const pmix_info_t directives[], size_t ndirs,
                                 pmix_validation_cbfunc_t cbfunc, void *cbdata) {
    (void)proc;
    const pmix_value_t *uid = value_of(directives, ndirs, PMIX_USERID);
    const pmix_value_t *gid = value_of(directives, ndirs, PMIX_GRPID);
    size_t uids = 0; /* exactly one PMIX_USERID: the client's forged one replaced */
    for (size_t i = 0; i < ndirs; ++i) uids += PMIX_CHECK_KEY(&directives[i], PMIX_USERID);
    const int ids = uids == 1 && uid->type == PMIX_UINT32 &&
                    uid->data.uint32 == (uint32_t)getuid() && gid != NULL &&
                    gid->type == PMIX_UINT32 && gid->data.uint32 == (uint32_t)getgid();
    char text[64];
    snprintf(text, sizeof text, "%zu bytes from the %s uid and gid", cred->size,
             ids ? "right" : "wrong");
    pmix_info_t why;
    PMIX_INFO_LOAD(&why, PMIX_EVENT_TEXT_MESSAGE, text, PMIX_STRING);
    cbfunc(PMIX_ERR_INVALID_CRED, &why, 1, cbdata);
    PMIX_INFO_DESTRUCT(&why);
    return PMIX_SUCCESS;
}

int main(int argc, char **argv) {
    alarm(90); /* a hang is a failure, not a stuck test */
    if (argc > 1 && strcmp(argv[1], "pmixrun") == 0) return pmixrun_main();
    if (argc > 1 && strcmp(argv[1], "client") == 0) return none_client();
    CHECK(argc > 1 && strcmp(argv[1], "none") == 0, "usage: cred_host pmixrun|none");
    pmix_server_module_t module;
    memset(&module, 0, sizeof module);
    module.validate_credential = on_validate;
    CHECK(PMIx_server_init(&module, NULL, 0) == PMIX_SUCCESS, "server init");
    CHECK(host_register_job("cr", 1) == PMIX_SUCCESS, "register job");
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "cr", 0);
    char **env = NULL;
    CHECK(PMIx_server_setup_fork(&p, &env) == PMIX_SUCCESS, "setup_fork");
    pid_t pid = fork();
    if (pid == 0) {
        for (char **e = env; e != NULL && *e != NULL; ++e) putenv(*e);
        execl("/proc/self/exe", argv[0], "client", (char *)NULL);
        _exit(127);
    }
    for (char **e = env; e != NULL && *e != NULL; ++e) free(*e);
    free(env);
    CHECK(host_reap(pid) == 0, "the client failed");
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, "cr");
    PMIx_server_deregister_nspace(ns, NULL, NULL);
    PMIx_server_finalize();
    return 0;
}
