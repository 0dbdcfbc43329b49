/* Job control under pmixrun (2 ranks). usage: jobctl_client kill|signal|cleanup
 *  kill:    rank 0 kills rank 1 (PMIX_JOB_CTRL_KILL), which waits in a fence;
 *           prints "jobctl kill ok" (pmixrun then exits with 128+SIGKILL).
 *  signal:  rank 0 sends SIGUSR1 to rank 1 (PMIX_JOB_CTRL_SIGNAL); rank 1 prints
 *           "jobctl signal ok"; rank 0 checks that an unserved directive is
 *           refused and prints "jobctl refuse ok".
 *  cleanup: each rank registers a directory tree and a file for cleanup with
 *           PMIx_Job_control_nb(..., NULL, NULL), which must return exactly
 *           PMIX_SUCCESS (OPENMPI-CONTRACT rule 5), then rank 0 finalizes and
 *           exits; rank 1 sees rank 0's files removed: "jobctl cleanup ok". */
#include <pmix.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static _Atomic sig_atomic_t got_signal = 0;
static void on_usr1(int sig) {
    (void)sig;
    got_signal = 1;
}

static void nap(void) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

static void paths(const pmix_proc_t *p, pmix_rank_t rank, char *dir, char *file, size_t n) {
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || *tmp == '\0') tmp = "/tmp";
    snprintf(dir, n, "%s/pmixpp-cleanup-%s-%u", tmp, p->nspace, rank);
    snprintf(file, n, "%s/pmixpp-cleanup-%s-%u.file", tmp, p->nspace, rank);
}

int main(int argc, char **argv) {
    pmix_proc_t me;
    if (argc != 2 || PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    const char *mode = argv[1];
    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, me.nspace, 1);
    pmix_status_t rc;

    if (strcmp(mode, "kill") == 0) {
        PMIx_Fence(NULL, 0, NULL, 0);
        if (me.rank == 0) {
            pmix_info_t d;
            PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_KILL, NULL, PMIX_BOOL);
            rc = PMIx_Job_control(&peer, 1, &d, 1, NULL, NULL);
            if (rc == PMIX_SUCCESS)
                printf("jobctl kill ok\n");
            else
                fprintf(stderr, "jobctl: kill: %s\n", PMIx_Error_string(rc));
            fflush(stdout);
            PMIx_Finalize(NULL, 0);
            return rc == PMIX_SUCCESS ? 0 : 1;
        }
        pmix_info_t t;
        int timeout = 50;
        PMIX_INFO_LOAD(&t, PMIX_TIMEOUT, &timeout, PMIX_INT);
        PMIx_Fence(NULL, 0, &t, 1); /* never completes: rank 0 does not join */
        printf("jobctl: rank 1 was not killed\n");
        return 0;
    }
    if (strcmp(mode, "signal") == 0) {
        signal(SIGUSR1, on_usr1);
        PMIx_Fence(NULL, 0, NULL, 0); /* the handler is in place everywhere */
        int ok = 1;
        if (me.rank == 0) {
            pmix_info_t d;
            int sig = SIGUSR1;
            PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT);
            rc = PMIx_Job_control(&peer, 1, &d, 1, NULL, NULL);
            if (rc != PMIX_SUCCESS) {
                fprintf(stderr, "jobctl: signal: %s\n", PMIx_Error_string(rc));
                ok = 0;
            }
            PMIX_INFO_LOAD(&d, PMIX_JOB_CTRL_PROVISION, "node1", PMIX_STRING);
            rc = PMIx_Job_control(&peer, 1, &d, 1, NULL, NULL);
            PMIX_INFO_DESTRUCT(&d);
            if (rc == PMIX_ERR_NOT_SUPPORTED)
                printf("jobctl refuse ok\n");
            else
                fprintf(stderr, "jobctl: provision: %s\n", PMIx_Error_string(rc));
        } else {
            for (int i = 0; i < 30000 && !got_signal; ++i) nap();
            if (got_signal)
                printf("jobctl signal ok\n");
            else
                ok = 0;
        }
        fflush(stdout);
        PMIx_Fence(NULL, 0, NULL, 0);
        PMIx_Finalize(NULL, 0);
        return ok ? 0 : 1;
    }
    if (strcmp(mode, "cleanup") == 0) {
        char dir[512], file[512], sub[600], inner[700];
        paths(&me, me.rank, dir, file, sizeof dir);
        snprintf(sub, sizeof sub, "%s/sub", dir);
        snprintf(inner, sizeof inner, "%s/data", sub);
        mkdir(dir, 0700);
        mkdir(sub, 0700);
        FILE *f = fopen(inner, "w");
        if (f) fclose(f);
        f = fopen(file, "w");
        if (f) fclose(f);
        pmix_info_t d[2];
        PMIX_INFO_LOAD(&d[0], PMIX_REGISTER_CLEANUP_DIR, dir, PMIX_STRING);
        PMIX_INFO_LOAD(&d[1], PMIX_CLEANUP_RECURSIVE, NULL, PMIX_BOOL);
        rc = PMIx_Job_control_nb(&me, 1, d, 2, NULL, NULL);
        PMIX_INFO_DESTRUCT(&d[0]); /* the library copied what it keeps */
        PMIX_INFO_DESTRUCT(&d[1]);
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "jobctl: cleanup dir registration returned %s\n",
                    PMIx_Error_string(rc));
            return 1;
        }
        pmix_info_t one;
        PMIX_INFO_LOAD(&one, PMIX_REGISTER_CLEANUP, file, PMIX_STRING);
        rc = PMIx_Job_control_nb(&me, 1, &one, 1, NULL, NULL);
        PMIX_INFO_DESTRUCT(&one);
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "jobctl: cleanup file registration returned %s\n",
                    PMIx_Error_string(rc));
            return 1;
        }
        PMIx_Fence(NULL, 0, NULL, 0);
        if (me.rank == 0) {
            PMIx_Finalize(NULL, 0);
            return 0;
        }
        char dir0[512], file0[512];
        paths(&me, 0, dir0, file0, sizeof dir0);
        struct stat st;
        int gone = 0;
        for (int i = 0; i < 30000 && !gone; ++i) {
            gone = stat(dir0, &st) != 0 && stat(file0, &st) != 0;
            if (!gone) nap();
        }
        if (gone)
            printf("jobctl cleanup ok\n");
        else
            fprintf(stderr, "jobctl: %s or %s still there\n", dir0, file0);
        fflush(stdout);
        PMIx_Finalize(NULL, 0);
        /* Our own files go at our finalize (checked by no one: best effort). */
        return gone ? 0 : 1;
    }
    return 1;
}
