/* Short-lived threads (MPI_THREAD_MULTIPLE): rank 0 starts argv[1] threads,
 * 4 at a time, each making a few MPI calls and exiting at once, while rank 1
 * waits in MPI_Recv for rank 0's count: the monitors sample thread states
 * that are registered and retired all the time. Correct: it must end. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#include "support.h"

enum { kAtOnce = 4, kCallsPerThread = 3 };

static void* call_briefly(void* argument) {
  const int tag = (int)(long)argument;
  long sum = 0;
  for (int i = 0; i < kCallsPerThread; ++i) {
    int sent = i + 1, received = 0, found = 0;
    MPI_Sendrecv(&sent, 1, MPI_INT, 0, tag, &received, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE);
    sum += received;
  }
  return (void*)sum;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  const int rank = world_rank_checked(2, 2);
  const long threads = count_argument(argc, argv, 1, "the number of short-lived threads");
  long total = 0;
  if (rank == 0) {
    for (long started = 0; started < threads; started += kAtOnce) {
      pthread_t batch[kAtOnce];
      for (int t = 0; t < kAtOnce; ++t) pthread_create(&batch[t], NULL, call_briefly, (void*)(long)t);
      for (int t = 0; t < kAtOnce; ++t) {
        void* sum = NULL;
        pthread_join(batch[t], &sum);
        total += (long)sum;
      }
    }
    MPI_Send(&total, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&total, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("sum %ld\n", total);
  }
  MPI_Finalize();
  return 0;
}
