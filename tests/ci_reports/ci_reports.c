/* The CI reports' program, on 2 ranks, argv[1] naming the shape:
 *   deadlock  each rank receives from the other before it sends: a hard deadlock
 *   findings  (under --check-all) MPI_Bcast with root 0 on rank 0 and root 1 on rank 1
 *             (GLOBAL:COLLECTIVE:ROOT_MISMATCH, an error; completes on MPICH without the
 *             checker), and a duplicate of MPI_COMM_WORLD never freed on every rank
 *             (LOCAL:COMM:NOT_FREED, a warning)
 *   clean     a message each way */
#include <mpi.h>

#include "support.h"

static void exchange(int rank, int receive_first) {
  const int other = 1 - rank;
  int mine = rank, theirs = -1;
  if (receive_first) {
    MPI_Recv(&theirs, 1, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: deadlock */
    MPI_Send(&mine, 1, MPI_INT, other, 0, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Send(&mine, 1, MPI_INT, other, 0, MPI_COMM_WORLD);
    MPI_Recv(&theirs, 1, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&theirs, 1, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&mine, 1, MPI_INT, other, 0, MPI_COMM_WORLD);
  }
}

static void findings(int rank) {
  int value = 7;
  MPI_Bcast(&value, 1, MPI_INT, rank, MPI_COMM_WORLD); /* mpisentry: root */
  MPI_Comm kept;
  MPI_Comm_dup(MPI_COMM_WORLD, &kept); /* mpisentry: leak */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  static const char* const shapes[] = {"deadlock", "findings", "clean"};
  switch (variant_argument(argc, argv, 1, "shape", shapes, 3)) {
    case 0: exchange(rank, 1); break;
    case 1: findings(rank); break;
    default: exchange(rank, 0);
  }
  MPI_Finalize();
  return 0;
}
