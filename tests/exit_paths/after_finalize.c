/* Bad input: every rank calls MPI_Allreduce after MPI_Finalize. MPICH
 * prints that its internal_Allreduce was called after finalizing and ends
 * the process; under the checker MPI's words must be the same. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int in = 1, out = 0;
  MPI_Finalize();
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return 0;
}
