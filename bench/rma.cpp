// One-sided epochs on 2 ranks, each rank putting 8 B into the other's
// window in every epoch, timed by rank 0: fence epochs (MPI_Win_fence,
// MPI_Put, MPI_Win_fence), and lock epochs (MPI_Win_lock shared, MPI_Put,
// MPI_Win_unlock). Prints the median time per epoch in seconds: what the
// RMA checks (GLOBAL:RMA:CONFLICT's exchange at each fence, the accesses
// kept per epoch) add to a fence-heavy and a lock-heavy program.
#include <mpi.h>

#include "measure.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = bench::rank_checked("rma", 2);
  const int other = 1 - rank;
  double window[64] = {}, mine = rank;
  MPI_Win win;
  MPI_Win_create(window, sizeof window, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  const bench::Blocks blocks{.warmup = 2, .per_block = 100, .seconds = 1.0};
  MPI_Win_fence(0, win);
  const double fence = bench::median_seconds_per_operation(blocks, [&] {
    MPI_Put(&mine, 1, MPI_DOUBLE, other, rank, 1, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
  });
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Barrier(MPI_COMM_WORLD);
  const double lock = bench::median_seconds_per_operation(blocks, [&] {
    MPI_Win_lock(MPI_LOCK_SHARED, other, 0, win);
    MPI_Put(&mine, 1, MPI_DOUBLE, other, rank, 1, MPI_DOUBLE, win);
    MPI_Win_unlock(other, win);
  });
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  if (rank == 0) {
    bench::print_result("rma_fence_epoch", fence);
    bench::print_result("rma_lock_epoch", lock);
  }
  MPI_Finalize();
  return 0;
}
