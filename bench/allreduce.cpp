// MPI_Allreduce (MPI_SUM of doubles) of 8 B and of 1 MiB on 4 ranks, timed
// by rank 0. Prints the median time per call in seconds.
#include <mpi.h>

#include <vector>

#include "measure.hpp"

namespace {

double allreduce_seconds(int bytes, const bench::Blocks& blocks) {
  const auto count = static_cast<std::size_t>(bytes) / sizeof(double);
  std::vector<double> mine(count, 1.0), sum(count);
  return bench::median_seconds_per_operation(blocks, [&] {
    MPI_Allreduce(mine.data(), sum.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  });
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = bench::rank_checked("allreduce", 4);
  const double small = allreduce_seconds(8, {.warmup = 2, .per_block = 10, .seconds = 1.0});
  const double large = allreduce_seconds(1024 * 1024, {.warmup = 1, .per_block = 2, .seconds = 1.0});
  if (rank == 0) {
    bench::print_result("allreduce_8B", small);
    bench::print_result("allreduce_1MiB", large);
  }
  MPI_Finalize();
  return 0;
}
