/* Passive target on rank 1's window, 3 ranks; rank 0 locks it exclusively,
 * puts a value and unlocks, then all meet in MPI_Barrier. argv[1]: "holder"
 * (correct: rank 2 holds the lock first and computes for argv[2] seconds
 * before it unlocks, so rank 0 waits for rank 2 while the target, rank 1,
 * waits in MPI_Barrier and makes progress there) or "target" (a deadlock:
 * rank 1 holds the lock on its own window while it waits in MPI_Barrier for
 * rank 0, which waits for that lock). */
/* mpisentry-expect: 3 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: args target
 * mpisentry-expect: rank 0 MPI_Win_lock\(lock_type=MPI_LOCK_EXCLUSIVE, rank=1, assert=0, win=0x[0-9a-f]+ \(on MPI_COMM_WORLD\)\)
 * mpisentry-expect: rank 1 MPI_Barrier\(comm=MPI_COMM_WORLD\)
 * mpisentry-expect: blocks in put_under_lock meet
 * mpisentry-expect: cycle 0 1
 * mpisentry-expect: rule every rank is blocked and no call can complete: rank 0's MPI_Win_lock waits for rank 1
 */
#include <mpi.h>
#include <stddef.h>

#include "support.h"

enum Variant { kHolder, kTarget };
static const char* const kVariants[] = {"holder", "target"};

static void put_under_lock(MPI_Win win) {
  const int value = 41;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win); /* mpisentry: blocks */
  MPI_Put(&value, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
  MPI_Win_unlock(1, win);
}

static void meet(void) {
  MPI_Barrier(MPI_COMM_WORLD); /* mpisentry: blocks */
}

/* `holder` takes the lock on rank 1's window and tells rank 0 it has it. */
static void take_lock_and_tell(MPI_Win win, int holder) {
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
  int seen = 0;
  MPI_Get(&seen, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
  MPI_Win_flush(1, win); /* MPICH holds the lock by then */
  MPI_Send(&holder, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  const enum Variant variant = variant_argument(argc, argv, 1, "the variant", kVariants, 2);
  const double compute_seconds = variant == kHolder ? seconds_argument(argc, argv, 2, "the holder's computation") : 0;
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  *base = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const int holder = variant == kHolder ? 2 : 1;
  if (rank == 0) {
    int locked_by = -1;
    MPI_Recv(&locked_by, 1, MPI_INT, holder, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    put_under_lock(win);
  } else if (rank == holder) {
    take_lock_and_tell(win, holder);
    if (variant == kHolder) {
      compute_for(compute_seconds);
      MPI_Win_unlock(1, win);
    }
  }
  meet();
  if (variant == kTarget) MPI_Win_unlock(1, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
