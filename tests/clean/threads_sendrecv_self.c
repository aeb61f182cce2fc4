/* Four threads per rank, each doing many MPI_Sendrecv with its own rank (a
 * tag of its own), then MPI_Finalize: correct, and it must end. With one
 * call record per process, a lost counter update once made a rank in
 * MPI_Finalize look as if it ran outside MPI, and the job hung there. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#include "support.h"

enum { kThreads = 4, kCalls = 5000 };

static int rank;

static void* exchange_with_self(void* argument) {
  const int tag = (int)(long)argument;
  long sum = 0;
  for (int i = 0; i < kCalls; ++i) {
    int sent = i, received = -1;
    MPI_Sendrecv(&sent, 1, MPI_INT, rank, tag, &received, 1, MPI_INT, rank, tag, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    sum += received;
  }
  return (void*)sum;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  rank = world_rank_checked(1, 0);
  pthread_t threads[kThreads];
  for (long t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, exchange_with_self, (void*)t);
  long total = 0;
  for (int t = 0; t < kThreads; ++t) {
    void* sum = NULL;
    pthread_join(threads[t], &sum);
    total += (long)sum;
  }
  long all = 0;
  MPI_Reduce(&total, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("sum %ld\n", all);
  MPI_Finalize();
  return 0;
}
