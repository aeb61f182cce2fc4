/* A master and its workers, for mpisentry analyze: each worker sends the
 * master a request and waits for its reply; the master takes the requests
 * from MPI_ANY_SOURCE. Worker r sleeps (size - r) * 100 ms before it sends,
 * so that a run left alone brings the last worker's request first.
 *   master_worker SHAPE REPLY
 * SHAPE is how the master takes a request and replies:
 *   recv     MPI_Recv, then MPI_Send
 *   irecv    MPI_Irecv and MPI_Wait, then MPI_Isend and MPI_Wait
 *   mprobe   MPI_Mprobe and MPI_Mrecv, then MPI_Send
 * REPLY is whom it replies to:
 *   sender   the worker whose request it took (correct under every matching
 *            and every buffering)
 *   fixed    the workers from the last to the first, whoever it heard from:
 *            a bug that only shows when a request comes out of that order
 *            and the reply cannot be buffered (the worker still waits in its
 *            send), so every run under MPICH's buffering passes.
 * Both write the same log when the last worker's request comes first; only
 * the program tells which deadlock is real. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kRequest = 1, kReply = 2 };

int main(int argc, char** argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* shape = argc > 2 ? argv[1] : "";
  const char* reply_to = argc > 2 ? argv[2] : "";
  if ((strcmp(shape, "recv") != 0 && strcmp(shape, "irecv") != 0 && strcmp(shape, "mprobe") != 0) ||
      (strcmp(reply_to, "sender") != 0 && strcmp(reply_to, "fixed") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: master_worker recv|irecv|mprobe sender|fixed\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0) {
    for (int i = 0; i < size - 1; ++i) {
      int request = 0;
      MPI_Status status;
      if (strcmp(shape, "irecv") == 0) {
        MPI_Request pending;
        MPI_Irecv(&request, 1, MPI_INT, MPI_ANY_SOURCE, kRequest, MPI_COMM_WORLD, &pending);
        MPI_Wait(&pending, &status);
      } else if (strcmp(shape, "mprobe") == 0) {
        MPI_Message message;
        MPI_Mprobe(MPI_ANY_SOURCE, kRequest, MPI_COMM_WORLD, &message, &status);
        MPI_Mrecv(&request, 1, MPI_INT, &message, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&request, 1, MPI_INT, MPI_ANY_SOURCE, kRequest, MPI_COMM_WORLD, &status);
      }
      const int worker = strcmp(reply_to, "sender") == 0 ? status.MPI_SOURCE : size - 1 - i;
      int reply = request * 10;
      if (strcmp(shape, "irecv") == 0) {
        MPI_Request sent;
        MPI_Isend(&reply, 1, MPI_INT, worker, kReply, MPI_COMM_WORLD, &sent);
        MPI_Wait(&sent, MPI_STATUS_IGNORE);
      } else {
        MPI_Send(&reply, 1, MPI_INT, worker, kReply, MPI_COMM_WORLD);
      }
    }
  } else {
    usleep((useconds_t)(size - rank) * 100000);
    int reply = 0;
    MPI_Send(&rank, 1, MPI_INT, 0, kRequest, MPI_COMM_WORLD);
    MPI_Recv(&reply, 1, MPI_INT, 0, kReply, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("worker %d: reply %d\n", rank, reply);
  }
  MPI_Finalize();
  return 0;
}
