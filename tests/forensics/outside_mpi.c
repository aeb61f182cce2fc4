/* Not a deadlock: rank 0 runs outside MPI for argv[2] seconds, spinning
 * ("spin") or asleep ("sleep"), while the other ranks wait for it in
 * MPI_Allreduce; then it joins them.
 * The spin reads the clock once in 2^24 turns only, so that its stack is
 * nearly always the same (spin, main). After a sleep rank 0 prints how long
 * it really slept: one nanosleep, not resumed when a signal cuts it short
 * (as programs do), so that a test sees a checker that interrupts it. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#include "support.h"

static volatile unsigned long sink;

static void spin(double seconds) {
  const double end = now_seconds() + seconds;
  for (unsigned long turn = 1; (turn & 0xffffff) != 0 || now_seconds() < end; ++turn) sink = turn; /* mpisentry: outside [spin] */
}

static void rest(double seconds) {
  const struct timespec duration = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&duration, NULL); /* mpisentry: outside [sleep] */
}

static int sum_of_ranks(int rank) {
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* mpisentry: blocks */
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  static const char* const kWays[] = {"spin", "sleep"};
  const int way = variant_argument(argc, argv, 1, "how rank 0 spends its time outside MPI", kWays, 2);
  const double seconds = seconds_argument(argc, argv, 2, "rank 0's time outside MPI");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const double start = now_seconds();
    if (way == 0) {
      spin(seconds);
    } else {
      rest(seconds);
      printf("rank 0 slept %.3f s of %.3f s\n", now_seconds() - start, seconds);
    }
  }
  const int sum = sum_of_ranks(rank);
  if (rank == 0) printf("sum of ranks: %d\n", sum);
  MPI_Finalize();
  return 0;
}
