/* The correct twin of bad_input's erroneous calls: the same calls under
 * MPI_ERRORS_RETURN, with valid arguments. Rank 0 prints what each returned. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  MPI_Comm checked;
  MPI_Comm_dup(MPI_COMM_WORLD, &checked);
  MPI_Comm_set_errhandler(checked, MPI_ERRORS_RETURN);
  int values[4] = {1, 2, 3, 4};
  int errors = 0;
  const int peer = rank == 0 ? 1 : 0;
  if (rank < 2) {
    errors += MPI_Sendrecv_replace(values, 4, MPI_INT, peer, 0, peer, 0, checked, MPI_STATUS_IGNORE) != MPI_SUCCESS;
    MPI_Request request;
    errors += MPI_Irecv(values, 4, MPI_INT, peer, 1, checked, &request) != MPI_SUCCESS;
    errors += MPI_Send(values, 4, MPI_INT, peer, 1, checked) != MPI_SUCCESS;
    errors += MPI_Wait(&request, MPI_STATUS_IGNORE) != MPI_SUCCESS;
  }
  errors += MPI_Bcast(values, 4, MPI_INT, 0, checked) != MPI_SUCCESS;
  errors += MPI_Barrier(checked) != MPI_SUCCESS;
  MPI_Comm_free(&checked);
  if (rank == 0) printf("calls that returned an error: %d\n", errors);
  MPI_Finalize();
  return 0;
}
