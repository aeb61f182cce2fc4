/* Stress (MPI_THREAD_MULTIPLE): argv[1] threads per rank, each doing argv[2]
 * exchanges with the thread of the same number on the other rank (tag = the
 * thread's number), alternately an MPI_Sendrecv and an MPI_Irecv + MPI_Isend
 * + MPI_Waitall. Then rank 0 computes for argv[3] seconds while rank 1 waits
 * in MPI_Reduce: a lost update of rank 0's call counters would make it look
 * blocked in MPI meanwhile. Correct: it must end with the checksum it prints
 * without the checker. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#include "support.h"

enum { kMostThreads = 64 };

static int rank, other_rank;
static long exchanges;

/* What thread `tag` of `from_rank` sends in exchange `i`. */
static long value_sent(int from_rank, int tag, long i) { return (from_rank + 1) * 1000003L * (tag + 1) + i; }

static void* exchange_with_peer(void* argument) {
  const int tag = (int)(long)argument;
  long sum = 0;
  for (long i = 0; i < exchanges; ++i) {
    long sent = value_sent(rank, tag, i), received = -1;
    if (i % 2 == 0) {
      MPI_Sendrecv(&sent, 1, MPI_LONG, other_rank, tag, &received, 1, MPI_LONG, other_rank, tag, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    } else {
      MPI_Request requests[2];
      MPI_Status statuses[2];
      MPI_Irecv(&received, 1, MPI_LONG, other_rank, tag, MPI_COMM_WORLD, &requests[0]);
      MPI_Isend(&sent, 1, MPI_LONG, other_rank, tag, MPI_COMM_WORLD, &requests[1]);
      MPI_Waitall(2, requests, statuses);
    }
    /* Messages of one tag arrive in order: any other value is a lost or mixed-up message. */
    if (received != value_sent(other_rank, tag, i)) {
      fprintf(stderr, "threads_stress: rank %d thread %d exchange %ld received %ld, expected %ld\n", rank, tag, i,
              received, value_sent(other_rank, tag, i));
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    sum += received % 1000;
  }
  return (void*)sum;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  rank = world_rank_checked(2, 2);
  other_rank = 1 - rank;
  const long threads = count_argument(argc, argv, 1, "threads per rank");
  exchanges = count_argument(argc, argv, 2, "exchanges per thread");
  const double compute_seconds = seconds_argument(argc, argv, 3, "rank 0's computation after the exchanges");
  if (threads > kMostThreads) {
    if (rank == 0) fprintf(stderr, "threads_stress: at most %d threads per rank, got %ld\n", kMostThreads, threads);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  pthread_t workers[kMostThreads];
  for (long t = 0; t < threads; ++t) pthread_create(&workers[t], NULL, exchange_with_peer, (void*)t);
  long total = 0;
  for (long t = 0; t < threads; ++t) {
    void* sum = NULL;
    pthread_join(workers[t], &sum);
    total += (long)sum;
  }
  if (rank == 0) compute_for(compute_seconds);
  long all = 0;
  MPI_Reduce(&total, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("checksum %ld\n", all);
  MPI_Finalize();
  return 0;
}
