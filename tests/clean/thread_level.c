/* Prints the thread level that MPI_Init_thread gives for argv[1] (single,
 * funneled, serialized, multiple; none: plain MPI_Init) and what
 * MPI_Query_thread says: the checker asks MPI for MPI_THREAD_MULTIPLE for
 * itself, and the program must still see what it would have seen. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static const char* const kLevelNames[] = {"single", "funneled", "serialized", "multiple"};

static int level_named(const char* name) {
  for (int level = 0; level < 4; ++level)
    if (strcmp(name, kLevelNames[level]) == 0) return level;
  return -1;
}

int main(int argc, char** argv) {
  const int wanted = argc > 1 ? level_named(argv[1]) : -1;
  const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE};
  int provided = -1;
  if (wanted < 0)
    MPI_Init(&argc, &argv);
  else
    MPI_Init_thread(&argc, &argv, levels[wanted], &provided);
  int queried = -1;
  MPI_Query_thread(&queried);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int level = 0; level < 4; ++level) {
    if (rank == 0 && provided == levels[level]) printf("provided %s\n", kLevelNames[level]);
    if (rank == 0 && queried == levels[level]) printf("queried %s\n", kLevelNames[level]);
  }
  MPI_Finalize();
  return 0;
}
