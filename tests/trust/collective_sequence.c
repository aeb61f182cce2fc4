/* Correct consecutive collectives while rank 0 computes for argv[1] seconds.
 * argv[2]:
 *   reduce_bcast: MPI_Reduce to root 1, then MPI_Bcast from root 0. Rank 2
 *     leaves the reduction at once (it only sends) and waits in the
 *     broadcast while rank 1, the reduction's root, still waits for rank 0.
 *   split: MPI_Allreduce then MPI_Barrier on a communicator split from
 *     MPI_COMM_WORLD with the ranks reversed; rank 1 made a communicator
 *     before, so the ranks' handles for it differ. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

enum Variant { kReduceBcast, kSplit };
static const char* const kVariants[] = {"reduce_bcast", "split"};

static void reduce_then_bcast(int rank) {
  const int mine = rank + 1;
  int sum = 0;
  MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD);
  int broadcast = rank == 0 ? 7 : 0;
  MPI_Bcast(&broadcast, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int results[2] = {sum, broadcast};
  MPI_Allreduce(MPI_IN_PLACE, results, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("reduced %d, broadcast %d\n", results[0], results[1]);
}

static void on_split_communicator(int rank, double compute_seconds) {
  MPI_Comm extra = MPI_COMM_NULL;
  if (rank == 1) MPI_Comm_dup(MPI_COMM_SELF, &extra);
  MPI_Comm reversed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &reversed);
  if (rank == 0) compute_for(compute_seconds);
  int position = 0;
  MPI_Comm_rank(reversed, &position);
  int sum = 0;
  MPI_Allreduce(&position, &sum, 1, MPI_INT, MPI_SUM, reversed);
  MPI_Barrier(reversed);
  if (rank == 0) printf("position %d, sum of positions %d\n", position, sum);
  MPI_Comm_free(&reversed);
  if (extra != MPI_COMM_NULL) MPI_Comm_free(&extra);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  const double compute_seconds = seconds_argument(argc, argv, 1, "rank 0's computation time");
  const enum Variant variant = variant_argument(argc, argv, 2, "the collectives", kVariants, 2);
  if (variant == kReduceBcast) {
    if (rank == 0) compute_for(compute_seconds);
    reduce_then_bcast(rank);
  } else {
    on_split_communicator(rank, compute_seconds);
  }
  MPI_Finalize();
  return 0;
}
