/* A halo exchange on a ring of ranks, written the way it often is at first:
 * every rank sends its right boundary to its right neighbour, then receives
 * its left halo from its left neighbour.
 *
 * The bug: MPI_Ssend returns only once the matching receive has started,
 * and every rank is still in its send, so nobody ever receives. With plain
 * MPI_Send the same code works only while the MPI library buffers the
 * message, and hangs once the boundary grows past its eager limit.
 * The fix: MPI_Sendrecv, or MPI_Irecv before the send.
 *
 *   mpisentry --deadlock-timeout 5s -n 4 ./deadlock
 */
#include <mpi.h>
#include <stdio.h>

enum { kCells = 1000 };

static double field[kCells + 2];  /* field[0] and field[kCells + 1] are halo cells */

static void exchange_halo(int rank, int size) {
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  MPI_Ssend(&field[kCells], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD); /* mpisentry: blocks, every rank */
  MPI_Recv(&field[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int cell = 1; cell <= kCells; ++cell) field[cell] = rank;

  exchange_halo(rank, size);

  if (rank == 0) printf("halo received from rank %d\n", (int)field[0]);
  MPI_Finalize();
  return 0;
}
