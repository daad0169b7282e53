/* The MPI side of `trainsim search`: init only under mpirun, one sum-allreduce
 * to combine the ranks' disjoint results (each element has one non-zero term). */
#include "mpi_search.h"

#include <mpi.h>
#include <stdlib.h>

static int active;

void srch_mpi_init(int *rank, int *size)
{
    *rank = 0, *size = 1;
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_SIZE")) return;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) MPI_Init(NULL, NULL);
    active = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

void srch_mpi_sum(double *buf, size_t n)
{
    /* in chunks: MPI counts are int */
    for (size_t off = 0; active && off < n; off += 1 << 24) {
        size_t k = n - off < (size_t)1 << 24 ? n - off : (size_t)1 << 24;
        MPI_Allreduce(MPI_IN_PLACE, buf + off, (int)k, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
}

void srch_mpi_finalize(void)
{
    if (active) MPI_Finalize();
    active = 0;
}
