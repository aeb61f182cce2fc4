/* Point-to-point corner cases whose results must not depend on how the
 * checker runs blocking calls (PATIENT-WAITS on or off): errors returned on a
 * communicator with MPI_ERRORS_RETURN while MPI_COMM_WORLD keeps
 * MPI_ERRORS_ARE_FATAL, no receive left behind by a failed one, MPI_PROC_NULL
 * peers, zero counts, null requests, ignored statuses. Rank 1 prints what
 * every call returned. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

/* GCC 12 warns that MPI_STATUSES_IGNORE is an array of size 0. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

enum { kTag = 1 };

static const char* class_name(int code) {
  int error_class = MPI_SUCCESS;
  MPI_Error_class(code, &error_class);
  switch (error_class) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
    default: return "another error class";
  }
}

static void sender(MPI_Comm comm) {
  const int two[2] = {1, 2};
  const int fourty_two = 42;
  MPI_Send(two, 2, MPI_INT, 1, kTag, comm);         /* truncated by MPI_Recv */
  MPI_Send(&fourty_two, 1, MPI_INT, 1, kTag, comm); /* must reach the next MPI_Recv */
  int got = 0;
  MPI_Sendrecv(&fourty_two, 1, MPI_INT, 1, kTag, &got, 1, MPI_INT, 1, kTag, comm, MPI_STATUS_IGNORE);
  MPI_Send(two, 2, MPI_INT, 1, kTag, comm);  /* truncated by MPI_Sendrecv */
  MPI_Send(NULL, 0, MPI_INT, 1, kTag, comm); /* zero count */
  MPI_Send(two, 2, MPI_INT, 1, kTag, comm);  /* truncated under MPI_Wait */
}

static void receiver(MPI_Comm comm) {
  int buffer[2] = {0, 0};
  MPI_Status status;
  int code = MPI_Recv(buffer, 1, MPI_INT, 0, kTag, comm, &status);
  printf("MPI_Recv of 2 ints into 1: %s\n", class_name(code));

  buffer[0] = 0;
  code = MPI_Recv(buffer, 1, MPI_INT, 0, kTag, comm, MPI_STATUS_IGNORE);
  printf("next MPI_Recv: %s, value %d\n", class_name(code), buffer[0]);

  const int seven = 7;
  code = MPI_Sendrecv(&seven, 1, MPI_INT, 0, kTag, buffer, 1, MPI_INT, 0, kTag, comm, &status);
  printf("MPI_Sendrecv: %s, value %d\n", class_name(code), buffer[0]);
  code = MPI_Sendrecv(&seven, 0, MPI_INT, MPI_PROC_NULL, kTag, buffer, 1, MPI_INT, 0, kTag, comm, &status);
  printf("MPI_Sendrecv of 2 ints into 1: %s\n", class_name(code));

  int count = -1;
  code = MPI_Recv(buffer, 1, MPI_INT, 0, kTag, comm, &status);
  MPI_Get_count(&status, MPI_INT, &count);
  printf("MPI_Recv of 0 ints: %s, count %d, source %d\n", class_name(code), count, status.MPI_SOURCE);

  code = MPI_Recv(buffer, 1, MPI_INT, MPI_PROC_NULL, kTag, comm, &status);
  MPI_Get_count(&status, MPI_INT, &count);
  printf("MPI_Recv from MPI_PROC_NULL: %s, count %d, source is MPI_PROC_NULL %d, tag is MPI_ANY_TAG %d\n",
         class_name(code), count, status.MPI_SOURCE == MPI_PROC_NULL, status.MPI_TAG == MPI_ANY_TAG);

  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  code = MPI_Wait(&requests[0], &status);
  printf("MPI_Wait on MPI_REQUEST_NULL: %s, source is MPI_ANY_SOURCE %d\n", class_name(code),
         status.MPI_SOURCE == MPI_ANY_SOURCE);
  code = MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  printf("MPI_Waitall on null requests: %s\n", class_name(code));
  int index = 0;
  code = MPI_Waitany(2, requests, &index, MPI_STATUS_IGNORE);
  printf("MPI_Waitany on null requests: %s, index is MPI_UNDEFINED %d\n", class_name(code), index == MPI_UNDEFINED);
  int indices[2];
  code = MPI_Waitsome(2, requests, &count, indices, MPI_STATUSES_IGNORE);
  printf("MPI_Waitsome on null requests: %s, outcount is MPI_UNDEFINED %d\n", class_name(code),
         count == MPI_UNDEFINED);

  /* MPI_Wait raises a request's error on MPI_COMM_WORLD's handler, with or
   * without the checker: let it return too. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  code = MPI_Irecv(buffer, 1, MPI_INT, 0, kTag, comm, &requests[0]);
  if (code == MPI_SUCCESS) code = MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  printf("MPI_Wait for 2 ints into 1: %s, request is MPI_REQUEST_NULL %d\n", class_name(code),
         requests[0] == MPI_REQUEST_NULL);
  fflush(stdout);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  if (rank == 0)
    sender(comm);
  else
    receiver(comm);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
