/* The job's temporary directories (tools/pmixrun/session_dirs.hpp): each
 * rank Gets PMIX_TMPDIR and PMIX_NSDIR (job level) and its own and its
 * neighbour's PMIX_PROCDIR. Each must be an existing directory, the job's
 * under the session's, each rank's under the job's and not the neighbour's;
 * the rank leaves a file in its own. Prints
 * "session_dirs ok rank R <tmpdir> <nsdir> <procdir>" (session_dirs.py checks
 * that all of it is gone once pmixrun exits). */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void fail(const char *what, pmix_status_t rc) {
    printf("session_dirs FAILED: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    exit(1);
}

/* The string value of `key` for `proc`, checked to be an existing directory. */
static char *dir_of(const pmix_proc_t *proc, const char *key) {
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS) fail(key, rc);
    if (v->type != PMIX_STRING || v->data.string == NULL) fail(key, PMIX_ERR_TYPE_MISMATCH);
    char *path = strdup(v->data.string);
    PMIX_VALUE_RELEASE(v);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("session_dirs FAILED: %s = %s is not a directory\n", key, path);
        exit(1);
    }
    return path;
}

static int under(const char *path, const char *dir) {
    const size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && path[n] == '/' && strchr(path + n + 1, '/') == NULL;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) fail("PMIx_Init", rc);
    pmix_proc_t wild = me, size_of = me;
    wild.rank = PMIX_RANK_WILDCARD;
    size_of.rank = PMIX_RANK_WILDCARD;
    pmix_value_t *v = NULL;
    if ((rc = PMIx_Get(&size_of, PMIX_JOB_SIZE, NULL, 0, &v)) != PMIX_SUCCESS)
        fail("PMIX_JOB_SIZE", rc);
    const uint32_t size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    char *tmpdir = dir_of(&wild, PMIX_TMPDIR);
    char *nsdir = dir_of(&wild, PMIX_NSDIR);
    char *procdir = dir_of(&me, PMIX_PROCDIR);
    if (!under(nsdir, tmpdir)) fail("PMIX_NSDIR is not in PMIX_TMPDIR", PMIX_ERROR);
    if (!under(procdir, nsdir)) fail("PMIX_PROCDIR is not in PMIX_NSDIR", PMIX_ERROR);
    if (size > 1) {
        pmix_proc_t peer = me;
        peer.rank = (me.rank + 1) % size;
        char *other = dir_of(&peer, PMIX_PROCDIR);
        if (strcmp(other, procdir) == 0 || !under(other, nsdir))
            fail("the neighbour's PMIX_PROCDIR", PMIX_ERROR);
        free(other);
    }
    char file[4096];
    snprintf(file, sizeof file, "%s/left-by-the-rank", procdir);
    FILE *f = fopen(file, "w");
    if (f == NULL || fputs("x\n", f) < 0 || fclose(f) != 0)
        fail("a file in PMIX_PROCDIR", PMIX_ERROR);
    /* Every rank has checked its neighbour's folder before any may end. */
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) fail("PMIx_Fence", rc);
    printf("session_dirs ok rank %u %s %s %s\n", me.rank, tmpdir, nsdir, procdir);
    free(tmpdir);
    free(nsdir);
    free(procdir);
    PMIx_Finalize(NULL, 0);
    return 0;
}
