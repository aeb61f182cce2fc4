/* Correct and slow: every rank waits with MPI_Wait for an MPI_Iallreduce
 * whose user-defined operation sleeps, until argv[1] seconds have passed
 * since the rank started the reduction, the first time it runs: the ranks
 * are inside MPI all that time, and the reduction still progresses. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#include "support.h"

static double reduction_deadline = 0;

static void sleep_until(double deadline) {
  for (double left = deadline - now_seconds(); left > 0; left = deadline - now_seconds()) {
    struct timespec pause = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
    nanosleep(&pause, NULL);
  }
}

static void slow_sum(void* in, void* inout, int* count, MPI_Datatype* datatype) {
  (void)datatype;
  sleep_until(reduction_deadline);
  for (int i = 0; i < *count; ++i) ((int*)inout)[i] += ((const int*)in)[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  const double sleep_seconds = seconds_argument(argc, argv, 1, "the reduction's duration");
  MPI_Op op;
  MPI_Op_create(slow_sum, 1, &op);
  const int mine = rank + 1;
  int sum = 0;
  MPI_Request request;
  reduction_deadline = now_seconds() + sleep_seconds;
  MPI_Iallreduce(&mine, &sum, 1, MPI_INT, op, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Op_free(&op);
  if (rank == 0) printf("sum %d\n", sum);
  MPI_Finalize();
  return 0;
}
