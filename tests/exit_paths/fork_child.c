/* Each rank forks a child that does not exec and ends by itself: with
 * argv[1] "exit" it calls exit(0), running the exit handlers it inherited;
 * with "crash" it dereferences a null pointer. The rank waits for its child
 * and prints how the child ended; the ranks then finish normally. A child is
 * not a rank: it must end as fast and as it would without the checker. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

static int* volatile nowhere;

/* The store to null is the crash the test checks for: UBSan (scripts/sanitize
 * address) would report it and exit before the SIGSEGV, so it is left out of
 * UBSan's checks here. Without a sanitizer the attribute does nothing. */
__attribute__((no_sanitize("undefined"))) static void crash_child(void) {
  *nowhere = 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  static const char* const kEndings[] = {"exit", "crash"};
  const int crash = variant_argument(argc, argv, 1, "how the child ends", kEndings, 2) == 1;
  MPI_Barrier(MPI_COMM_WORLD);
  fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    if (crash) crash_child();
    exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFSIGNALED(status))
    printf("rank %d: child ended by signal %d\n", rank, WTERMSIG(status));
  else
    printf("rank %d: child exited with status %d\n", rank, WEXITSTATUS(status));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
