/* A correct halo exchange on a ring of 4 ranks in which rank 2 computes for
 * argv[1] seconds before its exchange: its neighbours wait in MPI_Waitall
 * with their receives from the punctual rank done and their 1 MB sends to
 * the late rank still pending, then everyone meets in MPI_Allreduce. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "support.h"

enum { kRanks = 4, kLateRank = 2, kLargeCount = 131072 /* doubles: 1 MB, past the eager limit */ };

/* Messages to the late rank are large, so that they stay pending. */
static int halo_count(int receiver) { return receiver == kLateRank ? kLargeCount : 1; }

static double exchange_halo(int rank) {
  const int neighbours[2] = {(rank + kRanks - 1) % kRanks, (rank + 1) % kRanks};
  double* outgoing[2];
  double* incoming[2];
  MPI_Request requests[4];
  for (int side = 0; side < 2; ++side) {
    const int out_count = halo_count(neighbours[side]);
    outgoing[side] = malloc(sizeof(double) * out_count);
    incoming[side] = malloc(sizeof(double) * halo_count(rank));
    for (int i = 0; i < out_count; ++i) outgoing[side][i] = rank + 1;
    MPI_Irecv(incoming[side], halo_count(rank), MPI_DOUBLE, neighbours[side], 0, MPI_COMM_WORLD, &requests[side]);
    MPI_Isend(outgoing[side], out_count, MPI_DOUBLE, neighbours[side], 0, MPI_COMM_WORLD, &requests[2 + side]);
  }
  MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
  double received = 0;
  for (int side = 0; side < 2; ++side) {
    for (int i = 0; i < halo_count(rank); ++i) received += incoming[side][i];
    free(outgoing[side]);
    free(incoming[side]);
  }
  return received;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(kRanks, kRanks);
  const double compute_seconds = seconds_argument(argc, argv, 1, "rank 2's computation time");
  if (rank == kLateRank) compute_for(compute_seconds);
  const double received = exchange_halo(rank);
  double total = 0;
  MPI_Allreduce(&received, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("halo sum %.0f\n", total);
  MPI_Finalize();
  return 0;
}
