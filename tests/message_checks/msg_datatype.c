/* One message of 4 x MPI_INT from rank 0 to rank 1 (tag 5), received in
 * one of several shapes: argv[1] names the shape, argv[2] is "good" (the
 * receive's type signature matches: 4 x MPI_INT, or a derived type of the
 * same signature) or "bad" (2 x MPI_DOUBLE: same size, other types). Every
 * shape also sends a second message back from rank 1, so that both
 * directions are checked. "reversed" (good only) sends a second message of
 * 2 x MPI_DOUBLE with the same tag and waits for the second receive first:
 * MPI matched the first receive first, whatever the order of the waits.
 * "pairs" sends the 4 ints as 2 x MPI_2INT, which MPI defines as 2 x MPI_INT
 * each, received like "recv". "freed" (good only) receives with
 * MPI_Irecv into a contiguous type of 4 ints and frees the type before the
 * MPI_Wait, which MPI allows. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int values[4] = {1, 2, 3, 4};
static int received[16];

static MPI_Datatype receive_type(const char* quality, const char* shape, int* count) {
  MPI_Datatype type = MPI_INT;
  *count = 4;
  if (strcmp(quality, "bad") == 0) {
    *count = 2;
    return MPI_DOUBLE;
  }
  if (strcmp(shape, "contiguous") == 0 || strcmp(shape, "freed") == 0) {
    MPI_Type_contiguous(4, MPI_INT, &type);
    MPI_Type_commit(&type);
    *count = 1;
  } else if (strcmp(shape, "vector") == 0) {
    MPI_Type_vector(2, 2, 3, MPI_INT, &type); /* 2 blocks of 2 ints, stride 3: same signature, other layout */
    MPI_Type_commit(&type);
    *count = 1;
  } else if (strcmp(shape, "larger") == 0) {
    *count = 10;
  }
  return type;
}

static void send_values(int as_pairs, int dest, MPI_Comm comm) {
  MPI_Send(values, as_pairs ? 2 : 4, as_pairs ? MPI_2INT : MPI_INT, dest, 5, comm); /* mpisentry: sends */
}

static void receive_values(const char* shape, MPI_Datatype type, int count, MPI_Comm comm) {
  if (strcmp(shape, "anysource") == 0) {
    MPI_Recv(received, count, type, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE);
  } else if (strcmp(shape, "irecv") == 0) {
    MPI_Request requests[2];
    MPI_Irecv(received, count, type, 0, 5, comm, &requests[0]); /* mpisentry: posts */
    MPI_Irecv(received + 8, 1, MPI_INT, 0, 6, comm, &requests[1]);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE); /* mpisentry: completes */
  } else if (strcmp(shape, "freed") == 0) {
    MPI_Request request;
    MPI_Irecv(received, count, type, 0, 5, comm, &request);
    MPI_Type_free(&type);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (strcmp(shape, "reversed") == 0) {
    MPI_Request requests[2];
    double doubles[2];
    MPI_Irecv(received, count, type, 0, 5, comm, &requests[0]);
    MPI_Irecv(doubles, 2, MPI_DOUBLE, 0, 5, comm, &requests[1]);
    MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
    MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
  } else if (strcmp(shape, "persistent") == 0) {
    MPI_Request request;
    MPI_Recv_init(received, count, type, 0, 5, comm, &request);
    for (int round = 0; round < 3; ++round) {
      MPI_Start(&request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&request);
  } else if (strcmp(shape, "mprobe") == 0) {
    MPI_Message message;
    MPI_Mprobe(0, 5, comm, &message, MPI_STATUS_IGNORE);
    MPI_Mrecv(received, count, type, &message, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(received, count, type, 0, 5, comm, MPI_STATUS_IGNORE);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: msg_datatype <recv|contiguous|vector|larger|anysource|irecv|reversed|persistent|mprobe|sendrecv|pairs|freed> <good|bad>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* shape = argv[1];
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int count;
  MPI_Datatype type = receive_type(argv[2], shape, &count);
  if (strcmp(shape, "sendrecv") == 0) {
    /* rank 0 and 1 exchange: each sends 4 ints, receives in `type` */
    if (rank < 2)
      MPI_Sendrecv(values, 4, MPI_INT, 1 - rank, 5, received, count, type, 1 - rank, 5, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
  } else if (rank == 0) {
    if (strcmp(shape, "persistent") == 0) {
      MPI_Request request;
      MPI_Send_init(values, 4, MPI_INT, 1, 5, MPI_COMM_WORLD, &request);
      for (int round = 0; round < 3; ++round) {
        MPI_Start(&request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
      }
      MPI_Request_free(&request);
    } else {
      send_values(strcmp(shape, "pairs") == 0, 1, MPI_COMM_WORLD);
      if (strcmp(shape, "irecv") == 0) MPI_Send(values, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
      const double doubles[2] = {0.5, 1.5};
      if (strcmp(shape, "reversed") == 0) MPI_Send(doubles, 2, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD);
    }
  } else if (rank == 1) {
    receive_values(shape, type, count, MPI_COMM_WORLD);
  }
  const int freed_by_receive = rank == 1 && strcmp(shape, "freed") == 0;
  if (type != MPI_INT && type != MPI_DOUBLE && !freed_by_receive) MPI_Type_free(&type);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
