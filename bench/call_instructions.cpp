// A fixed number of the calls bench/call_cost times (MPI_Irecv, MPI_Isend,
// MPI_Waitall on all of them, MPI_Iprobe finding nothing, on 1 rank to
// itself), for bench/instructions to count under callgrind: what each call
// executes is then exact, where call_cost's times are noisy.
//   call_instructions [ROUNDS [WINDOW]]: each round WINDOW receives and
//   sends (1 by default; call_cost's is 64), then the Waitall and the probe.
#include <mpi.h>

#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long rounds = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 10000;
  const int window = argc > 2 ? std::atoi(argv[2]) : 1;
  std::vector<double> sent(window, 1.0), received(window);
  std::vector<MPI_Request> requests(2 * window);
  for (long i = 0; i < rounds; ++i) {
    for (int k = 0; k < window; ++k) {
      MPI_Irecv(&received[k], 1, MPI_DOUBLE, 0, k, MPI_COMM_WORLD, &requests[2 * k]);
      MPI_Isend(&sent[k], 1, MPI_DOUBLE, 0, k, MPI_COMM_WORLD, &requests[2 * k + 1]);
    }
    MPI_Waitall(2 * window, requests.data(), MPI_STATUSES_IGNORE);
    int found = 0;
    MPI_Iprobe(0, 1, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
