/* Deadlock at MPI_THREAD_FUNNELED (OpenMP): inside a parallel region the
 * master thread of each of 2 ranks waits in MPI_Recv from the other rank,
 * with a tag that no send uses, while the other threads compute briefly and
 * then wait at the region's end. The master is the thread that initialized
 * MPI; its call is in the region's outlined function. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

#include "support.h"

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED) {
    fprintf(stderr, "omp_funneled: needs MPI_THREAD_FUNNELED, MPI provides level %d\n", provided);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int rank = world_rank_checked(2, 2);
  int value = 0;
#pragma omp parallel num_threads(3)
  {
    if (omp_get_thread_num() == 0)
      MPI_Recv(&value, 1, MPI_INT, 1 - rank, 10 + rank, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
    else
      compute_for(0.5);
  }
  MPI_Finalize();
  return 0;
}
