/* Arguments MPI defines as erroneous, one case each (two ranks; argv[1]
 * names it), made by rank 0 while rank 1 waits in MPI_Barrier:
 *   dest: MPI_Send to rank 2 of MPI_COMM_WORLD's 2;
 *   source: MPI_Recv from rank -3;
 *   tag: MPI_Send with tag -5;
 *   any_tag: MPI_Send with MPI_ANY_TAG;
 *   count: MPI_Send of -1 ints;
 *   datatype: MPI_Send of MPI_DATATYPE_NULL;
 *   comm: MPI_Send on MPI_COMM_NULL;
 *   op: MPI_Reduce with MPI_OP_NULL, by both ranks;
 *   root: MPI_Bcast from root 4, by both ranks;
 *   proc_null_root: MPI_Bcast from MPI_PROC_NULL over MPI_COMM_WORLD, by both;
 *   sub_dest: MPI_Send to rank 1 of a communicator of rank 0 alone;
 *   null_buffer: MPI_Send of 1 int from a null buffer;
 *   uncommitted: MPI_Send of a contiguous type never committed;
 *   put_datatype: MPI_Put of 1 MPI_DATATYPE_NULL into a window of rank 1;
 *   in_place: MPI_Allreduce into MPI_IN_PLACE, by both ranks;
 *   aliased: MPI_Allreduce from and into one int, by both ranks;
 *   returned: MPI_Send to rank 2 under MPI_ERRORS_RETURN: rank 0 prints
 *     MPI's error class and goes on to MPI_Finalize.
 * MPICH then fails the call. The correct case, "valid", makes the calls
 * MPI allows at the edges: a send to MPI_PROC_NULL, a receive from
 * MPI_ANY_SOURCE with MPI_ANY_TAG, the tag MPI_TAG_UB, a count of 0 (also
 * of MPI_DATATYPE_NULL, as MPICH's own tests send), an in-place
 * MPI_Alltoall whose ignored send count is -1, and a broadcast over an
 * inter-communicator from MPI_ROOT, an in-place MPI_Allreduce, a send
 * from MPI_BOTTOM through a datatype of absolute addresses (committed), and
 * one through the duplicate of it (committed as its original is), made of
 * a type never committed itself; rank 0 prints what it received. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int is(const char* mode, const char* name) { return strcmp(mode, name) == 0; }

static void misuse(const char* mode, int rank) {
  int x = 1, sum = 0;
  if (is(mode, "op")) MPI_Reduce(&x, &sum, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD); /* mpisentry: op */
  if (is(mode, "root")) MPI_Bcast(&x, 1, MPI_INT, 4, MPI_COMM_WORLD); /* mpisentry: root */
  if (is(mode, "proc_null_root"))
    MPI_Bcast(&x, 1, MPI_INT, MPI_PROC_NULL, MPI_COMM_WORLD); /* mpisentry: proc_null_root */
  if (is(mode, "in_place"))
    MPI_Allreduce(&x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* mpisentry: in_place */
  if (is(mode, "aliased")) MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* mpisentry: aliased */
  if (is(mode, "put_datatype")) {
    MPI_Win win;
    MPI_Win_create(&sum, sizeof sum, sizeof sum, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    if (rank == 0) MPI_Put(&x, 1, MPI_DATATYPE_NULL, 1, 0, 1, MPI_INT, win); /* mpisentry: put_datatype */
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
  }
  if (rank != 0) return;
  if (is(mode, "sub_dest")) {
    MPI_Comm alone;
    MPI_Comm_split(MPI_COMM_SELF, 0, 0, &alone);
    MPI_Send(&x, 1, MPI_INT, 1, 0, alone); /* mpisentry: sub_dest */
  }
  if (is(mode, "returned")) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int error_class = 0;
    MPI_Error_class(MPI_Send(&x, 1, MPI_INT, 2, 0, MPI_COMM_WORLD), &error_class); /* mpisentry: returned */
    printf("arguments returned: MPI_ERR_RANK %s\n", error_class == MPI_ERR_RANK ? "yes" : "no");
  }
  if (is(mode, "dest")) MPI_Send(&x, 1, MPI_INT, 2, 0, MPI_COMM_WORLD); /* mpisentry: dest */
  if (is(mode, "source")) MPI_Recv(&x, 1, MPI_INT, -3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: source */
  if (is(mode, "tag")) MPI_Send(&x, 1, MPI_INT, 1, -5, MPI_COMM_WORLD); /* mpisentry: tag */
  if (is(mode, "any_tag")) MPI_Send(&x, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD); /* mpisentry: any_tag */
  if (is(mode, "count")) MPI_Send(&x, -1, MPI_INT, 1, 0, MPI_COMM_WORLD); /* mpisentry: count */
  if (is(mode, "datatype")) MPI_Send(&x, 1, MPI_DATATYPE_NULL, 1, 0, MPI_COMM_WORLD); /* mpisentry: datatype */
  if (is(mode, "comm")) MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_NULL); /* mpisentry: comm */
  if (is(mode, "null_buffer")) MPI_Send(NULL, 1, MPI_INT, 1, 0, MPI_COMM_WORLD); /* mpisentry: null_buffer */
  if (is(mode, "uncommitted")) {
    int pair[2] = {1, 2};
    MPI_Datatype two;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Send(pair, 1, two, 1, 0, MPI_COMM_WORLD); /* mpisentry: uncommitted */
  }
}

static void valid(int rank) {
  int* tag_ub = NULL;
  int found = 0, x = 7, got = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
  MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
  if (rank == 1) MPI_Send(&x, 1, MPI_INT, 0, *tag_ub, MPI_COMM_WORLD);
  if (rank == 0) MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(&x, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
  if (rank == 0) MPI_Send(NULL, 0, MPI_DATATYPE_NULL, 1, 3, MPI_COMM_WORLD);
  if (rank == 1) MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  /* Rank 0 alone in one group, rank 1 in the other. */
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank, 9, &inter);
  int value = rank == 0 ? 42 : 0;
  MPI_Bcast(&value, 1, MPI_INT, rank == 0 ? MPI_ROOT : 0, inter);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  int everyone = 0;
  MPI_Reduce(&value, &everyone, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  int all[2] = {rank, rank};
  MPI_Alltoall(MPI_IN_PLACE, -1 /* ignored */, MPI_DATATYPE_NULL, all, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &everyone, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  /* One int at its absolute address, from MPI_BOTTOM (a null pointer in MPICH). */
  int absolute_value = 5 + rank, bottom_got = 0;
  MPI_Aint address;
  MPI_Get_address(&absolute_value, &address);
  MPI_Datatype one_int, absolute, copy;
  MPI_Type_contiguous(1, MPI_INT, &one_int); /* a building block, never committed */
  MPI_Type_create_hindexed_block(1, 1, &address, one_int, &absolute);
  MPI_Type_commit(&absolute);
  MPI_Type_dup(absolute, &copy);
  MPI_Sendrecv(MPI_BOTTOM, 1, absolute, 1 - rank, 4, &bottom_got, 1, MPI_INT, 1 - rank, 4, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv(MPI_BOTTOM, 1, copy, 1 - rank, 5, &bottom_got, 1, MPI_INT, 1 - rank, 5, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Type_free(&copy);
  MPI_Type_free(&absolute);
  MPI_Type_free(&one_int);
  if (rank == 0) printf("arguments valid: received %d, broadcast %d, from MPI_BOTTOM %d\n", got, everyone, bottom_got);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "valid";
  if (is(mode, "valid"))
    valid(rank);
  else
    misuse(mode, rank);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
