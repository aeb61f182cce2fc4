// Message rate between 2 ranks: each window, both ranks post 64 MPI_Irecv
// and 64 MPI_Isend of 8 B to each other, then one MPI_Waitall. Prints the
// median time per window in seconds (128 messages, 64 each way).
#include <mpi.h>

#include <array>

#include "measure.hpp"

namespace {

constexpr int kWindow = 64;

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = bench::rank_checked("message_rate", 2);
  const int peer = 1 - rank;
  std::array<double, kWindow> sent{}, received{};
  std::array<MPI_Request, 2 * kWindow> requests{};
  const double window = bench::median_seconds_per_operation({.warmup = 2, .per_block = 20, .seconds = 0.8}, [&] {
    for (int i = 0; i < kWindow; ++i) {
      MPI_Irecv(&received[i], 1, MPI_DOUBLE, peer, i, MPI_COMM_WORLD, &requests[i]);
      MPI_Isend(&sent[i], 1, MPI_DOUBLE, peer, i, MPI_COMM_WORLD, &requests[kWindow + i]);
    }
    MPI_Waitall(2 * kWindow, requests.data(), MPI_STATUSES_IGNORE);
  });
  if (rank == 0) bench::print_result("message_window", window);
  MPI_Finalize();
  return 0;
}
