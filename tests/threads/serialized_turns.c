/* Deadlock at MPI_THREAD_SERIALIZED: on each of 2 ranks, worker threads take
 * turns at MPI under the program's own mutex, each turn an MPI_Sendrecv
 * with its own rank (a turn that waited for the other rank while holding the
 * mutex could deadlock outside MPI); then worker 1, once worker 0 has ended
 * (else worker 0 could wait for the mutex forever, outside MPI), takes a last
 * turn and waits in MPI_Recv from the other rank with a tag that no send uses. The
 * main thread, which initialized MPI, hands the work to the workers and
 * leaves with pthread_exit: the rank's only thread in MPI is worker 1. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#include "support.h"

enum { kWorkers = 2, kTurns = 50 };

static pthread_mutex_t mpi_turn = PTHREAD_MUTEX_INITIALIZER;
static pthread_t workers[kWorkers];
static int rank;

static void last_turn(void) {
  int value = 0;
  pthread_mutex_lock(&mpi_turn);
  MPI_Recv(&value, 1, MPI_INT, 1 - rank, 100 + rank, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  pthread_mutex_unlock(&mpi_turn);
}

static void* take_turns(void* argument) {
  const int worker = (int)(long)argument;
  for (int turn = 0; turn < kTurns; ++turn) {
    int sent = turn, received = -1;
    pthread_mutex_lock(&mpi_turn);
    MPI_Sendrecv(&sent, 1, MPI_INT, rank, worker, &received, 1, MPI_INT, rank, worker, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    pthread_mutex_unlock(&mpi_turn);
  }
  if (worker == 1) {
    pthread_join(workers[0], NULL);
    last_turn();
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    fprintf(stderr, "serialized_turns: needs MPI_THREAD_SERIALIZED, MPI provides level %d\n", provided);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  rank = world_rank_checked(2, 2);
  for (long w = 0; w < kWorkers; ++w) pthread_create(&workers[w], NULL, take_turns, (void*)w);
  pthread_exit(NULL);
}
