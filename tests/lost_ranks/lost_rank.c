/* One rank, the victim, that the test kills or stops while every other rank
 * waits for it. The victim writes its pid to "victim.pid" (whole, by rename)
 * once the others are about to wait, then:
 *   inside   waits in MPI_Recv from any rank for a tag nobody sends;
 *   outside  sleeps outside MPI;
 *   release  sleeps outside MPI for SECONDS, then gives every rank what it
 *            waits for: the correct twin, stopped and continued by the test.
 * The others wait for it, in the shape asked for:
 *   recv        MPI_Recv from the victim;
 *   collective  MPI_Allreduce on MPI_COMM_WORLD, which the victim enters only
 *               when released;
 *   waitall     MPI_Waitall on two receives from the victim.
 * usage: lost_rank recv|collective|waitall VICTIM inside|outside|release [SECONDS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "support.h"

static const char* const kShapes[] = {"recv", "collective", "waitall"};
enum { kRecv, kCollective, kWaitall };
static const char* const kVictimWays[] = {"inside", "outside", "release"};
enum { kInside, kOutside, kRelease };

static void write_pid(void) {
  FILE* file = fopen("victim.pid.tmp", "w");
  if (!file || fprintf(file, "%d\n", (int)getpid()) < 0 || fclose(file) != 0 || rename("victim.pid.tmp", "victim.pid") != 0) {
    perror("lost_rank: victim.pid");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int shape = variant_argument(argc, argv, 1, "the shape of the waits", kShapes, 3);
  char* end = NULL;
  const long victim = argc > 2 ? strtol(argv[2], &end, 10) : -1;
  const int way = variant_argument(argc, argv, 3, "what the victim does", kVictimWays, 3);
  const double release_after = way == kRelease ? seconds_argument(argc, argv, 4, "the seconds before the release") : 0;
  if (victim < 0 || victim >= size || !end || *end != '\0') {
    if (rank == 0) fprintf(stderr, "lost_rank: the victim (argument 2) must be a rank of the job\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* Every pair of ranks talks once first: MPICH's first message between two
   * ranks may go through the launcher's PMI server, which Hydra then cannot
   * serve for a dead rank (mpiexec asserts and the job collapses). */
  int* everyone = malloc(2 * (size_t)size * sizeof(int));
  for (int other = 0; other < size; ++other) everyone[other] = rank;
  MPI_Alltoall(everyone, 1, MPI_INT, everyone + size, 1, MPI_INT, MPI_COMM_WORLD);
  free(everyone);
  int value = rank, total = 0;
  if (rank == victim) {
    write_pid();
    if (way == kInside) {
      MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: victim [inside] */
    } else if (way == kOutside) {
      while (1) sleep(1); /* mpisentry: victim [outside] */
    } else {
      const double until = now_seconds() + release_after;
      while (now_seconds() < until) usleep(10000);
      if (shape == kCollective) {
        MPI_Allreduce(&value, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      } else {
        for (int other = 0; other < size; ++other)
          for (int tag = 0; other != rank && tag < (shape == kWaitall ? 2 : 1); ++tag)
            MPI_Send(&value, 1, MPI_INT, other, tag, MPI_COMM_WORLD);
      }
    }
  } else if (shape == kRecv) {
    MPI_Recv(&value, 1, MPI_INT, (int)victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: waits [recv] */
  } else if (shape == kCollective) {
    MPI_Allreduce(&value, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* mpisentry: waits [collective] */
  } else {
    int values[2];
    MPI_Request requests[2];
    MPI_Irecv(&values[0], 1, MPI_INT, (int)victim, 0, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(&values[1], 1, MPI_INT, (int)victim, 1, MPI_COMM_WORLD, &requests[1]);
    MPI_Status statuses[2];
    MPI_Waitall(2, requests, statuses); /* mpisentry: waits [waitall] */
  }
  if (rank == 0) printf("lost_rank: done\n");
  MPI_Finalize();
  return 0;
}
