/* MPI from a session alone (MPI 4.0): no MPI_Init. A communicator made
 * from the session's world group sums each rank's 1 with MPI_Allreduce;
 * rank 0 prints the sum. */
#include <mpi.h>
#include <stdio.h>

int main(void) {
  MPI_Session session;
  MPI_Group group;
  MPI_Comm comm;
  MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
  MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
  MPI_Comm_create_from_group(group, "org.mpisentry.sessions_only", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
  int rank, one = 1, sum = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
  if (rank == 0) printf("sessions_only: sum %d\n", sum);
  MPI_Comm_free(&comm);
  MPI_Group_free(&group);
  MPI_Session_finalize(&session);
  return 0;
}
