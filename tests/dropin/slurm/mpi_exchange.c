/* mpi_exchange: real point-to-point and collectives across the ranks of a
 * Slurm job step (dropin.slurm_srun_pmix), then one line per rank naming the
 * libpmix this rank and its parent (slurmstepd) mapped, by device and inode:
 * a bind mount keeps Debian's path in /proc/<pid>/maps, so only the file's
 * identity tells whose library it is.
 *
 * usage: mpi_exchange [hello]   ("hello": MPI_Init/MPI_Finalize only)
 * Output: rank <r> of <n>: self <maj>:<min>:<ino> parent <maj>:<min>:<ino> uri <scheme> ns <nspace>
 * (<scheme> of the server URI the step handed over: usock, tcp or none;
 * <nspace> the PMIx namespace Slurm named the step). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define REQUIRE(cond, ...)                                              \
    do {                                                                \
        if (!(cond)) {                                                  \
            fprintf(stderr, "mpi_exchange check failed: " __VA_ARGS__); \
            fprintf(stderr, "\n");                                      \
            MPI_Abort(MPI_COMM_WORLD, 3);                               \
        }                                                               \
    } while (0)

/* "maj:min:inode" (hex device numbers, as the kernel prints them) of the
 * first mapping whose file name starts with "libpmix", or "none". */
static void pmix_mapping(pid_t pid, char *out, size_t size) {
    char maps[64];
    snprintf(maps, sizeof maps, "/proc/%ld/maps", (long)pid);
    snprintf(out, size, "none");
    FILE *f = fopen(maps, "r");
    if (f == NULL) return;
    char line[4096];
    while (fgets(line, sizeof line, f) != NULL) {
        char *path = strchr(line, '/');
        if (path == NULL) continue;
        path[strcspn(path, "\n")] = '\0';
        const char *base = strrchr(path, '/') + 1;
        if (strncmp(base, "libpmix", 7) != 0) continue;
        char range[64], perms[8], offset[32], dev[32];
        unsigned long inode = 0;
        if (sscanf(line, "%63s %7s %31s %31s %lu", range, perms, offset, dev, &inode) == 5) {
            snprintf(out, size, "%s:%lu", dev, inode);
        }
        break;
    }
    fclose(f);
}

static void exchange(int rank, int size) {
    /* A ring of sends: every rank gets its left neighbour's payload. */
    int payload[256], got[256];
    for (int i = 0; i < 256; ++i) payload[i] = rank * 1000 + i;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Sendrecv(payload, 256, MPI_INT, right, 17, got, 256, MPI_INT, left, 17, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < 256; ++i)
        REQUIRE(got[i] == left * 1000 + i, "rank %d: ring word %d is %d", rank, i, got[i]);

    /* Non-blocking pairs: rank 0 hears from every other rank. */
    if (rank == 0) {
        for (int from = 1; from < size; ++from) {
            int v = -1;
            MPI_Request req;
            MPI_Irecv(&v, 1, MPI_INT, from, 5, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            REQUIRE(v == from * from, "rank 0: rank %d sent %d", from, v);
        }
    } else {
        int v = rank * rank;
        MPI_Send(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    }

    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    REQUIRE(sum == size * (size - 1) / 2, "rank %d: allreduce gave %d", rank, sum);

    int root_word = rank == 0 ? 4242 : 0;
    MPI_Bcast(&root_word, 1, MPI_INT, 0, MPI_COMM_WORLD);
    REQUIRE(root_word == 4242, "rank %d: bcast gave %d", rank, root_word);

    int *all = malloc(sizeof(int) * (size_t)size);
    REQUIRE(all != NULL, "rank %d: out of memory", rank);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; ++i)
        REQUIRE(all[i] == i, "rank %d: allgather[%d] = %d", rank, i, all[i]);
    free(all);

    /* A communicator split: the even and the odd ranks each reduce. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int hsize = 0, hsum = -1;
    MPI_Comm_size(half, &hsize);
    MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, half);
    int want = 0;
    for (int r = rank % 2; r < size; r += 2) want += r;
    REQUIRE(hsum == want, "rank %d: split allreduce gave %d, want %d", rank, hsum, want);
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || strcmp(argv[1], "hello") != 0) exchange(rank, size);

    char self[128], parent[128];
    pmix_mapping(getpid(), self, sizeof self);
    pmix_mapping(getppid(), parent, sizeof parent);
    const char *uri = getenv("PMIX_SERVER_URI41");
    const char *sep = uri != NULL ? strchr(uri, ';') : NULL;
    char scheme[16] = "none";
    if (sep != NULL) sscanf(sep + 1, "%15[a-z]", scheme);
    const char *ns = getenv("PMIX_NAMESPACE");
    printf("rank %d of %d: self %s parent %s uri %s ns %s\n", rank, size, self, parent, scheme,
           ns != NULL ? ns : "none");
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
