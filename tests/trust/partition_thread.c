/* A correct program built against the rule that a wait on a partitioned
 * send with partitions not readied waits for its own rank: rank 0's main
 * thread waits in MPI_Wait on its partitioned send of 4 partitions to rank
 * 1, readied but for the last, which a second thread (MPI_THREAD_MULTIPLE)
 * readies after computing for argv[1] seconds; rank 1 waits on its
 * partitioned receive. Neither rank is stuck: rank 0 can still act. Rank 1
 * prints what it received. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#include "support.h"

enum { kPartitions = 4, kPer = 2 };

static double compute_seconds;
static MPI_Request request;

static void* ready_last(void* unused) {
  (void)unused;
  compute_for(compute_seconds);
  MPI_Pready(kPartitions - 1, request);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  const int rank = world_rank_checked(2, 2);
  compute_seconds = seconds_argument(argc, argv, 1, "how long the readying thread computes first");
  int data[kPartitions * kPer];
  for (int i = 0; i < kPartitions * kPer; ++i) data[i] = rank == 0 ? i + 1 : 0;
  if (rank == 0) {
    MPI_Psend_init(data, kPartitions, kPer, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
    MPI_Start(&request);
    MPI_Pready_range(0, kPartitions - 2, request);
    pthread_t thread;
    pthread_create(&thread, NULL, ready_last, NULL);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    pthread_join(thread, NULL);
  } else {
    MPI_Precv_init(data, kPartitions, kPer, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
    MPI_Start(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    int sum = 0;
    for (int i = 0; i < kPartitions * kPer; ++i) sum += data[i];
    printf("partition_thread: received %d\n", sum);
  }
  MPI_Request_free(&request);
  MPI_Finalize();
  return 0;
}
