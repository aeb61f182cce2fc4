/* GLOBAL:COLLECTIVE errors and their correct twins on 2 ranks (3 for the
 * v-collectives), argv[1] naming the shape. Each error shape completes on
 * MPICH without the checker unless noted; "<shape>_ok" is the same shape
 * done right.
 *   operation    rank 0 calls MPI_Allgather then MPI_Bcast, the others the reverse (hangs
 *                on MPICH: the deadlock checker ends it)
 *   order        rank 0 calls MPI_Bcast then MPI_Reduce (both rooted at 0), the others the reverse
 *   root         MPI_Bcast with root 0 on rank 0, root 1 elsewhere
 *   reduction    MPI_Allreduce with MPI_SUM on rank 0, MPI_MAX elsewhere
 *   gatherv      MPI_Gatherv: rank r sends r+1 ints, the root expects one more from the last rank
 *   allgatherv   MPI_Allgatherv: the same, every rank expecting
 *   alltoallv    MPI_Alltoallv: rank r sends r+1 ints to each, rank 0 expects one more from the last rank
 *   datatype     MPI_Bcast of 1 MPI_INT received as 1 MPI_FLOAT (twin: a vector of 2 ints with
 *                stride 2 received as a contiguous type of 2 ints: the same signature)
 *   pairs        MPI_Bcast of 2 MPI_2INT received as 4 MPI_FLOAT (twin: as 4 MPI_INT, which MPI
 *                defines MPI_2INT as; then MPI_Allgather of 2 MPI_2INT from rank 0 and 4 MPI_INT
 *                from the others, and MPI_Allreduce of MPI_2INT with MPI_MINLOC)
 *   float_int    MPI_Bcast of 1 MPI_FLOAT_INT received as 2 MPI_INT (twin: as a struct of one
 *                MPI_FLOAT and one MPI_INT)
 *   invalid      under MPI_ERRORS_RETURN, argv[2] naming what is invalid: MPI_Bcast with count -1
 *                ("count", the default), root = size ("root"), MPI_DATATYPE_NULL ("datatype") or
 *                MPI_COMM_NULL ("comm"), or MPI_Allreduce with MPI_OP_NULL ("op"); rank 0 prints
 *                what MPI returned on each rank (twin: MPI_Bcast of count 0 from root size-1)
 *   invalid_fatal  MPI_Bcast with count -1 under MPI_ERRORS_ARE_FATAL
 *   comm_free    rank 0 frees a duplicate of MPI_COMM_WORLD while rank 1 broadcasts on it
 *                (hangs on MPICH: the deadlock checker ends it)
 *   nonblocking  MPI_Iallreduce with MPI_SUM on rank 0, MPI_MAX elsewhere, then MPI_Barrier
 *   many         10000 x the datatype error
 *   kinds        MPI_Bcast on rank 0, MPI_Ibcast and MPI_Wait elsewhere: MPI never matches them
 *                (twin: MPI_Bcast_c on rank 0, the same collective as MPI_Bcast)
 *   kinds_reversed  MPI_Iallreduce and MPI_Wait on rank 0, MPI_Allreduce elsewhere: rank 0,
 *                which reports, has its record pending when the job hangs (twin: MPI_Iallreduce
 *                everywhere)
 *   in_place_ok  MPI_IN_PLACE at the root of MPI_Gather, MPI_Scatter and MPI_Reduce, and on
 *                every rank of MPI_Allgatherv with other counts per rank (no error shape)
 *   inter_ok     MPI_Bcast and MPI_Allreduce on an inter-communicator between even and odd
 *                ranks, and MPI_Neighbor_allgather on a ring (no error shape) */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

static int rank, size;

static void operation(int ok) {
  int mine = rank, all[16], value = 7;
  if (rank == 0 || ok) {
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } else {
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  }
}

static void order(int ok) {
  int value = 7, mine = rank, sum = 0;
  if (rank == 0 || ok) {
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  } else {
    MPI_Reduce(&mine, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
}

static void root(int ok) {
  int value = 7;
  MPI_Bcast(&value, 1, MPI_INT, rank == 0 || ok ? 0 : 1, MPI_COMM_WORLD);
}

static void reduction(int ok) {
  int mine = rank, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, rank == 0 || ok ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD);
}

/* Rank r contributes r+1 ints; with `bad` the last rank's block is expected one larger. */
static void v_counts(int bad, int counts[], int displs[]) {
  for (int r = 0, at = 0; r < size; ++r) {
    counts[r] = r + 1 + (bad && r == size - 1);
    displs[r] = at;
    at += counts[r];
  }
}

static void gatherv(int ok) {
  int mine[16] = {0}, all[64], counts[16], displs[16];
  v_counts(!ok, counts, displs);
  MPI_Gatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
}

static void allgatherv(int ok) {
  int mine[16] = {0}, all[64], counts[16], displs[16];
  v_counts(!ok && rank == 0, counts, displs);
  MPI_Allgatherv(mine, rank + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
}

static void alltoallv(int ok) {
  int out[64] = {0}, in[64], sendcounts[16], sdispls[16], recvcounts[16], rdispls[16];
  for (int r = 0; r < size; ++r) {
    sendcounts[r] = rank + 1;
    sdispls[r] = r * 16;
  }
  v_counts(!ok && rank == 0, recvcounts, rdispls);
  MPI_Alltoallv(out, sendcounts, sdispls, MPI_INT, in, recvcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
}

static void datatype(int ok) {
  if (!ok) {
    int value = 7;
    MPI_Bcast(&value, 1, rank == 0 ? MPI_INT : MPI_FLOAT, 0, MPI_COMM_WORLD);
    return;
  }
  int values[4] = {1, 0, 2, 0};
  MPI_Datatype type;
  if (rank == 0)
    MPI_Type_vector(2, 1, 2, MPI_INT, &type); /* ints 0 and 2 */
  else
    MPI_Type_contiguous(2, MPI_INT, &type);
  MPI_Type_commit(&type);
  MPI_Bcast(values, 1, type, 0, MPI_COMM_WORLD);
  MPI_Type_free(&type);
}

static void pairs(int ok) {
  int values[4] = {1, 2, 3, 4}, mine[4] = {rank, rank, rank, rank}, all[64];
  if (rank == 0)
    MPI_Bcast(values, 2, MPI_2INT, 0, MPI_COMM_WORLD);
  else
    MPI_Bcast(values, 4, ok ? MPI_INT : MPI_FLOAT, 0, MPI_COMM_WORLD);
  if (!ok) return;
  if (rank == 0)
    MPI_Allgather(mine, 2, MPI_2INT, all, 4, MPI_INT, MPI_COMM_WORLD);
  else
    MPI_Allgather(mine, 4, MPI_INT, all, 2, MPI_2INT, MPI_COMM_WORLD);
  int value_and_rank[2] = {10 - rank, rank}, lowest[2];
  MPI_Allreduce(value_and_rank, lowest, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
}

static void float_int(int ok) {
  struct {
    float value;
    int index;
  } pair = {1.5f, 7};
  if (rank == 0) {
    MPI_Bcast(&pair, 1, MPI_FLOAT_INT, 0, MPI_COMM_WORLD);
    return;
  }
  MPI_Datatype type = MPI_INT;
  int count = 2;
  if (ok) {
    const int blocks[2] = {1, 1};
    const MPI_Aint displacements[2] = {0, sizeof(float)};
    const MPI_Datatype types[2] = {MPI_FLOAT, MPI_INT};
    MPI_Type_create_struct(2, blocks, displacements, types, &type);
    MPI_Type_commit(&type);
    count = 1;
  }
  MPI_Bcast(&pair, count, type, 0, MPI_COMM_WORLD);
  if (ok) MPI_Type_free(&type);
}

static void invalid(int ok, const char* what) {
  int values[2] = {0, 0}, error_class = MPI_SUCCESS;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char* call = "MPI_Bcast";
  int result;
  if (strcmp(what, "op") == 0) {
    call = "MPI_Allreduce";
    result = MPI_Allreduce(values, values + 1, 1, MPI_INT, ok ? MPI_SUM : MPI_OP_NULL, MPI_COMM_WORLD);
  } else {
    const int count = ok ? 0 : strcmp(what, "count") == 0 ? -1 : 1;
    const int at = ok ? size - 1 : strcmp(what, "root") == 0 ? size : 0;
    const MPI_Datatype type = !ok && strcmp(what, "datatype") == 0 ? MPI_DATATYPE_NULL : MPI_INT;
    const MPI_Comm comm = !ok && strcmp(what, "comm") == 0 ? MPI_COMM_NULL : MPI_COMM_WORLD;
    result = MPI_Bcast(values, count, type, at, comm);
  }
  MPI_Error_class(result, &error_class);
  int classes[16];
  MPI_Gather(&error_class, 1, MPI_INT, classes, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 0; rank == 0 && r < size; ++r)
    printf("rank %d: %s returned %s\n", r, call,
           classes[r] == MPI_SUCCESS     ? "MPI_SUCCESS"
           : classes[r] == MPI_ERR_COUNT ? "MPI_ERR_COUNT"
           : classes[r] == MPI_ERR_ROOT  ? "MPI_ERR_ROOT"
           : classes[r] == MPI_ERR_TYPE  ? "MPI_ERR_TYPE"
           : classes[r] == MPI_ERR_OP    ? "MPI_ERR_OP"
           : classes[r] == MPI_ERR_COMM  ? "MPI_ERR_COMM"
                                         : "another error");
}

static void invalid_fatal(void) {
  int values[2] = {0, 0};
  MPI_Bcast(values, -1, MPI_INT, 0, MPI_COMM_WORLD);
}

static void comm_free(int ok) {
  MPI_Comm dup;
  int value = 7;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  if (ok || rank != 0) MPI_Bcast(&value, 1, MPI_INT, size - 1, dup);
  MPI_Comm_free(&dup);
}

static void nonblocking(int ok) {
  int mine = rank, result = 0;
  MPI_Request request;
  MPI_Iallreduce(&mine, &result, 1, MPI_INT, rank == 0 || ok ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void many(int ok) {
  for (int i = 0; i < 10000; ++i) datatype(ok);
}

static void kinds(int ok) {
  int value = 7;
  if (rank == 0 && ok) {
#if MPI_VERSION >= 4
    MPI_Bcast_c(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
#else
    lacks_mpi4("MPI_Bcast_c");
#endif
  } else if (rank == 0 || ok) {
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } else {
    MPI_Request request;
    MPI_Ibcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
}

static void kinds_reversed(int ok) {
  int value = rank, sum = 0;
  if (rank == 0 || ok) {
    MPI_Request request;
    MPI_Iallreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
}

static void in_place(void) {
  int all[64] = {0}, mine[16] = {0}, counts[16], displs[16], sum = rank;
  MPI_Gather(rank == 0 ? MPI_IN_PLACE : mine, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Scatter(all, 2, MPI_INT, rank == 0 ? MPI_IN_PLACE : mine, 2, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Reduce(rank == 0 ? MPI_IN_PLACE : &sum, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  v_counts(0, counts, displs);
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
}

static void inter_and_neighbors(void) {
  MPI_Comm half, inter, ring;
  const int color = rank % 2;
  int value = 7, sum = 0, periodic = 1, neighbors[2];
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 9, &inter);
  int local_rank;
  MPI_Comm_rank(half, &local_rank);
  /* Rank 0 of the even group broadcasts to the odd group. */
  const int root = color == 0 ? (local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  MPI_Bcast(&value, 1, MPI_INT, root, inter);
  MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, inter);
  MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periodic, 0, &ring);
  MPI_Neighbor_allgather(&rank, 1, MPI_INT, neighbors, 1, MPI_INT, ring);
  MPI_Comm_free(&ring);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char shape[64] = "";
  strncpy(shape, argc > 1 ? argv[1] : "", sizeof(shape) - 1);
  const size_t length = strlen(shape);
  const int ok = length > 3 && strcmp(shape + length - 3, "_ok") == 0;
  if (ok) shape[length - 3] = '\0';
  if (strcmp(shape, "operation") == 0) operation(ok);
  else if (strcmp(shape, "order") == 0) order(ok);
  else if (strcmp(shape, "root") == 0) root(ok);
  else if (strcmp(shape, "reduction") == 0) reduction(ok);
  else if (strcmp(shape, "gatherv") == 0) gatherv(ok);
  else if (strcmp(shape, "allgatherv") == 0) allgatherv(ok);
  else if (strcmp(shape, "alltoallv") == 0) alltoallv(ok);
  else if (strcmp(shape, "datatype") == 0) datatype(ok);
  else if (strcmp(shape, "pairs") == 0) pairs(ok);
  else if (strcmp(shape, "float_int") == 0) float_int(ok);
  else if (strcmp(shape, "invalid") == 0) invalid(ok, argc > 2 ? argv[2] : "count");
  else if (strcmp(shape, "invalid_fatal") == 0) invalid_fatal();
  else if (strcmp(shape, "comm_free") == 0) comm_free(ok);
  else if (strcmp(shape, "nonblocking") == 0) nonblocking(ok);
  else if (strcmp(shape, "many") == 0) many(ok);
  else if (strcmp(shape, "kinds") == 0) kinds(ok);
  else if (strcmp(shape, "kinds_reversed") == 0) kinds_reversed(ok);
  else if (strcmp(shape, "in_place") == 0 && ok) in_place();
  else if (strcmp(shape, "inter") == 0 && ok) inter_and_neighbors();
  else {
    fprintf(stderr, "unknown shape '%s'\n", shape);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
