/* Rank 1 dereferences a null pointer outside MPI while rank 0 waits for it
 * in MPI_Recv. With argv[1] "own-handler" every rank first installs a
 * SIGSEGV handler of its own (before MPI_Init, as applications do) that
 * writes a line to stdout and ends the rank with _exit(7): the checker must
 * keep it working. With "after-computing" rank 1 computes for half a second
 * after its last MPI call before it crashes. */
#include <mpi.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

static int* volatile nowhere;

static void write_line_and_exit(int signal_number) {
  (void)signal_number;
  static const char text[] = "own SIGSEGV handler ran\n";
  ssize_t written = write(STDOUT_FILENO, text, sizeof text - 1);
  (void)written;
  _exit(7);
}

static void install_exiting_handler(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = write_line_and_exit;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, NULL);
}

/* The store to null is the crash the tests check for: UBSan (scripts/sanitize
 * address) would report it and exit before the SIGSEGV, so it is left out of
 * UBSan's checks here. Without a sanitizer the attribute does nothing. */
__attribute__((no_sanitize("undefined"))) static void crash_here(void) {
  *nowhere = 1; /* mpisentry: crashes */
}

static void wait_for_rank_1(void) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  static const char* const kOptions[] = {"own-handler", "after-computing"};
  const int variant = argc > 1 ? variant_argument(argc, argv, 1, "what rank 1 does", kOptions, 2) : -1;
  if (variant == 0) install_exiting_handler();
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    wait_for_rank_1();
  } else {
    if (variant == 1) compute_for(0.5);
    crash_here();
  }
  MPI_Finalize();
  return 0;
}
