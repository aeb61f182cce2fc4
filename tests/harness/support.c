#define _GNU_SOURCE  /* program_invocation_short_name */
#include "support.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int world_rank(void) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

static void abort_job(void) {
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

int world_rank_checked(int min_ranks, int max_ranks) {
  const int rank = world_rank();
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < min_ranks || (max_ranks > 0 && size > max_ranks)) {
    if (rank == 0) {
      fprintf(stderr, "%s: needs %s %d ranks, runs on %d\n", program_invocation_short_name,
              max_ranks == 0 ? "at least" : "exactly", min_ranks, size);
    }
    abort_job();
  }
  return rank;
}

void require_thread_multiple(int provided) {
  if (provided == MPI_THREAD_MULTIPLE) return;
  if (world_rank() == 0)
    fprintf(stderr, "%s: needs MPI_THREAD_MULTIPLE, MPI provides level %d\n", program_invocation_short_name,
            provided);
  abort_job();
}

/* Every rank checks its arguments, rank 0 alone says what is wrong. */
double seconds_argument(int argc, char** argv, int index, const char* meaning) {
  if (index >= argc) {
    if (world_rank() == 0)
      fprintf(stderr, "%s: argument %d (%s, in seconds) is missing\n", program_invocation_short_name, index, meaning);
    abort_job();
  }
  char* end = NULL;
  errno = 0;
  double seconds = strtod(argv[index], &end);
  if (errno != 0 || end == argv[index] || *end != '\0' || seconds < 0) {
    if (world_rank() == 0)
      fprintf(stderr, "%s: argument %d (%s) must be a number of seconds >= 0, got '%s'\n",
              program_invocation_short_name, index, meaning, argv[index]);
    abort_job();
  }
  return seconds;
}

long count_argument(int argc, char** argv, int index, const char* meaning) {
  char* end = NULL;
  errno = 0;
  const long count = index < argc ? strtol(argv[index], &end, 10) : 0;
  if (index >= argc || errno != 0 || end == argv[index] || *end != '\0' || count < 1) {
    if (world_rank() == 0)
      fprintf(stderr, "%s: argument %d (%s) must be a whole number >= 1, got '%s'\n", program_invocation_short_name,
              index, meaning, index < argc ? argv[index] : "nothing");
    abort_job();
  }
  return count;
}

int variant_argument(int argc, char** argv, int index, const char* meaning, const char* const names[], int count) {
  for (int i = 0; index < argc && i < count; ++i)
    if (strcmp(argv[index], names[i]) == 0) return i;
  if (world_rank() == 0) {
    fprintf(stderr, "%s: argument %d (%s) must be one of:", program_invocation_short_name, index, meaning);
    for (int i = 0; i < count; ++i) fprintf(stderr, " %s", names[i]);
    fprintf(stderr, "; got %s\n", index < argc ? argv[index] : "nothing");
  }
  abort_job();
  return -1;
}

double now_seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

void lacks_mpi4(const char* functions) {
  fprintf(stderr, "this MPI (version %d.%d) lacks MPI 4.0's %s\n", MPI_VERSION, MPI_SUBVERSION, functions);
  exit(77);
}

void compute_for(double seconds) {
  /* volatile keeps the arithmetic: the rank must really be busy on the CPU. */
  volatile double sink = 0;
  const double end = now_seconds() + seconds;
  while (now_seconds() < end)
    for (int i = 1; i <= 1000; ++i) sink = sink + 1.0 / i;
}
