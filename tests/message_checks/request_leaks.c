/* Requests left behind, or not: argv[1] is "leak" (rank 1 starts an
 * MPI_Irecv that is never completed and creates a persistent MPI_Recv_init
 * request that is never freed), "clean" (the same, completed and freed),
 * "free_active" (rank 1 frees its MPI_Irecv while it is still active) or
 * "free_inactive" (rank 1 frees its persistent request after its last Wait)
 * or "proc_null" (every rank completes nonblocking and persistent operations
 * with MPI_PROC_NULL as their peer, correctly: MPICH gives them shared
 * built-in handles and odd statuses), "get_status_done" (rank 1 polls its
 * MPI_Irecv with MPI_Request_get_status until it says complete, then frees
 * it, correctly: MPI 4.0, 3.7.3; rank 0 waits for its MPI_Isend),
 * "get_status_leak" (the same, never freed: MPI_Request_get_status does not
 * free the request) or "get_status_active" ("free_active" with an MPI_Request_get_status before
 * the free, which says not complete: the message is sent after it). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int buffer[4];
static int persistent_buffer[4];

static void without_peers(void) {
  int values[4] = {1, 2, 3, 4};
  for (int round = 0; round < 2; ++round) {
    MPI_Request both[2];
    MPI_Irecv(buffer, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &both[0]);
    MPI_Isend(values, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &both[1]);
    MPI_Wait(&both[0], MPI_STATUS_IGNORE);
    MPI_Wait(&both[1], MPI_STATUS_IGNORE);
  }
  MPI_Request persistent[2];
  MPI_Recv_init(persistent_buffer, 4, MPI_INT, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &persistent[0]);
  MPI_Send_init(values, 4, MPI_INT, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &persistent[1]);
  for (int round = 0; round < 2; ++round) {
    MPI_Startall(2, persistent);
    int index = 0;
    while (index != MPI_UNDEFINED) MPI_Waitany(2, persistent, &index, MPI_STATUS_IGNORE);
  }
  MPI_Request_free(&persistent[0]);
  MPI_Request_free(&persistent[1]);
}

static void start_receive(MPI_Request* request) {
  MPI_Irecv(buffer, 4, MPI_INT, 0, 3, MPI_COMM_WORLD, request); /* mpisentry: irecv */
}

static void polled_to_completion(int rank, int frees) {
  int values[4] = {1, 2, 3, 4};
  MPI_Request request;
  if (rank == 0) {
    MPI_Isend(values, 4, MPI_INT, 1, 3, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    start_receive(&request);
    int complete = 0;
    MPI_Status status;
    while (!complete) MPI_Request_get_status(request, &complete, &status);
    if (frees) MPI_Request_free(&request);
    if (buffer[3] != 4 || status.MPI_SOURCE != 0) MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

static void make_persistent(MPI_Request* request) {
  MPI_Recv_init(persistent_buffer, 4, MPI_INT, 0, 4, MPI_COMM_WORLD, request); /* mpisentry: recv_init */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 2) {
    fprintf(stderr, "usage: request_leaks <leak|clean|free_active|free_inactive|proc_null|get_status_done|get_status_leak|get_status_active>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* mode = argv[1];
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int values[4] = {1, 2, 3, 4};
  const int get_status_active = strcmp(mode, "get_status_active") == 0;
  if (get_status_active) mode = "free_active";
  if (strcmp(mode, "proc_null") == 0) {
    without_peers();
  } else if (strncmp(mode, "get_status_", 11) == 0) {
    polled_to_completion(rank, strcmp(mode, "get_status_done") == 0);
  } else if (rank == 1) {
    MPI_Request receive, persistent;
    start_receive(&receive);
    make_persistent(&persistent);
    int complete = 0;
    if (get_status_active) MPI_Request_get_status(receive, &complete, MPI_STATUS_IGNORE);
    if (strcmp(mode, "free_active") == 0) MPI_Request_free(&receive); /* mpisentry: frees */
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "clean") == 0 || strcmp(mode, "free_inactive") == 0) {
      MPI_Wait(&receive, MPI_STATUS_IGNORE);
      MPI_Start(&persistent);
      MPI_Wait(&persistent, MPI_STATUS_IGNORE);
      MPI_Request_free(&persistent);
    } else if (strcmp(mode, "free_active") == 0) {
      MPI_Request_free(&persistent);
    }
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && strcmp(mode, "leak") != 0) {
      MPI_Send(values, 4, MPI_INT, 1, 3, MPI_COMM_WORLD);
      if (strcmp(mode, "free_active") != 0) MPI_Send(values, 4, MPI_INT, 1, 4, MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
