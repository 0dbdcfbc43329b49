/* port_rendezvous: the lower half of the world opens a port and publishes it
 * under a service name; the upper half looks it up and connects (the PMIx
 * publish/lookup and connect paths). Both sides merge the intercommunicator
 * and check an allreduce over all ranks; then unpublish, disconnect. */
#include <string.h>

#include "mpi_check.h"

#define SERVICE "pmixpp-dropin-rendezvous"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    DROPIN_REQUIRE(size >= 2, "needs at least 2 ranks, has %d", size);

    const int upper = rank >= size / 2;
    MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL, all = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, upper, rank, &half);
    char port[MPI_MAX_PORT_NAME];
    memset(port, 0, sizeof port);

    if (!upper) {
        if (rank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            int rc = MPI_Publish_name(SERVICE, MPI_INFO_NULL, port);
            DROPIN_REQUIRE(rc == MPI_SUCCESS, "MPI_Publish_name returned %d", rc);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* published before anyone looks */
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == size / 2) {
            int rc = MPI_Lookup_name(SERVICE, MPI_INFO_NULL, port);
            DROPIN_REQUIRE(rc == MPI_SUCCESS && port[0] != '\0', "MPI_Lookup_name returned %d", rc);
        }
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter);
    }

    int remote = 0;
    MPI_Comm_remote_size(inter, &remote);
    const int expect_remote = upper ? size / 2 : size - size / 2;
    DROPIN_REQUIRE(remote == expect_remote, "rank %d: remote group of %d, want %d", rank, remote,
                   expect_remote);
    MPI_Intercomm_merge(inter, upper, &all);
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, all);
    DROPIN_REQUIRE(sum == dropin_rank_sum(size),
                   "rank %d: allreduce over the joined groups %d, want %d", rank, sum,
                   dropin_rank_sum(size));
    printf("rank %d (%s half): remote group %d, sum %d\n", rank, upper ? "upper" : "lower", remote,
           sum);
    fflush(stdout);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Unpublish_name(SERVICE, MPI_INFO_NULL, port);
        MPI_Close_port(port);
    }
    MPI_Comm_free(&all);
    MPI_Comm_disconnect(&inter);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
