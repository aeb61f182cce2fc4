/* A stream of messages of 4 x MPI_INT from rank 0 to rank 1 (tag 5), each
 * acknowledged, then 2 s of ping-pong on tag 6 (20 rounds 0.1 s apart: fewer
 * messages than a batch of the checks' records), then "ping-pong over" on
 * rank 1 and MPI_Finalize. argv[1] says how many messages (the checks' records
 * of them go in batches of 64, and at the monitor's tick for the rest): 200
 * ("many") or 3 ("few"); argv[2] "bad" receives message 150 (many) or 2
 * (few) as 2 x MPI_DOUBLE (same size, other types), "good" receives all as
 * 4 x MPI_INT. A mismatch must be found while the ping-pong still runs,
 * before MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int values[4] = {1, 2, 3, 4};

static void receive_one(int bad) {
  int ints[4];
  if (bad)
    MPI_Recv(ints, 2, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: receives */
  else
    MPI_Recv(ints, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: msg_stream <many|few> <good|bad>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int messages = strcmp(argv[1], "many") == 0 ? 200 : 3;
  const int bad_one = strcmp(argv[2], "bad") == 0 ? (messages == 200 ? 150 : 2) : 0;
  int ack = 0;
  for (int i = 1; i <= messages && rank < 2; ++i) {
    if (rank == 0) {
      MPI_Send(values, 4, MPI_INT, 1, 5, MPI_COMM_WORLD);
      MPI_Recv(&ack, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      receive_one(i == bad_one);
      MPI_Send(&ack, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
  }
  for (int round = 0; round < 20 && rank < 2; ++round) {
    if (rank == 0) {
      const struct timespec pause = {0, 100000000};
      nanosleep(&pause, NULL);
      MPI_Send(&round, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
      MPI_Recv(&ack, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&ack, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&ack, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
    }
  }
  if (rank == 1) {
    printf("ping-pong over\n");
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
