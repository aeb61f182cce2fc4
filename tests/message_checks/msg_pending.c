/* Rank 0 sends two messages of 4 x MPI_INT (tags 7 and 8) to rank 1 on
 * argv[1]: "world" (MPI_COMM_WORLD, pending until MPI_Finalize), "dup" (a
 * duplicate freed with MPI_Comm_free) or "inter" (3 ranks: an
 * inter-communicator between {0} and {1, 2}, groups of other sizes, freed
 * with MPI_Comm_free). Rank 1 receives argv[2] of them: "all" (2, correct),
 * "one" (the tag-8 message stays pending) or "none". */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void send_both(MPI_Comm comm, int dest) {
  int values[4] = {1, 2, 3, 4};
  MPI_Send(values, 4, MPI_INT, dest, 7, comm);
  MPI_Send(values, 4, MPI_INT, dest, 8, comm); /* mpisentry: unreceived */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: msg_pending <world|dup|inter> <all|one|none>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank_1 = 1; /* world rank 1 in `comm` */
  if (strcmp(argv[1], "dup") == 0) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (strcmp(argv[1], "inter") == 0) {
    MPI_Comm group;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : 1, rank, &group);
    MPI_Intercomm_create(group, 0, MPI_COMM_WORLD, rank == 0 ? 1 : 0, 9, &comm);
    MPI_Comm_free(&group);
    rank_1 = 0; /* the first of the remote group {1, 2} */
  }
  if (rank == 0) {
    send_both(comm, rank_1);
  } else if (rank == 1) {
    int values[4];
    if (strcmp(argv[2], "none") != 0) MPI_Recv(values, 4, MPI_INT, 0, 7, comm, MPI_STATUS_IGNORE);
    if (strcmp(argv[2], "all") == 0) MPI_Recv(values, 4, MPI_INT, 0, 8, comm, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
