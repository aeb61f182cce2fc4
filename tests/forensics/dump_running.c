/* A healthy job to dump: every rank computes and exchanges with its
 * neighbours for argv[1] seconds (rank 0's clock decides), and rank 0 says
 * "ready" once all have started. With argv[2] "own-handler" every rank first
 * installs a SIGUSR1 handler of its own (before MPI_Init, as applications
 * do) that counts its calls, and rank 0 prints each rank's count at the end:
 * a checker dumping on SIGUSR1 must keep it working. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

static volatile sig_atomic_t own_handler_calls;

static void count_call(int signal_number) {
  (void)signal_number;
  own_handler_calls = own_handler_calls + 1;
}

static void install_counting_handler(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = count_call;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &action, NULL);
}

/* One step: compute, pass a value around the ring, and learn from rank 0
 * whether to go on. */
static int step(int rank, int size, double end) {
  compute_for(0.05);
  int value = rank;
  int received = 0;
  MPI_Sendrecv(&value, 1, MPI_INT, (rank + 1) % size, 0, &received, 1, MPI_INT, (rank + size - 1) % size, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int go_on = rank == 0 && now_seconds() < end;
  MPI_Bcast(&go_on, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return go_on;
}

int main(int argc, char** argv) {
  const int own_handler = argc > 2;
  if (own_handler) install_counting_handler();
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  static const char* const kOptions[] = {"own-handler"};
  if (own_handler) variant_argument(argc, argv, 2, "what every rank adds", kOptions, 1);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double end = now_seconds() + seconds_argument(argc, argv, 1, "how long the ranks run");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("ready\n");
    fflush(stdout);
  }
  while (step(rank, size, end)) continue;
  if (own_handler) {
    int calls[64] = {0};
    const int own_calls = own_handler_calls;
    MPI_Gather(&own_calls, 1, MPI_INT, calls, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < size && r < 64; ++r) printf("rank %d: own SIGUSR1 handler ran %d time(s)\n", r, calls[r]);
  }
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
