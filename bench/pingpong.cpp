// Ping-pong latency between 2 ranks, 8 B and 64 KiB: MPI_Send / MPI_Recv
// round trips timed by rank 0. Prints the median round-trip time in seconds.
#include <mpi.h>

#include <vector>

#include "measure.hpp"

namespace {

double round_trip_seconds(int rank, int bytes, const bench::Blocks& blocks) {
  std::vector<char> buffer(static_cast<std::size_t>(bytes), 1);
  const int peer = 1 - rank;
  return bench::median_seconds_per_operation(blocks, [&] {
    if (rank == 0) {
      MPI_Send(buffer.data(), bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(buffer.data(), bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buffer.data(), bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = bench::rank_checked("pingpong", 2);
  const double small = round_trip_seconds(rank, 8, {.warmup = 2, .per_block = 500, .seconds = 0.6});
  const double large = round_trip_seconds(rank, 64 * 1024, {.warmup = 2, .per_block = 50, .seconds = 0.6});
  if (rank == 0) {
    bench::print_result("pingpong_8B", small);
    bench::print_result("pingpong_64KiB", large);
  }
  MPI_Finalize();
  return 0;
}
