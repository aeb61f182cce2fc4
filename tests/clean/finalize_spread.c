/* Ranks reach MPI_Finalize far apart (rank r sleeps 1.5 r seconds first):
 * waiting in MPI_Finalize for slower ranks is not a deadlock. */
#include <mpi.h>
#include <time.h>

#include "support.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  const double delay = 1.5 * rank;
  struct timespec pause = {(time_t)delay, (long)((delay - (time_t)delay) * 1e9)};
  nanosleep(&pause, NULL);
  MPI_Finalize();
  return 0;
}
