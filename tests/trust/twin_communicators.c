/* Communicators with the same members are different communicators, and
 * collectives that cannot match are told apart. Two ranks; argv[1] is how long rank 1 computes first, argv[2] the shape and
 * argv[3] whether the program is "correct" or has the "bug":
 *   barriers: two duplicates of MPI_COMM_WORLD. Bug: rank 0 waits in
 *     MPI_Barrier on the first, rank 1 on the second. Correct: both ranks
 *     call the barrier on the first, then on the second.
 *   ssend: a duplicate of MPI_COMM_WORLD. Bug: rank 0 sends synchronously
 *     on the duplicate, rank 1 receives on MPI_COMM_WORLD. Correct: rank 1
 *     receives on the duplicate.
 *   bcast_roots: a 1 MiB MPI_Bcast on MPI_COMM_WORLD. Bug: each rank names
 *     itself the root. Correct: both name rank 0.
 *   kinds: a 1 MiB MPI_Allreduce and a barrier on MPI_COMM_WORLD. Bug:
 *     rank 0 calls the barrier first, rank 1 the reduction. Correct: both
 *     reduce, then both wait in the barrier.
 *   freed: rank 0 frees a duplicate and makes a new one while rank 1 still
 *     waits in MPI_Recv on the freed one. Bug: rank 0 never sends on the
 *     freed duplicate. Correct: rank 0 sends on it before freeing it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "support.h"

enum Shape { kBarriers, kSsend, kBcastRoots, kKinds, kFreed };
static const char* const kShapes[] = {"barriers", "ssend", "bcast_roots", "kinds", "freed"};
static const char* const kCorrectness[] = {"correct", "bug"};

enum { kBroadcastInts = 1 << 18 };

static void barrier_on(MPI_Comm comm) {
  MPI_Barrier(comm); /* mpisentry: blocks [barriers] [kinds] */
}

static void barriers(int rank, int bug) {
  MPI_Comm first, second;
  MPI_Comm_dup(MPI_COMM_WORLD, &first);
  MPI_Comm_dup(MPI_COMM_WORLD, &second);
  if (bug) {
    barrier_on(rank == 0 ? first : second);
  } else {
    barrier_on(first);
    barrier_on(second);
  }
  MPI_Comm_free(&second);
  MPI_Comm_free(&first);
}

static void send_synchronously(int value, MPI_Comm comm) {
  MPI_Ssend(&value, 1, MPI_INT, 1, 0, comm); /* mpisentry: blocks [ssend] */
}

static int receive_from_rank_0(MPI_Comm comm) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 0, 0, comm, MPI_STATUS_IGNORE); /* mpisentry: blocks [ssend] [freed] */
  return value;
}

static void ssend(int rank, int bug) {
  MPI_Comm duplicate;
  MPI_Comm_dup(MPI_COMM_WORLD, &duplicate);
  if (rank == 0) send_synchronously(42, duplicate);
  else printf("received %d\n", receive_from_rank_0(bug ? MPI_COMM_WORLD : duplicate));
  MPI_Comm_free(&duplicate);
}

static void broadcast(int* data, int root) {
  MPI_Bcast(data, kBroadcastInts, MPI_INT, root, MPI_COMM_WORLD); /* mpisentry: blocks [bcast_roots] */
}

static void bcast_roots(int rank, int bug) {
  int* data = calloc(kBroadcastInts, sizeof *data);
  if (data == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  if (rank == 0) data[kBroadcastInts - 1] = 7;
  broadcast(data, bug ? rank : 0);
  printf("broadcast %d\n", data[kBroadcastInts - 1]);
  free(data);
}

static void reduce(int* data) {
  MPI_Allreduce(MPI_IN_PLACE, data, kBroadcastInts, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* mpisentry: blocks [kinds] */
}

static void kinds(int rank, int bug) {
  int* data = calloc(kBroadcastInts, sizeof *data);
  if (data == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  data[0] = rank + 1;
  if (bug && rank == 0) barrier_on(MPI_COMM_WORLD);
  reduce(data);
  if (!bug || rank == 1) barrier_on(MPI_COMM_WORLD);
  printf("sum %d\n", data[0]);
  free(data);
}

static void make_another(MPI_Comm* made) {
  MPI_Comm_dup(MPI_COMM_WORLD, made); /* mpisentry: blocks [freed] */
}

static void freed(int rank, int bug) {
  MPI_Comm duplicate, another;
  MPI_Comm_dup(MPI_COMM_WORLD, &duplicate);
  if (rank == 0) {
    if (!bug) MPI_Send(&rank, 1, MPI_INT, 1, 0, duplicate);
    MPI_Comm_free(&duplicate);
    make_another(&another);
  } else {
    printf("received %d\n", receive_from_rank_0(duplicate));
    MPI_Comm_free(&duplicate);
    make_another(&another);
  }
  MPI_Comm_free(&another);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  const double compute_seconds = seconds_argument(argc, argv, 1, "rank 1's computation time");
  const enum Shape shape = variant_argument(argc, argv, 2, "the shape", kShapes, 5);
  const int bug = variant_argument(argc, argv, 3, "correct or bug", kCorrectness, 2);
  if (rank == 1) compute_for(compute_seconds);
  switch (shape) {
    case kBarriers: barriers(rank, bug); break;
    case kSsend: ssend(rank, bug); break;
    case kBcastRoots: bcast_roots(rank, bug); break;
    case kKinds: kinds(rank, bug); break;
    case kFreed: freed(rank, bug); break;
  }
  MPI_Finalize();
  return 0;
}
