// A fixed number of the calls bench/call_cost times (MPI_Irecv, MPI_Isend,
// MPI_Waitall on both, MPI_Iprobe finding nothing, on 1 rank to itself), for
// bench/instructions to count under callgrind: what each call executes is
// then exact, where call_cost's times are noisy.
#include <mpi.h>

#include <cstdlib>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long rounds = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 10000;
  double sent = 1, received = 0;
  MPI_Request requests[2];
  for (long i = 0; i < rounds; ++i) {
    MPI_Irecv(&received, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend(&sent, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &requests[1]);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    int found = 0;
    MPI_Iprobe(0, 1, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
