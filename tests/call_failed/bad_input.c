/* Unusual but valid arguments and erroneous calls, for which the checker
 * must give what MPI gives: MPI_REQUEST_NULL entries, MPI_STATUSES_IGNORE,
 * MPI_PROC_NULL peers and zero counts in the Wait/Test family and
 * MPI_Sendrecv; and, with MPI_ERRORS_RETURN on a duplicate of
 * MPI_COMM_WORLD, a truncated receive and invalid ranks; and, with
 * MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF, calls on
 * MPI_COMM_NULL. Rank 0 prints what
 * each call returned. Ranks 0 and 1 exchange messages; further ranks (to
 * have more ranks than cores) make only the calls without a peer. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

enum { kTruncatedTag = 20, kZeroTag = 21, kSomeTag = 22, kUnsetSource = -77 };

static const char* class_name(int code) {
  int error_class = code;
  if (code != MPI_SUCCESS) MPI_Error_class(code, &error_class);
  switch (error_class) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
    case MPI_ERR_RANK: return "MPI_ERR_RANK";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST";
    case MPI_ERR_COMM: return "MPI_ERR_COMM";
    default: return "another error class";
  }
}

static const char* rank_name(int rank) {
  static char text[32];
  if (rank == MPI_PROC_NULL) return "MPI_PROC_NULL";
  if (rank == MPI_ANY_SOURCE) return "MPI_ANY_SOURCE";
  if (rank == MPI_UNDEFINED) return "MPI_UNDEFINED";
  if (rank == kUnsetSource) return "unset";
  snprintf(text, sizeof text, "%d", rank);
  return text;
}

/* A status whose source says when MPI left it alone. */
static MPI_Status unset_status(void) {
  MPI_Status status;
  memset(&status, 0, sizeof status);
  status.MPI_SOURCE = kUnsetSource;
  return status;
}

static int received_count(const MPI_Status* status) {
  int count = -1;
  MPI_Get_count(status, MPI_INT, &count);
  return count;
}

static void null_requests(int rank) {
  MPI_Request nulls[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int index = 0, outcount = 0, flag = 0;
  int indices[2];
  const int waitall = MPI_Waitall(2, nulls, MPI_STATUSES_IGNORE);
  const int empty = MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE);
  const int waitany = MPI_Waitany(2, nulls, &index, MPI_STATUS_IGNORE);
  const int waitsome = MPI_Waitsome(2, nulls, &outcount, indices, MPI_STATUSES_IGNORE);
  if (rank == 0) {
    printf("Waitall on null requests: %s; on none: %s\n", class_name(waitall), class_name(empty));
    printf("Waitany on null requests: %s, index %s\n", class_name(waitany), rank_name(index));
    printf("Waitsome on null requests: %s, outcount %s\n", class_name(waitsome), rank_name(outcount));
  }
  const int testall = MPI_Testall(2, nulls, &flag, MPI_STATUSES_IGNORE);
  if (rank == 0) printf("Testall on null requests: %s, flag %d\n", class_name(testall), flag);
  const int testany = MPI_Testany(2, nulls, &index, &flag, MPI_STATUS_IGNORE);
  if (rank == 0) printf("Testany on null requests: %s, flag %d, index %s\n", class_name(testany), flag, rank_name(index));
  const int testsome = MPI_Testsome(2, nulls, &outcount, indices, MPI_STATUSES_IGNORE);
  if (rank == 0) printf("Testsome on null requests: %s, outcount %s\n", class_name(testsome), rank_name(outcount));
}

static void null_peers(int rank) {
  int value = 5;
  MPI_Request requests[3];
  MPI_Status statuses[3] = {unset_status(), unset_status(), unset_status()};
  MPI_Irecv(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &requests[1]);
  requests[2] = MPI_REQUEST_NULL;
  const int waitall = MPI_Waitall(3, requests, statuses);
  if (rank == 0)
    printf("Waitall with MPI_PROC_NULL peers: %s, source %s, count %d\n", class_name(waitall),
           rank_name(statuses[0].MPI_SOURCE), received_count(&statuses[0]));
  int index = -1;
  MPI_Status status = unset_status();
  MPI_Irecv(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &requests[1]);
  const int waitany = MPI_Waitany(3, requests, &index, &status);
  if (rank == 0)
    printf("Waitany with an MPI_PROC_NULL receive: %s, index %d, source %s\n", class_name(waitany), index,
           rank_name(status.MPI_SOURCE));
  const int sendrecv = MPI_Sendrecv(&value, 1, MPI_INT, MPI_PROC_NULL, 0, &value, 1, MPI_INT, MPI_PROC_NULL, 0,
                                    MPI_COMM_WORLD, &status);
  if (rank == 0)
    printf("Sendrecv with MPI_PROC_NULL peers: %s, source %s, value %d\n", class_name(sendrecv),
           rank_name(status.MPI_SOURCE), value);
}

static void zero_counts(int rank) {
  const int peer = 1 - rank;
  int value = 0;
  MPI_Status status;
  const int sendrecv =
      MPI_Sendrecv(&value, 0, MPI_INT, peer, kZeroTag, &value, 0, MPI_INT, peer, kZeroTag, MPI_COMM_WORLD, &status);
  if (rank == 0)
    printf("Sendrecv of zero ints: %s, source %s, count %d\n", class_name(sendrecv), rank_name(status.MPI_SOURCE),
           received_count(&status));
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status statuses[2];
  int outcount = 0, indices[2], done = 0;
  MPI_Irecv(&value, 0, MPI_INT, peer, kSomeTag, MPI_COMM_WORLD, &requests[1]);
  MPI_Send(&value, 0, MPI_INT, peer, kSomeTag, MPI_COMM_WORLD);
  while (!done) {
    const int waitsome = MPI_Waitsome(2, requests, &outcount, indices, statuses);
    done = outcount != 0;
    if (rank == 0 && done)
      printf("Waitsome with a zero-int receive: %s, outcount %d, index %d, count %d\n", class_name(waitsome),
             outcount, indices[0], received_count(&statuses[0]));
  }
}

static void erroneous_calls(int rank) {
  MPI_Comm checked;
  MPI_Comm_dup(MPI_COMM_WORLD, &checked);
  MPI_Comm_set_errhandler(checked, MPI_ERRORS_RETURN);
  int values[4] = {1, 2, 3, 4};
  MPI_Status status;
  if (rank == 1) {
    MPI_Send(values, 4, MPI_INT, 0, kTruncatedTag, checked);
  } else if (rank == 0) {
    const int recv = MPI_Recv(values, 1, MPI_INT, 1, kTruncatedTag, checked, &status);
    printf("Recv of 4 ints into 1: %s\n", class_name(recv));
  }
  const int send = MPI_Send(values, 1, MPI_INT, 99, 0, checked);
  const int recv = MPI_Recv(values, 1, MPI_INT, 99, 0, checked, &status);
  const int sendrecv =
      MPI_Sendrecv(values, 1, MPI_INT, 99, 0, values + 1, 1, MPI_INT, MPI_PROC_NULL, 0, checked, &status);
  if (rank == 0)
    printf("rank 99 in Send: %s, in Recv: %s, in Sendrecv: %s\n", class_name(send), class_name(recv),
           class_name(sendrecv));
  MPI_Comm_free(&checked);
}

static void null_communicator(int rank) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int value = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Comm made = MPI_COMM_WORLD;
  const int barrier = MPI_Barrier(MPI_COMM_NULL);
  const int bcast = MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_NULL);
  const int send = MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
  const int recv = MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE);
  const int irecv = MPI_Irecv(&value, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &request);
  const int dup = MPI_Comm_dup(MPI_COMM_NULL, &made);
  if (rank == 0)
    printf("on MPI_COMM_NULL: Barrier %s, Bcast %s, Send %s, Recv %s, Irecv %s (request %s), Comm_dup %s\n",
           class_name(barrier), class_name(bcast), class_name(send), class_name(recv), class_name(irecv),
           request == MPI_REQUEST_NULL ? "null" : "set", class_name(dup));
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  null_requests(rank);
  null_peers(rank);
  if (rank < 2) zero_counts(rank);
  erroneous_calls(rank);
  null_communicator(rank);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
