// What the benchmark programs share: the rank-count check and timing by
// blocks. On a shared machine a run's mean is dominated by preemptions; the
// median over blocks of the time per operation is not (see the MPICH probe
// notes, section 4). Results go to stdout as "RESULT <name> <value>" lines
// for bench/driver.py.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace bench {

// This rank's number in MPI_COMM_WORLD; stops the job with a message unless
// it has exactly `ranks` ranks.
inline int rank_checked(const char* program, int ranks) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != ranks) {
    if (rank == 0) std::fprintf(stderr, "%s: needs exactly %d ranks, runs on %d\n", program, ranks, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return rank;
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

struct Blocks {
  int warmup;     // untimed, so that buffers, caches and connections are set up
  int timed;
  int per_block;  // operations per block
};

// Median over the timed blocks of the seconds per operation. Every rank of
// the kernel must call this with the same Blocks.
template <class Operation>
double median_seconds_per_operation(const Blocks& blocks, Operation&& operation) {
  for (int i = 0; i < blocks.warmup * blocks.per_block; ++i) operation();
  std::vector<double> per_operation;
  per_operation.reserve(static_cast<std::size_t>(blocks.timed));
  for (int block = 0; block < blocks.timed; ++block) {
    const double start = MPI_Wtime();
    for (int i = 0; i < blocks.per_block; ++i) operation();
    per_operation.push_back((MPI_Wtime() - start) / blocks.per_block);
  }
  return median(per_operation);
}

inline void print_result(const char* name, double value) { std::printf("RESULT %s %.9g\n", name, value); }

}  // namespace bench
