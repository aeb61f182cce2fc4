// A master and 2 workers, every result taken from MPI_ANY_SOURCE: the
// race-heavy program of the RECORD and REPLAY rows. Rank 0 hands out tasks
// of about 20 us of computation, one at a time to whichever worker answered
// first. A fixed number of blocks of tasks, so that a replay makes the same
// calls as its recording. Prints the median time per task.
#include <mpi.h>

#include <vector>

#include "measure.hpp"

namespace {

constexpr int kWorkers = 2;
constexpr int kBlocks = 20;
constexpr int kTasksPerBlock = 400;
constexpr int kTaskTag = 1;
constexpr int kStopTag = 2;

// About 20 us of arithmetic that the compiler cannot drop.
double compute(double seed) {
  double x = seed;
  for (int i = 0; i < 8000; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

// One block: kTasksPerBlock tasks, then a stop to each worker.
void master_block() {
  int handed_out = 0;
  for (int worker = 1; worker <= kWorkers; ++worker, ++handed_out) {
    const double task = handed_out;
    MPI_Send(&task, 1, MPI_DOUBLE, worker, kTaskTag, MPI_COMM_WORLD);
  }
  for (int received = 0; received < kTasksPerBlock; ++received) {
    double result = 0;
    MPI_Status status;
    MPI_Recv(&result, 1, MPI_DOUBLE, MPI_ANY_SOURCE, kTaskTag, MPI_COMM_WORLD, &status);
    const bool more = handed_out < kTasksPerBlock;
    const double task = handed_out;
    MPI_Send(&task, 1, MPI_DOUBLE, status.MPI_SOURCE, more ? kTaskTag : kStopTag, MPI_COMM_WORLD);
    if (more) ++handed_out;
  }
}

// Returns how many messages it received.
int worker_block() {
  for (int received = 1;; ++received) {
    double task = 0;
    MPI_Status status;
    MPI_Recv(&task, 1, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    if (status.MPI_TAG == kStopTag) return received;
    const double result = compute(task);
    MPI_Send(&result, 1, MPI_DOUBLE, 0, kTaskTag, MPI_COMM_WORLD);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = bench::rank_checked("master_worker", kWorkers + 1);
  std::vector<double> per_task;
  int own_receives = 0;
  for (int block = 0; block < kBlocks; ++block) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    if (rank == 0) {
      master_block();
      own_receives += kTasksPerBlock;
    } else {
      own_receives += worker_block();
    }
    per_task.push_back((MPI_Wtime() - start) / kTasksPerBlock);
  }
  // Every receive of the job (rank 0's from MPI_ANY_SOURCE), for the size of a trace that kept each one.
  int receives = 0;
  MPI_Reduce(&own_receives, &receives, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    bench::print_result("master_worker_task", bench::median(per_task));
    bench::print_result("master_worker_wildcard_receives", kBlocks * kTasksPerBlock);
    bench::print_result("master_worker_receives", receives);
  }
  MPI_Finalize();
  return 0;
}
