// Detection latency: every rank enters a final MPI_Recv that never matches
// (from its right neighbour, which receives too). Just before, each rank
// writes the moment it enters, CLOCK_REALTIME in nanoseconds, to
// <folder>/entry.<rank>, so that the driver can compare it with the time of
// the checker's report.
#include <mpi.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2) {
    if (rank == 0) std::fprintf(stderr, "usage: stuck_receive <folder for the entry times>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const std::string path = std::string(argv[1]) + "/entry." + std::to_string(rank);
  const int file = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (file < 0) {
    std::fprintf(stderr, "stuck_receive: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  timespec entry{};
  clock_gettime(CLOCK_REALTIME, &entry);
  char text[32];
  const int length = std::snprintf(text, sizeof(text), "%lld\n", entry.tv_sec * 1000000000LL + entry.tv_nsec);
  if (write(file, text, static_cast<std::size_t>(length)) != length) {
    std::fprintf(stderr, "stuck_receive: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  close(file);
  int never = 0;
  MPI_Recv(&never, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
