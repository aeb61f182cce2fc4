/* Each rank installs a handler of its own for SIGRTMIN+3, the checker's
 * default stack capture signal, and raises it after MPI_Init: the handler
 * must run. argv[1] says when the handler is installed: "before" MPI_Init
 * (the checker must choose another signal) or "after" it (the checker must
 * move away). Then both ranks receive from each other first (a hard
 * deadlock) and the report must still show where. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

static volatile sig_atomic_t handled = 0;

static void count_signal(int signal_number) {
  (void)signal_number;
  handled = handled + 1;
}

static void take_signal(void) {
  struct sigaction action = {0};
  action.sa_handler = count_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGRTMIN + 3, &action, NULL);
}

static void exchange(int rank) {
  const int peer = 1 - rank;
  int value = rank;
  MPI_Recv(&value, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  MPI_Send(&value, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  const int before_init = argc > 1 && strcmp(argv[1], "before") == 0;
  if (before_init) take_signal();
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  static const char* const kWhen[] = {"before", "after"};
  variant_argument(argc, argv, 1, "when the handler is installed", kWhen, 2);
  if (!before_init) take_signal();
  raise(SIGRTMIN + 3);
  printf("rank %d: own handler ran %d time(s)\n", rank, (int)handled);
  fflush(stdout);
  exchange(rank);
  MPI_Finalize();
  return 0;
}
