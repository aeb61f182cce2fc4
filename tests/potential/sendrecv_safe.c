/* A ring shift done right, with MPI_Sendrecv: safe whatever MPI buffers.
 * Rank 0 prints a sum of what went round, to compare runs. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

enum { kShifts = 100 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  long long value = rank + 1;
  long long received_sum = 0;
  for (int shift = 0; shift < kShifts; ++shift) {
    long long incoming = 0;
    MPI_Sendrecv(&value, 1, MPI_LONG_LONG, right, shift, &incoming, 1, MPI_LONG_LONG, left, shift,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    received_sum += incoming * (shift + 1);
    value = incoming + 1;
  }
  long long total = 0;
  MPI_Reduce(&received_sum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("ring sum %lld\n", total);
  MPI_Finalize();
  return 0;
}
