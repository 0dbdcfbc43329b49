/* mpi_hello.c - the smallest MPI program: MPI_Init, rank and size, one line
 * of output, MPI_Finalize. bench/run_mpirun.sh times `mpirun -np N` of it. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("hello %d/%d\n", rank, size);
    MPI_Finalize();
    return 0;
}
