/* Correct exchanges from 4 threads at MPI_THREAD_MULTIPLE, for the message
 * and request checks: each thread of each rank posts windows of 16 MPI_Irecv
 * and 16 MPI_Isend to the other rank (argv[1] "peer") or to itself ("self")
 * on tags of its own, and completes each window by MPI_Waitall, by
 * MPI_Wait one by one, by MPI_Waitany or by MPI_Testsome, in turn. MPI frees
 * a completed request's handle inside the call and may hand it to another
 * thread's start before the completing thread's wrapper returns: nothing
 * may be reported. Prints "windows done" on rank 0. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { kThreads = 4, kWindow = 16, kWindows = 4000 };

static int rank, peer;

static void complete_window(MPI_Request* requests, int count, int way) {
  switch (way) {
    case 0:
      MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
      return;
    case 1:
      for (int i = 0; i < count; ++i) MPI_Wait(&requests[i], MPI_STATUS_IGNORE);
      return;
    case 2:
      for (int left = count; left > 0; --left) {
        int index;
        MPI_Waitany(count, requests, &index, MPI_STATUS_IGNORE);
      }
      return;
    default: {
      int indices[2 * kWindow];
      for (int left = count; left > 0;) {
        int done = 0;
        MPI_Testsome(count, requests, &done, indices, MPI_STATUSES_IGNORE);
        if (done != MPI_UNDEFINED) left -= done;
      }
    }
  }
}

static void* exchange(void* arg) {
  const int thread = (int)(long)arg;
  int sent[kWindow], received[kWindow];
  MPI_Request requests[2 * kWindow];
  for (int window = 0; window < kWindows; ++window) {
    for (int i = 0; i < kWindow; ++i) {
      const int tag = thread * kWindow + i;
      sent[i] = window;
      MPI_Irecv(&received[i], 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &requests[i]);
      MPI_Isend(&sent[i], 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &requests[kWindow + i]);
    }
    complete_window(requests, 2 * kWindow, (window + thread) % 4);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE || argc < 2) {
    fprintf(stderr, "msg_threads: needs MPI_THREAD_MULTIPLE and an argument, self or peer\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  peer = strcmp(argv[1], "self") == 0 ? rank : 1 - rank;
  pthread_t threads[kThreads];
  for (long t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, exchange, (void*)t);
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  if (rank == 0) printf("windows done\n");
  MPI_Finalize();
  return 0;
}
