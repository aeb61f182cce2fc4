// Every rank leaves main without calling MPI_Finalize, which runs as the
// process exits: with argv[1] "atexit" in an atexit handler registered before
// MPI_Init, with "destructor" in a global object's destructor. MPI allows
// both: the ranks finalize normally.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "support.h"

namespace {

void finalize(const char* where) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Finalize();
  if (rank == 1) {  // one rank prints: the output is the same every run
    std::printf("rank %d finalized in %s\n", rank, where);
    std::fflush(stdout);
  }
}

struct FinalizeOnDestruction {
  bool armed = false;
  ~FinalizeOnDestruction() {
    if (armed) finalize("a global object's destructor");
  }
};

FinalizeOnDestruction finalizer;

}  // namespace

int main(int argc, char** argv) {
  const bool in_destructor = argc > 1 && std::strcmp(argv[1], "destructor") == 0;
  if (!in_destructor) std::atexit([] { finalize("an atexit handler"); });
  MPI_Init(&argc, &argv);
  world_rank_checked(2, 2);
  static const char* const kPlaces[] = {"atexit", "destructor"};
  variant_argument(argc, argv, 1, "where MPI_Finalize runs", kPlaces, 2);
  finalizer.armed = in_destructor;
  int sum = 0;
  const int one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return sum == 2 ? 0 : 1;
}
