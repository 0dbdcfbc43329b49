/* where_loaded: a PMIx client that reports which files its process and its
 * server's process (the parent: pmixrun starts its clients itself) have mapped
 * for libpmix.so* and the components pmix_mca_*.so, read from /proc/<pid>/maps
 * while both run. tests/install/runs_on_its_own.sh installs it into a temporary
 * prefix next to the installed pmixrun and checks that every file is the
 * prefix's.
 *
 * Output, one line per mapped file and process:
 *   where_loaded: rank <r> self|server <path>
 *   where_loaded: rank <r> version <PMIx_Get_version()>
 * Exits non-zero on any failure. */
#include <pmix.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Prints each distinct file of /proc/<pid>/maps whose name starts with
 * "libpmix.so" or "pmix_mca_"; returns how many, or -1 if maps is unreadable. */
static int print_pmix_files(pid_t pid, const char *who, unsigned rank) {
    char maps[64];
    snprintf(maps, sizeof maps, "/proc/%ld/maps", (long)pid);
    FILE *f = fopen(maps, "r");
    if (f == NULL) {
        fprintf(stderr, "where_loaded: cannot open %s\n", maps);
        return -1;
    }
    char line[4096];
    char last[4096] = "";
    int count = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        const char *path = strchr(line, '/');
        if (path == NULL) continue;
        const char *base = strrchr(path, '/') + 1;
        if (strncmp(base, "libpmix.so", 10) != 0 && strncmp(base, "pmix_mca_", 9) != 0) continue;
        if (strcmp(path, last) == 0) continue; /* the next segment of the same file */
        snprintf(last, sizeof last, "%s", path);
        printf("where_loaded: rank %u %s %s\n", rank, who, path);
        ++count;
    }
    fclose(f);
    return count;
}

int main(void) {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "where_loaded: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    int ok = 1;
    /* Both ranks and the server are alive and initialized while they read. */
    if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) ok = 0;
    if (print_pmix_files(getpid(), "self", me.rank) <= 0) ok = 0;
    if (print_pmix_files(getppid(), "server", me.rank) <= 0) ok = 0;
    printf("where_loaded: rank %u version %s\n", me.rank, PMIx_Get_version());
    fflush(stdout);
    if (PMIx_Fence(NULL, 0, NULL, 0) != PMIX_SUCCESS) ok = 0;
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) ok = 0;
    return ok ? 0 : 1;
}
