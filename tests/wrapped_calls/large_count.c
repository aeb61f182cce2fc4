/* Large-count (MPI_Count) collectives on two ranks, 4 MiB each.
 *   roots:   each rank calls MPI_Bcast_c naming itself as root;
 *   correct: rank 1 computes for <seconds>, then both ranks call
 *            MPI_Bcast_c from root 0 and MPI_Allreduce_c; rank 0 prints
 *            the results. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "support.h"

static const MPI_Count kInts = 1 << 20;

static void broadcast(int* data, int root) {
#if MPI_VERSION >= 4
  MPI_Bcast_c(data, kInts, MPI_INT, root, MPI_COMM_WORLD); /* mpisentry: blocks */
#else
  (void)data, (void)root;
  lacks_mpi4("MPI_Bcast_c");
#endif
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  const double seconds = seconds_argument(argc, argv, 1, "rank 1's computation before the collectives");
  static const char* const variants[] = {"roots", "correct"};
  const int correct = variant_argument(argc, argv, 2, "variant", variants, 2) == 1;
  int* data = malloc((size_t)kInts * sizeof(int));
  int* total = malloc((size_t)kInts * sizeof(int));
  for (MPI_Count i = 0; i < kInts; ++i) data[i] = rank + 1;
  if (!correct) {
    broadcast(data, rank);
  } else {
    if (rank == 1) compute_for(seconds);
    broadcast(data, 0);
#if MPI_VERSION >= 4
    MPI_Allreduce_c(data, total, kInts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
#endif
    if (rank == 0) printf("broadcast %d, sum %d\n", data[kInts - 1], total[kInts - 1]);
  }
  free(data);
  free(total);
  MPI_Finalize();
  return 0;
}
