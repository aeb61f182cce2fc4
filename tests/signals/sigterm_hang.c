/* Every rank waits for a message that never comes, until the job is ended
 * from outside with SIGTERM. Rank 0 says "ready" once all ranks are about
 * to block, so that the signal is sent only then.
 * With argv[1], a directory, each rank first installs a SIGTERM handler of
 * its own (before MPI_Init, as applications do) that writes the file
 * argv[1]/sigterm.<pid>: the checker must keep it working. */
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "support.h"

static char marker_path[4096];

static void write_marker_and_die(int signal_number) {
  /* Async-signal-safe calls only. */
  const int fd = open(marker_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    static const char text[] = "SIGTERM\n";
    ssize_t written = write(fd, text, sizeof text - 1);
    (void)written;
    close(fd);
  }
  struct sigaction default_action = {0};
  default_action.sa_handler = SIG_DFL;
  sigaction(signal_number, &default_action, NULL);
  raise(signal_number);
}

static void install_marker_handler(const char* directory) {
  snprintf(marker_path, sizeof marker_path, "%s/sigterm.%ld", directory, (long)getpid());
  struct sigaction action = {0};
  action.sa_handler = write_marker_and_die;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, NULL);
}

static void wait_for_anything(void) {
  int message = 0;
  MPI_Recv(&message, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  if (argc > 1) install_marker_handler(argv[1]);
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(1, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("ready\n");
    fflush(stdout);
  }
  wait_for_anything();
  MPI_Finalize();
  return 0;
}
