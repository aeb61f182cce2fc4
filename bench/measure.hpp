// What the benchmark programs share: the rank-count check and timing by
// blocks. On a shared machine a run's mean is dominated by preemptions; the
// median over blocks of the time per operation is not (see the MPICH probe
// notes, section 4). Results go to stdout as "RESULT <name> <value>" lines
// for bench/driver.py.
#pragma once

#include <mpi.h>

#include <time.h>

#include <algorithm>
#include <cerrno>
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
  int warmup;       // untimed, so that buffers, caches and connections are set up
  int per_block;    // operations per block
  double seconds;   // timed blocks run until this budget is spent...
  int least = 10;   // ...but at least this many
  int most = 1000;  // and at most this many
};

// Median over the timed blocks of the seconds per operation; after each
// block, `go_on(blocks done, its end, deadline)` says whether to time another
// one (deadline: the budget's end, counted from the first timed block).
template <class Operation, class GoOn>
double median_seconds_per_operation(const Blocks& blocks, Operation&& operation, GoOn&& go_on) {
  for (int i = 0; i < blocks.warmup * blocks.per_block; ++i) operation();
  std::vector<double> per_operation;
  const double deadline = MPI_Wtime() + blocks.seconds;
  for (bool more = true; more;) {
    const double start = MPI_Wtime();
    for (int i = 0; i < blocks.per_block; ++i) operation();
    const double end = MPI_Wtime();
    per_operation.push_back((end - start) / blocks.per_block);
    more = go_on(static_cast<int>(per_operation.size()), end, deadline);
  }
  return median(per_operation);
}

// Every rank of MPI_COMM_WORLD calls this with the same Blocks; rank 0
// decides when to stop (a budget keeps a run short when the machine is busy).
template <class Operation>
double median_seconds_per_operation(const Blocks& blocks, Operation&& operation) {
  return median_seconds_per_operation(blocks, operation, [&](int done, double end, double deadline) {
    int go_on = done < blocks.most && (done < blocks.least || end < deadline);
    // Outside the timed part: every rank runs as many blocks as rank 0.
    MPI_Bcast(&go_on, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return go_on != 0;
  });
}

// For one of several threads of a rank, timing itself: no collective (the
// threads would share its communicator), each thread has its own budget.
template <class Operation>
double median_seconds_per_operation_in_thread(const Blocks& blocks, Operation&& operation) {
  return median_seconds_per_operation(blocks, operation, [&](int done, double end, double deadline) {
    return done < blocks.most && (done < blocks.least || end < deadline);
  });
}

inline void print_result(const char* name, double value) { std::printf("RESULT %s %.9g\n", name, value); }

// Sleeps the whole time even when signals (the checker's) interrupt it.
inline void sleep_whole(double seconds) {
  timespec left{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<time_t>(seconds)) * 1e9)};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

}  // namespace bench
