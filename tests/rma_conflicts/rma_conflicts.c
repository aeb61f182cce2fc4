/* One-sided accesses to rank 1's window of kInts ints in one fence epoch.
 * Three ranks. argv[1], the conflicting accesses:
 *   "put_put": ranks 0 and 2 both MPI_Put ints 2 to 5;
 *   "put_get": rank 0 puts ints 0 to 3, rank 2 gets ints 2 to 5;
 *   "acc_get": rank 0 accumulates (MPI_SUM) into ints 0 to 3, rank 2 gets them;
 *   "own_get": rank 0 gets ints 0 to 3 while rank 1 gets rank 2's ints into
 *     its own ints 2 to 5 (its MPI_Get writes them);
 * and their correct twins:
 *   "halves": rank 0 puts ints 0 to 7, rank 2 ints 8 to 15;
 *   "get_get": ranks 0 and 2 both get ints 2 to 5;
 *   "acc_acc": ranks 0 and 2 both accumulate (MPI_SUM) into ints 2 to 5;
 *   "epochs": put_get's put in one epoch, its get in the next;
 *   "locks": put_put's puts each under an exclusive lock, after a fence
 *     (both put the same ints, so that the order of the locks shows in
 *     nothing printed);
 *   "vectors": rank 0 puts the even ints, rank 2 the odd ones (a vector
 *     target datatype: the spans interleave, the bytes do not; not judged);
 *   "own_halves": own_get, with rank 1 getting into its ints 8 to 11.
 * Rank 0 prints what rank 1's window and the gets ended with. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { kInts = 16, kPart = 4 };

static int is(const char* mode, const char* name) { return strcmp(mode, name) == 0; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "halves";
  int window_ints[kInts], mine[kInts], got[kInts];
  for (int i = 0; i < kInts; ++i) {
    window_ints[i] = rank * 100 + i;
    mine[i] = rank * 1000 + i;
    got[i] = -1;
  }
  MPI_Win win;
  MPI_Win_create(window_ints, sizeof window_ints, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  const int first = rank == 0, second = rank == 2;
  if (is(mode, "put_put") && (first || second)) {
    MPI_Put(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win); /* mpisentry: put */
  } else if (is(mode, "put_get") || is(mode, "epochs")) {
    if (first) MPI_Put(mine, kPart, MPI_INT, 1, 0, kPart, MPI_INT, win);
    if (is(mode, "epochs")) MPI_Win_fence(0, win);
    if (second) MPI_Get(got, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win);
  } else if (is(mode, "acc_get")) {
    if (first) MPI_Accumulate(mine, kPart, MPI_INT, 1, 0, kPart, MPI_INT, MPI_SUM, win);
    if (second) MPI_Get(got, kPart, MPI_INT, 1, 0, kPart, MPI_INT, win);
  } else if (is(mode, "own_get") || is(mode, "own_halves")) {
    if (first) MPI_Get(got, kPart, MPI_INT, 1, 0, kPart, MPI_INT, win);
    if (rank == 1)
      MPI_Get(window_ints + (is(mode, "own_get") ? 2 : 8), kPart, MPI_INT, 2, 0, kPart, MPI_INT, win); /* mpisentry: own_get */
  } else if (is(mode, "halves") && (first || second)) {
    MPI_Put(mine, kInts / 2, MPI_INT, 1, second ? kInts / 2 : 0, kInts / 2, MPI_INT, win);
  } else if (is(mode, "get_get") && (first || second)) {
    MPI_Get(got, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win);
  } else if (is(mode, "acc_acc") && (first || second)) {
    MPI_Accumulate(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, MPI_SUM, win);
  } else if (is(mode, "locks") && (first || second)) {
    const int same[kPart] = {7, 7, 7, 7};
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(same, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win);
    MPI_Win_unlock(1, win);
  } else if (is(mode, "vectors") && (first || second)) {
    MPI_Datatype every_other;
    MPI_Type_vector(kInts / 2, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Put(mine, kInts / 2, MPI_INT, 1, second ? 1 : 0, 1, every_other, win);
    MPI_Type_free(&every_other);
  }
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  /* What the correct modes leave does not depend on timing: compared with
   * and without the checker. */
  int sums[2] = {0, 0}, all[2 * 3];
  for (int i = 0; i < kInts; ++i) {
    sums[0] += window_ints[i];
    sums[1] += got[i];
  }
  MPI_Gather(sums, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("rma_conflicts %s: window of rank 1 %d, gets %d %d %d\n", mode, all[2], all[1], all[3], all[5]);
  MPI_Finalize();
  return 0;
}
