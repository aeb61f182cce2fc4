/* Generalized active target: rank 0 exposes its window to rank 1 and waits
 * in MPI_Win_wait for the end of rank 1's access epoch, then tells rank 1
 * that it is done. argv[2]: "deadlock" (rank 1 waits for that message before
 * its epoch: each waits for the other, in every MPI implementation) or
 * "correct" (rank 1 computes for argv[1] seconds, does its epoch, then
 * receives the message). */
/* mpisentry-expect: 2 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: args 0 deadlock
 * mpisentry-expect: rank 0 MPI_Win_wait\(origins=\[1\], win=0x[0-9a-f]+ \(on MPI_COMM_WORLD\)\)
 * mpisentry-expect: rank 1 MPI_Recv\(.*source=0\b
 * mpisentry-expect: blocks in expose receive_done
 * mpisentry-expect: cycle 0 1
 * mpisentry-expect: rule in every MPI implementation (definite waits
 */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

enum Variant { kDeadlock, kCorrect };
static const char* const kVariants[] = {"deadlock", "correct"};

static void expose(MPI_Win win, MPI_Group origin) {
  MPI_Win_post(origin, 0, win);
  MPI_Win_wait(win); /* mpisentry: blocks */
}

static int receive_done(void) {
  int done = 0;
  MPI_Recv(&done, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  return done;
}

static void put_into(MPI_Win win, MPI_Group target, int value) {
  MPI_Win_start(target, 0, win);
  MPI_Put(&value, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
  MPI_Win_complete(win);
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
  MPI_Group world_group, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const int other = 1 - rank;
  MPI_Group_incl(world_group, 1, &other, &peer);
  if (rank == 0) {
    expose(win, peer);
    printf("rank 0's window holds %d\n", *base);
    const int done = 1;
    MPI_Send(&done, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    if (variant == kDeadlock) receive_done();
    compute_for(compute_seconds);
    put_into(win, peer, 42);
    if (variant == kCorrect) printf("rank 1 was told %d\n", receive_done());
  }
  MPI_Group_free(&peer);
  MPI_Group_free(&world_group);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
