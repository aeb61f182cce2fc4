/* After MPI_Init each rank installs a handler of its own for SIGRTMIN+3, the
 * checker's default stack capture signal, and raises it: the handler must
 * run. Then both ranks receive from each other first (a hard deadlock) and
 * the report must still show where. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>

#include "support.h"

static volatile sig_atomic_t handled = 0;

static void count_signal(int signal_number) {
  (void)signal_number;
  handled = handled + 1;
}

static void exchange(int rank) {
  const int peer = 1 - rank;
  int value = rank;
  MPI_Recv(&value, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  MPI_Send(&value, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  struct sigaction action = {0};
  action.sa_handler = count_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGRTMIN + 3, &action, NULL);
  raise(SIGRTMIN + 3);
  printf("rank %d: own handler ran %d time(s)\n", rank, (int)handled);
  fflush(stdout);
  exchange(rank);
  MPI_Finalize();
  return 0;
}
