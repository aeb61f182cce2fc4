/* Deadlock of every thread (MPI_THREAD_MULTIPLE): on each of 2 ranks the
 * main thread and a helper thread wait in MPI_Recv from the other rank's
 * threads, with tags that no send ever uses. */
/* mpisentry-expect: 2 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: rank 0 MPI_Recv\(.*source=1\b
 * mpisentry-expect: rank 1 MPI_Recv\(.*source=0\b
 * mpisentry-expect: blocks in wait_for_other_rank
 * mpisentry-expect: cycle 0 1
 */
#include <mpi.h>
#include <pthread.h>

#include "support.h"

static int other_rank = 0;

static void* wait_for_other_rank(void* tag) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, other_rank, *(int*)tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  const int rank = world_rank_checked(2, 2);
  other_rank = 1 - rank;
  int tags[2] = {10 * rank + 1, 10 * rank + 2};
  pthread_t helper;
  pthread_create(&helper, NULL, wait_for_other_rank, &tags[1]);
  wait_for_other_rank(&tags[0]);
  pthread_join(helper, NULL);
  MPI_Finalize();
  return 0;
}
