// A job to dump on demand: rank 0 computes for <seconds> outside MPI while
// every other rank waits for its result in MPI_Allreduce, as ranks do behind
// a slow one ("wait", the default; MPICH polls meanwhile, so they keep the
// cores busy), or sleeps outside MPI for as long first ("sleep": the cores
// are left to rank 0 and the checker). Rank 0 prints "ready" once every rank
// is past MPI_Init (so that the checker's signal handlers are in place
// everywhere) and "done" once the MPI_Allreduce is over, on stdout, for
// bench/driver.py.
#include <mpi.h>

#include "measure.hpp"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

// Arithmetic until `seconds` have passed, timed with the C++ clock rather than
// MPI_Wtime, so that the rank makes no MPI call meanwhile.
double compute_for(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  double sum = 0;
  for (long i = 1; std::chrono::steady_clock::now() < end; ++i)
    for (int j = 0; j < 10000; ++j) sum += std::sqrt(static_cast<double>(i + j));
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char* end = nullptr;
  const double seconds = argc >= 2 ? std::strtod(argv[1], &end) : -1;
  const char* others = argc == 3 ? argv[2] : "wait";
  const bool others_sleep = std::strcmp(others, "sleep") == 0;
  if (argc < 2 || argc > 3 || *end != '\0' || !(seconds > 0) || (!others_sleep && std::strcmp(others, "wait") != 0)) {
    if (rank == 0)
      std::fprintf(stderr, "usage: one_computes <seconds rank 0 computes, > 0> [wait|sleep]; got '%s' '%s'\n",
                   argc > 1 ? argv[1] : "", argc > 2 ? argv[2] : "");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("ready\n");
    std::fflush(stdout);
  }
  double mine = 0;
  if (rank == 0)
    mine = compute_for(seconds);
  else if (others_sleep)
    bench::sleep_whole(seconds);
  double total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("done %g\n", total);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
