/* Passive target on rank 1's window: rank 0 locks it exclusively, puts a
 * value, flushes (MPICH holds the lock by then) and tells rank 1, which
 * then locks its own window, reads the value and replies with one more. argv[2]: "deadlock"
 * (rank 0 waits for the reply before it unlocks, while rank 1 waits in
 * MPI_Win_lock for the lock rank 0 holds) or "correct" (rank 0 computes for
 * argv[1] seconds, unlocks, then waits for the reply). */
/* mpisentry-expect: 2 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: args 0 deadlock
 * mpisentry-expect: rank 0 MPI_Recv\(.*source=1\b
 * mpisentry-expect: rank 1 MPI_Win_lock\(lock_type=MPI_LOCK_EXCLUSIVE, rank=1, assert=0, win=0x[0-9a-f]+ \(on MPI_COMM_WORLD\)\)
 * mpisentry-expect: blocks in await_reply lock_own_window
 * mpisentry-expect: cycle 0 1
 * mpisentry-expect: rule every rank is blocked and no call can complete: rank 1's MPI_Win_lock waits for rank 0
 */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

enum Variant { kDeadlock, kCorrect };
static const char* const kVariants[] = {"deadlock", "correct"};

static int await_reply(void) {
  int reply = 0;
  MPI_Recv(&reply, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  return reply;
}

static void lock_own_window(MPI_Win win) {
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  const double compute_seconds = seconds_argument(argc, argv, 1, "rank 0's computation time");
  const enum Variant variant = variant_argument(argc, argv, 2, "the variant", kVariants, 2);
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  *base = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const int value = 41;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(&value, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_flush(1, win);
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    int reply = variant == kDeadlock ? await_reply() : 0;
    compute_for(compute_seconds);
    MPI_Win_unlock(1, win);
    if (variant == kCorrect) reply = await_reply();
    printf("rank 1 replied %d\n", reply);
  } else {
    int locked_by_zero = 0;
    MPI_Recv(&locked_by_zero, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int seen = 0;
    lock_own_window(win);
    MPI_Get(&seen, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
    const int reply = seen + 1;
    MPI_Send(&reply, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
