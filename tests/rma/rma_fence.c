/* Fences on a window: after a first fence, rank 1 puts a value into rank
 * 0's window; the second fence ends that epoch, then both ranks meet in
 * MPI_Barrier. argv[2]: "deadlock" (rank 1 calls MPI_Barrier before the
 * second fence, while rank 0 waits in it: every rank is blocked and neither
 * call can complete) or "correct" (rank 1 computes for argv[1] seconds
 * first, rank 0 waits in the fence meanwhile). */
/* mpisentry-expect: 2 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: args 0 deadlock
 * mpisentry-expect: rank 0 MPI_Win_fence\(assert=MPI_MODE_NOSUCCEED, win=0x[0-9a-f]+ \(on MPI_COMM_WORLD\)\)
 * mpisentry-expect: rank 1 MPI_Barrier\(comm=MPI_COMM_WORLD\)
 * mpisentry-expect: blocks in end_epoch synchronize
 * mpisentry-expect: cycle 0 1
 * mpisentry-expect: rule every rank is blocked and no call can complete: rank 0's MPI_Win_fence waits for rank 1
 */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

enum Variant { kDeadlock, kCorrect };
static const char* const kVariants[] = {"deadlock", "correct"};

static void end_epoch(MPI_Win win) {
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win); /* mpisentry: blocks */
}

static void synchronize(void) {
  MPI_Barrier(MPI_COMM_WORLD); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  const double compute_seconds = seconds_argument(argc, argv, 1, "rank 1's computation time");
  const enum Variant variant = variant_argument(argc, argv, 2, "the variant", kVariants, 2);
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  *base = 0;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  if (rank == 0) {
    end_epoch(win);
    synchronize();
    printf("rank 0's window holds %d\n", *base);
  } else {
    const int value = 42;
    MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    if (variant == kDeadlock) synchronize();
    compute_for(compute_seconds);
    end_epoch(win);
    if (variant == kCorrect) synchronize();
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
