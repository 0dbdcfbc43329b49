/* which_pmix: every rank reports the libpmix it mapped and the one its
 * launcher (mpirun or orted, its parent) mapped, after a world allreduce
 * that must add up. dropin.open_mpi_acceptance checks those paths are ours.
 *
 * Output, one line per rank:
 *   rank <r> of <n>: self <path> launcher <path>
 * where <path> is the file of the first libpmix mapping, or "none". */
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "mpi_check.h"

/* The path of the first mapping whose file name contains "libpmix" in
 * /proc/<pid>/maps (pid 0: this process), or "none". */
static void pmix_mapping(pid_t pid, char *out, size_t size) {
    char maps[64];
    if (pid == 0) {
        snprintf(maps, sizeof maps, "/proc/self/maps");
    } else {
        snprintf(maps, sizeof maps, "/proc/%ld/maps", (long)pid);
    }
    snprintf(out, size, "none");
    FILE *f = fopen(maps, "r");
    if (f == NULL) {
        return;
    }
    char line[4096];
    while (fgets(line, sizeof line, f) != NULL) {
        char *path = strchr(line, '/');
        if (path == NULL) {
            continue;
        }
        path[strcspn(path, "\n")] = '\0';
        const char *base = strrchr(path, '/') + 1;
        if (strncmp(base, "libpmix", 7) == 0) {
            snprintf(out, size, "%s", path);
            break;
        }
    }
    fclose(f);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    DROPIN_REQUIRE(sum == dropin_rank_sum(size), "rank %d: allreduce gave %d, want %d", rank, sum,
                   dropin_rank_sum(size));

    char self[4096], launcher[4096];
    pmix_mapping(0, self, sizeof self);
    pmix_mapping(getppid(), launcher, sizeof launcher);
    printf("rank %d of %d: self %s launcher %s\n", rank, size, self, launcher);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
