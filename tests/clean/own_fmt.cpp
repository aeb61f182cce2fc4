// A program with fmt of its own: linked against Debian's libfmt.so and built
// with -rdynamic, so its fmt symbols are in the global scope the preloaded
// library could bind to. The checker's fmt is compiled into it and hidden:
// neither may take the other's place. "correct" exchanges around a ring;
// "hang" sends synchronously first on every rank, a deadlock.
#include <mpi.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int value = rank, got = -1;
  if (argc > 1 && std::strcmp(argv[1], "hang") == 0) {
    MPI_Ssend(&value, 1, MPI_INT, right, 0, MPI_COMM_WORLD); /* mpisentry: blocks */
    MPI_Recv(&got, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Sendrecv(&value, 1, MPI_INT, right, 0, &got, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (rank == 0) std::puts(fmt::format("rank {} of {} got {}: {:.3f} {:>4}", rank, size, got, 3.14159, "ok").c_str());
  MPI_Finalize();
}
