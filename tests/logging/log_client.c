/* PMIx_Log from a client of pmixrun (public API only); rank 0 logs, the
 * others only init and finalize unless the mode says otherwise.
 *
 *   log_client partial        STDOUT + JOB_RECORD: PMIX_ERR_PARTIAL_SUCCESS
 *   log_client nothing        JOB_RECORD only: an error, not success
 *   log_client syslog TEXT    SYSLOG TEXT at LOG_WARNING, LOCAL_SYSLOG TEXT-local at
 *                             the default priority: success
 *   log_client global TEXT    GLOBAL_SYSLOG TEXT (pmixrun is no gateway: to the host)
 *   log_client unreach        SYSLOG to an unreachable socket: PMIX_ERR_UNREACH
 *   log_client once_syslog    LOG_ONCE [SYSLOG once-first, STDOUT once-second]: syslog only
 *   log_client once_skip      LOG_ONCE [JOB_RECORD, SYSLOG (unreachable), STDOUT
 *                             once-third, STDERR once-fourth]: stdout only, success
 *   log_client syslog_partial SYSLOG (unreachable) + STDOUT: PMIX_ERR_PARTIAL_SUCCESS
 *   log_client badpri         SYSLOG with PMIX_LOG_SYSLOG_PRI "high": PMIX_ERR_BAD_PARAM
 *   log_client tool TEXT      as a tool (PMIx_tool_init from pmixrun's environment):
 *                             SYSLOG TEXT; prints its identity
 *   log_client email ...      see email_mode()
 *   log_client email_fence ... rank 0 sends an email that hangs; ranks 1 and 2 fence
 * Prints "log <mode> ok" on success (rank 0, or the tool), "log FAILED: ..." and
 * exits 1 otherwise. */
#include <pmix.h>
#include <pmix_tool.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static void fail(const char *what, pmix_status_t rc) {
    printf("log FAILED: %s: %s (%d)\n", what, PMIx_Error_string(rc), rc);
    fflush(stdout);
    exit(1);
}

static void expect(const char *what, pmix_status_t got, pmix_status_t want) {
    if (got != want) {
        printf("log FAILED: %s: got %s (%d), expected %s\n", what, PMIx_Error_string(got), got,
               PMIx_Error_string(want));
        fflush(stdout);
        exit(1);
    }
}

static void destruct(pmix_info_t *info, size_t n) {
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
}

/* PMIx_Log, then releases data and directives (the infos own copies). */
static pmix_status_t log_all(pmix_info_t *data, size_t ndata, pmix_info_t *dirs, size_t ndirs) {
    pmix_status_t rc = PMIx_Log(data, ndata, dirs, ndirs);
    destruct(data, ndata);
    destruct(dirs, ndirs);
    return rc;
}

static pmix_status_t log1(const char *key, const char *text, pmix_info_t *dirs, size_t ndirs) {
    pmix_info_t data;
    PMIX_INFO_LOAD(&data, key, text, PMIX_STRING);
    pmix_status_t rc = PMIx_Log(&data, 1, dirs, ndirs);
    PMIX_INFO_DESTRUCT(&data);
    return rc;
}

static void ok(const char *mode) {
    printf("log %s ok\n", mode);
    fflush(stdout);
}

/* email TO SUBJECT BODY EXPECT: one PMIX_LOG_EMAIL entry (TO "-": no
 * recipient; BODY "-": no message; BODY "msg:..." given as PMIX_LOG_MSG);
 * EXPECT is success|unreach|timeout|error|badparam. */
static int email_mode(int argc, char **argv) {
    if (argc != 6) fail("usage: email TO SUBJECT BODY EXPECT", PMIX_ERR_BAD_PARAM);
    pmix_info_t fields[3];
    size_t n = 0;
    if (strcmp(argv[2], "-") != 0)
        PMIX_INFO_LOAD(&fields[n++], PMIX_LOG_EMAIL_ADDR, argv[2], PMIX_STRING);
    PMIX_INFO_LOAD(&fields[n++], PMIX_LOG_EMAIL_SUBJECT, argv[3], PMIX_STRING);
    if (strncmp(argv[4], "msg:", 4) == 0) {
        PMIX_INFO_LOAD(&fields[n++], PMIX_LOG_MSG, argv[4] + 4, PMIX_STRING);
    } else if (strcmp(argv[4], "-") != 0) {
        PMIX_INFO_LOAD(&fields[n++], PMIX_LOG_EMAIL_MSG, argv[4], PMIX_STRING);
    }
    pmix_data_array_t arr = {.type = PMIX_INFO, .size = n, .array = fields};
    pmix_info_t data;
    PMIX_INFO_LOAD(&data, PMIX_LOG_EMAIL, &arr, PMIX_DATA_ARRAY);
    pmix_status_t rc = log_all(&data, 1, NULL, 0);
    destruct(fields, n);
    const char *want = argv[5];
    int good = (strcmp(want, "success") == 0 && rc == PMIX_SUCCESS) ||
               (strcmp(want, "unreach") == 0 && rc == PMIX_ERR_UNREACH) ||
               (strcmp(want, "timeout") == 0 && rc == PMIX_ERR_TIMEOUT) ||
               (strcmp(want, "badparam") == 0 && rc == PMIX_ERR_BAD_PARAM) ||
               (strcmp(want, "error") == 0 && rc != PMIX_SUCCESS && rc != PMIX_ERR_UNREACH &&
                rc != PMIX_ERR_TIMEOUT && rc != PMIX_ERR_BAD_PARAM);
    if (!good) {
        printf("log FAILED: email expected %s, got %s (%d)\n", want, PMIx_Error_string(rc), rc);
        fflush(stdout);
        exit(1);
    }
    printf("log email %s ok\n", want);
    fflush(stdout);
    return 0;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int email_done = 0;
static pmix_status_t email_status = PMIX_SUCCESS;

static void email_cb(pmix_status_t status, void *cbdata) {
    (void)cbdata;
    pthread_mutex_lock(&lock);
    email_status = status;
    email_done = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

/* Rank 0: PMIx_Log_nb of an email to a server that accepts and stays silent;
 * ranks 1 and 2: once the silent server has accepted that connection (the
 * driver then creates $PMIXPP_TEST_GO_FILE), a fence between the two of
 * them, which must complete while the send hangs. The driver closes the
 * silent server's connections only once it saw both "fence ok" lines, so
 * rank 0's send fails with a communication error; had the send blocked the
 * server (plog_email_timeout > the time the test takes otherwise), the fence
 * would complete only after the send timed out, and rank 0 would see
 * PMIX_ERR_TIMEOUT instead. */
static int email_fence_mode(const pmix_proc_t *me, const char *to) {
    if (me->rank == 0) {
        pmix_info_t fields[3];
        PMIX_INFO_LOAD(&fields[0], PMIX_LOG_EMAIL_ADDR, to, PMIX_STRING);
        PMIX_INFO_LOAD(&fields[1], PMIX_LOG_EMAIL_SUBJECT, "hangs", PMIX_STRING);
        PMIX_INFO_LOAD(&fields[2], PMIX_LOG_MSG, "never delivered", PMIX_STRING);
        pmix_data_array_t arr = {.type = PMIX_INFO, .size = 3, .array = fields};
        pmix_info_t data;
        PMIX_INFO_LOAD(&data, PMIX_LOG_EMAIL, &arr, PMIX_DATA_ARRAY);
        pmix_status_t rc = PMIx_Log_nb(&data, 1, NULL, 0, email_cb, NULL);
        if (rc != PMIX_SUCCESS) fail("PMIx_Log_nb", rc);
        destruct(&data, 1); /* PMIx_Log_nb copied what it needs */
        destruct(fields, 3);
        printf("email sent\n");
        fflush(stdout);
        pthread_mutex_lock(&lock);
        while (!email_done) pthread_cond_wait(&cond, &lock); /* bounded by pmixrun --timeout */
        pthread_mutex_unlock(&lock);
        if (email_status == PMIX_SUCCESS)
            fail("the email to a silent server succeeded", email_status);
        printf("log email_fence ok: %s\n", PMIx_Error_string(email_status));
        fflush(stdout);
        return 0;
    }
    const char *go = getenv("PMIXPP_TEST_GO_FILE");
    if (go == NULL) fail("PMIXPP_TEST_GO_FILE not set", PMIX_ERR_BAD_PARAM);
    for (int i = 0; access(go, F_OK) != 0; ++i) { /* bounded: 30 s */
        if (i == 3000) fail("the silent server never got the connection", PMIX_ERR_TIMEOUT);
        usleep(10000);
    }
    pmix_proc_t procs[2];
    PMIX_LOAD_PROCID(&procs[0], me->nspace, 1);
    PMIX_LOAD_PROCID(&procs[1], me->nspace, 2);
    pmix_status_t rc = PMIx_Fence(procs, 2, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("fence of ranks 1 and 2", rc);
    printf("fence ok rank %u\n", me->rank);
    fflush(stdout);
    return 0;
}

static int tool_mode(const char *text) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_tool_init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_tool_init", rc);
    printf("tool identity %s:%u\n", me.nspace, me.rank);
    fflush(stdout);
    /* The default text names the tool's identity, so that the test can check
     * that the record's source is that identity (whatever the tool is: its own
     * nspace, or the job's rank when a launcher started it). */
    char own[PMIX_MAX_NSLEN + 64];
    if (text == NULL) {
        snprintf(own, sizeof own, "tool %s:%u says hello", me.nspace, me.rank);
        text = own;
    }
    expect("tool syslog", log1(PMIX_LOG_SYSLOG, text, NULL, 0), PMIX_SUCCESS);
    PMIx_tool_finalize();
    ok("tool");
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: log_client MODE [ARGS]\n");
        return 2;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "tool") == 0) return tool_mode(argc > 2 ? argv[2] : NULL);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_Init", rc);
    if (strcmp(mode, "email_fence") == 0) {
        int r = email_fence_mode(&me, argc > 2 ? argv[2] : "nobody@example.org");
        PMIx_Finalize(NULL, 0);
        return r;
    }
    if (me.rank != 0) {
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    if (strcmp(mode, "partial") == 0) {
        pmix_info_t data[2];
        PMIX_INFO_LOAD(&data[0], PMIX_LOG_STDOUT, "partial stdout line", PMIX_STRING);
        PMIX_INFO_LOAD(&data[1], PMIX_LOG_JOB_RECORD, "no job record here", PMIX_STRING);
        expect("partial", log_all(data, 2, NULL, 0), PMIX_ERR_PARTIAL_SUCCESS);
    } else if (strcmp(mode, "nothing") == 0) {
        rc = log1(PMIX_LOG_JOB_RECORD, "no job record here", NULL, 0);
        if (rc == PMIX_SUCCESS || rc == PMIX_ERR_PARTIAL_SUCCESS) fail("nothing delivered", rc);
    } else if (strcmp(mode, "syslog") == 0 && argc > 2) {
        pmix_info_t pri;
        int warning = LOG_WARNING;
        PMIX_INFO_LOAD(&pri, PMIX_LOG_SYSLOG_PRI, &warning, PMIX_INT);
        expect("syslog", log1(PMIX_LOG_SYSLOG, argv[2], &pri, 1), PMIX_SUCCESS);
        destruct(&pri, 1);
        char local[256];
        snprintf(local, sizeof local, "%s-local", argv[2]);
        expect("local syslog", log1(PMIX_LOG_LOCAL_SYSLOG, local, NULL, 0), PMIX_SUCCESS);
    } else if (strcmp(mode, "global") == 0 && argc > 2) {
        /* pmixrun is no gateway and its log upcall has no global syslog. */
        rc = log1(PMIX_LOG_GLOBAL_SYSLOG, argv[2], NULL, 0);
        expect("global syslog on a non-gateway server", rc, PMIX_ERR_NOT_SUPPORTED);
    } else if (strcmp(mode, "unreach") == 0) {
        expect("syslog to an unreachable socket", log1(PMIX_LOG_SYSLOG, "lost", NULL, 0),
               PMIX_ERR_UNREACH);
    } else if (strcmp(mode, "badpri") == 0) {
        pmix_info_t pri;
        PMIX_INFO_LOAD(&pri, PMIX_LOG_SYSLOG_PRI, "high", PMIX_STRING);
        expect("syslog with a string priority", log1(PMIX_LOG_SYSLOG, "x", &pri, 1),
               PMIX_ERR_BAD_PARAM);
        destruct(&pri, 1);
    } else if (strcmp(mode, "once_syslog") == 0) {
        pmix_info_t data[2], once;
        PMIX_INFO_LOAD(&data[0], PMIX_LOG_SYSLOG, "once-first", PMIX_STRING);
        PMIX_INFO_LOAD(&data[1], PMIX_LOG_STDOUT, "once-second", PMIX_STRING);
        bool yes = true;
        PMIX_INFO_LOAD(&once, PMIX_LOG_ONCE, &yes, PMIX_BOOL);
        expect("once, syslog first", log_all(data, 2, &once, 1), PMIX_SUCCESS);
    } else if (strcmp(mode, "once_skip") == 0) {
        pmix_info_t data[4], once;
        PMIX_INFO_LOAD(&data[0], PMIX_LOG_JOB_RECORD, "once-first", PMIX_STRING);
        PMIX_INFO_LOAD(&data[1], PMIX_LOG_SYSLOG, "once-second", PMIX_STRING);
        PMIX_INFO_LOAD(&data[2], PMIX_LOG_STDOUT, "once-third", PMIX_STRING);
        PMIX_INFO_LOAD(&data[3], PMIX_LOG_STDERR, "once-fourth", PMIX_STRING);
        bool yes = true;
        PMIX_INFO_LOAD(&once, PMIX_LOG_ONCE, &yes, PMIX_BOOL);
        expect("once, skipping two failing channels", log_all(data, 4, &once, 1), PMIX_SUCCESS);
    } else if (strcmp(mode, "syslog_partial") == 0) {
        pmix_info_t data[2];
        PMIX_INFO_LOAD(&data[0], PMIX_LOG_SYSLOG, "lost", PMIX_STRING);
        PMIX_INFO_LOAD(&data[1], PMIX_LOG_STDOUT, "delivered to stdout", PMIX_STRING);
        expect("syslog unreachable + stdout", log_all(data, 2, NULL, 0), PMIX_ERR_PARTIAL_SUCCESS);
    } else if (strcmp(mode, "email") == 0) {
        email_mode(argc, argv);
    } else {
        fail("unknown mode", PMIX_ERR_BAD_PARAM);
    }
    if (strcmp(mode, "email") != 0) ok(mode);
    PMIx_Finalize(NULL, 0);
    return 0;
}
