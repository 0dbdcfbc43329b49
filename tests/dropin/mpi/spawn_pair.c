/* spawn_pair: the world spawns two children (MPI_Comm_spawn of this same
 * program); parents and children merge the intercommunicator and check that an
 * allreduce over the merged group adds up. */
#include <string.h>

#include "mpi_check.h"

#define CHILDREN 2

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Comm parent = MPI_COMM_NULL, inter = MPI_COMM_NULL, merged = MPI_COMM_NULL;
    MPI_Comm_get_parent(&parent);
    const int is_child = parent != MPI_COMM_NULL;
    if (is_child) {
        inter = parent;
    } else {
        int codes[CHILDREN];
        char *child_argv[] = {"child", NULL};
        int rc = MPI_Comm_spawn(argv[0], child_argv, CHILDREN, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                                &inter, codes);
        DROPIN_REQUIRE(rc == MPI_SUCCESS, "rank %d: MPI_Comm_spawn returned %d", rank, rc);
        for (int i = 0; i < CHILDREN; ++i) {
            DROPIN_REQUIRE(codes[i] == MPI_SUCCESS, "rank %d: child %d did not start (%d)", rank, i,
                           codes[i]);
        }
    }
    int remote = 0;
    MPI_Comm_remote_size(inter, &remote);
    if (!is_child) {
        DROPIN_REQUIRE(remote == CHILDREN, "rank %d: %d children, want %d", rank, remote, CHILDREN);
    } else {
        DROPIN_REQUIRE(argc > 1 && strcmp(argv[1], "child") == 0, "child %d: argv not passed",
                       rank);
    }
    MPI_Intercomm_merge(inter, is_child, &merged);
    int mrank = 0, msize = 0, sum = -1;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    DROPIN_REQUIRE(msize == size + remote, "rank %d: merged size %d, want %d", rank, msize,
                   size + remote);
    MPI_Allreduce(&mrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    DROPIN_REQUIRE(sum == dropin_rank_sum(msize), "rank %d: merged allreduce %d, want %d", rank,
                   sum, dropin_rank_sum(msize));
    printf("%s %d of %d: merged %d of %d, sum %d\n", is_child ? "child" : "parent", rank, size,
           mrank, msize, sum);
    fflush(stdout);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    MPI_Finalize();
    return 0;
}
