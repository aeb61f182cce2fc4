/* One message of 4 x MPI_INT from world rank 0 to world rank 1 (tag 5) on a
 * communicator of both ranks made by argv[1], received as 4 x MPI_INT
 * (argv[2] "good") or as 2 x MPI_DOUBLE ("bad": same size, other types),
 * then the communicator is freed. 2 ranks. The constructors: dup,
 * dup_with_info, idup, idup_with_info, idup_twice (two MPI_Comm_idup
 * outstanding at once, completed by one MPI_Waitall; the message goes on
 * the second), split, split_type, create, create_group, create_from_group,
 * cart_create, cart_sub, graph_create, dist_graph_create,
 * dist_graph_create_adjacent, intercomm_create (world rank 1 is remote rank
 * 0), intercomm_create_from_groups (the same) and intercomm_merge. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

static int rank;

/* The two halves {0} and {1} of MPI_COMM_WORLD, joined as an inter-communicator. */
static MPI_Comm halves_joined(void) {
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank, 9, &inter);
  MPI_Comm_free(&half);
  return inter;
}

/* The communicator argv[1] names; MPI_COMM_NULL for an unknown name. */
static MPI_Comm made_by(const char* how) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request request;
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const int two = 2, not_periodic[2] = {0, 0}, other = 1 - rank;
  if (strcmp(how, "dup") == 0) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  } else if (strcmp(how, "dup_with_info") == 0) {
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &comm);
  } else if (strcmp(how, "idup") == 0) {
    MPI_Comm_idup(MPI_COMM_WORLD, &comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (strcmp(how, "idup_with_info") == 0) {
#if MPI_VERSION >= 4
    MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &comm, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
#else
    lacks_mpi4("MPI_Comm_idup_with_info");
#endif
  } else if (strcmp(how, "idup_twice") == 0) {
    MPI_Comm first;
    MPI_Request both[2];
    MPI_Status statuses[2];
    MPI_Comm_idup(MPI_COMM_WORLD, &first, &both[0]);
    MPI_Comm_idup(MPI_COMM_WORLD, &comm, &both[1]);
    MPI_Waitall(2, both, statuses);
    MPI_Comm_free(&first);
  } else if (strcmp(how, "split") == 0) {
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comm);
  } else if (strcmp(how, "split_type") == 0) {
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &comm);
  } else if (strcmp(how, "create") == 0) {
    MPI_Comm_create(MPI_COMM_WORLD, world_group, &comm);
  } else if (strcmp(how, "create_group") == 0) {
    MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 3, &comm);
  } else if (strcmp(how, "cart_create") == 0) {
    MPI_Cart_create(MPI_COMM_WORLD, 1, &two, not_periodic, 0, &comm);
  } else if (strcmp(how, "cart_sub") == 0) {
    MPI_Comm grid;
    const int dims[2] = {2, 1}, keep[2] = {1, 0};
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, not_periodic, 0, &grid);
    MPI_Cart_sub(grid, keep, &comm);
    MPI_Comm_free(&grid);
  } else if (strcmp(how, "graph_create") == 0) {
    const int index[2] = {1, 2}, edges[2] = {1, 0};
    MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &comm);
  } else if (strcmp(how, "dist_graph_create") == 0) {
    const int degree = 1;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &degree, &other, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm);
  } else if (strcmp(how, "dist_graph_create_adjacent") == 0) {
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &other, MPI_UNWEIGHTED, 1, &other, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &comm);
  } else if (strcmp(how, "create_from_group") == 0) {
#if MPI_VERSION >= 4
    MPI_Comm_create_from_group(world_group, "msg_comms", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &comm);
#else
    lacks_mpi4("MPI_Comm_create_from_group");
#endif
  } else if (strcmp(how, "intercomm_create_from_groups") == 0) {
    MPI_Group mine, theirs;
    MPI_Group_incl(world_group, 1, &rank, &mine);
    MPI_Group_incl(world_group, 1, &other, &theirs);
#if MPI_VERSION >= 4
    MPI_Intercomm_create_from_groups(mine, 0, theirs, 0, "msg_comms", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &comm);
#else
    lacks_mpi4("MPI_Intercomm_create_from_groups");
#endif
    MPI_Group_free(&mine);
    MPI_Group_free(&theirs);
  } else if (strcmp(how, "intercomm_create") == 0) {
    comm = halves_joined();
  } else if (strcmp(how, "intercomm_merge") == 0) {
    MPI_Comm inter = halves_joined();
    MPI_Intercomm_merge(inter, rank, &comm);
    MPI_Comm_free(&inter);
  }
  MPI_Group_free(&world_group);
  return comm;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm comm = argc < 3 ? MPI_COMM_NULL : made_by(argv[1]);
  if (comm == MPI_COMM_NULL) {
    fprintf(stderr, "usage: msg_comms <constructor> <good|bad>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int inter = 0;
  MPI_Comm_test_inter(comm, &inter);
  if (rank == 0) {
    const int values[4] = {1, 2, 3, 4};
    MPI_Send(values, 4, MPI_INT, inter ? 0 : 1, 5, comm);
  } else if (rank == 1) {
    int received[4];
    if (strcmp(argv[2], "bad") == 0)
      MPI_Recv(received, 2, MPI_DOUBLE, 0, 5, comm, MPI_STATUS_IGNORE);
    else
      MPI_Recv(received, 4, MPI_INT, 0, 5, comm, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&comm);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
