// The cost of a single MPI call, on 1 rank so that no peer and no scheduler
// adds noise: windows of 64 MPI_Irecv + 64 MPI_Isend of 8 B to itself and
// one MPI_Waitall (seconds per call, 129 calls per window), and an
// MPI_Iprobe that finds nothing (seconds per call). This is what the
// checker's wrappers add to every call of the rows above.
#include <mpi.h>

#include <array>

#include "measure.hpp"

namespace {

constexpr int kWindow = 64;

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bench::rank_checked("call_cost", 1);
  std::array<double, kWindow> sent{}, received{};
  std::array<MPI_Request, 2 * kWindow> requests{};
  const double window = bench::median_seconds_per_operation({.warmup = 20, .per_block = 20, .seconds = 0.4}, [&] {
    for (int i = 0; i < kWindow; ++i) {
      MPI_Irecv(&received[i], 1, MPI_DOUBLE, 0, i, MPI_COMM_WORLD, &requests[i]);
      MPI_Isend(&sent[i], 1, MPI_DOUBLE, 0, i, MPI_COMM_WORLD, &requests[kWindow + i]);
    }
    MPI_Waitall(2 * kWindow, requests.data(), MPI_STATUSES_IGNORE);
  });
  const double probe = bench::median_seconds_per_operation({.warmup = 2, .per_block = 10000, .seconds = 0.3}, [] {
    int found = 0;
    MPI_Iprobe(0, 0, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE);
  });
  bench::print_result("call_nonblocking", window / (2 * kWindow + 1));
  bench::print_result("call_iprobe", probe);
  MPI_Finalize();
  return 0;
}
