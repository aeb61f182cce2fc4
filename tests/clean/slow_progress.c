/* A long computation that makes progress: every rank computes for half a
 * second between reductions, for argv[1] seconds in all. Slow, not stuck. */
#include <mpi.h>

#include "support.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  world_rank_checked(2, 0);
  const double total_seconds = seconds_argument(argc, argv, 1, "length of the computation");
  const double start = now_seconds();
  int keep_going = 1;
  while (keep_going) {
    compute_for(0.5);
    /* The reduction itself decides whether to go on, so that every rank
     * joins the same number of reductions. */
    int more = now_seconds() - start < total_seconds;
    MPI_Allreduce(&more, &keep_going, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
