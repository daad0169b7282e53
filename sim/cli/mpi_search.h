/* The MPI side of `trainsim search` (built only where mpicc exists): ranks
 * split the candidates and sum their results. */
#ifndef TS_MPI_SEARCH_H
#define TS_MPI_SEARCH_H

#include <stddef.h>

/* MPI_Init when launched by mpirun (Open MPI/PMIx environment), else rank 0 of 1 without MPI. */
void srch_mpi_init(int *rank, int *size);
/* Element-wise sum of buf over all ranks, result on every rank. */
void srch_mpi_sum(double *buf, size_t n);
void srch_mpi_finalize(void);

#endif
