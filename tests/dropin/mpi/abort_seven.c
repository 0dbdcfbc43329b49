/* abort_seven: rank 1 calls MPI_Abort with code 7 while the others wait;
 * mpirun must end the job and exit with 7 (the PMIx_Abort path). */
#include <unistd.h>

#include "mpi_check.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    sleep(60); /* killed by the abort long before */
    MPI_Finalize();
    return 0;
}
