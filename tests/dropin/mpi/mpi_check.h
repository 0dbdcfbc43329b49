/* Helpers shared by the MPI programs of dropin.open_mpi_acceptance. */
#ifndef PMIXPP_DROPIN_MPI_CHECK_H
#define PMIXPP_DROPIN_MPI_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Fails the run with a message: every rank that finds a wrong answer says so. */
#define DROPIN_REQUIRE(cond, ...)                                 \
    do {                                                          \
        if (!(cond)) {                                            \
            fprintf(stderr, "dropin check failed: " __VA_ARGS__); \
            fprintf(stderr, "\n");                                \
            MPI_Abort(MPI_COMM_WORLD, 3);                         \
        }                                                         \
    } while (0)

/* Sum of 0..n-1: what an allreduce of every rank's own rank must give. */
static inline int dropin_rank_sum(int n) {
    return n * (n - 1) / 2;
}

#endif
