/* One collective that takes longer than DEADLOCK-TIMEOUT: a reduction whose
 * user-defined operation computes for argv[1] seconds. Every rank is inside
 * the same MPI_Allreduce the whole time: slow, not stuck. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

static double operation_seconds;

static void slow_sum(void* in, void* inout, int* count, MPI_Datatype* datatype) {
  (void)datatype;
  compute_for(operation_seconds);
  for (int i = 0; i < *count; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  operation_seconds = seconds_argument(argc, argv, 1, "how long the reduction computes");
  MPI_Op slow_op;
  MPI_Op_create(slow_sum, 1, &slow_op);
  int one = 1;
  int ranks = 0;
  MPI_Allreduce(&one, &ranks, 1, MPI_INT, slow_op, MPI_COMM_WORLD);
  if (rank == 0) printf("sum %d\n", ranks);
  MPI_Op_free(&slow_op);
  MPI_Finalize();
  return 0;
}
