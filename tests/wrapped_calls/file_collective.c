/* Collective MPI-IO on a file of the job's working directory, opened on
 * MPI_COMM_WORLD by both ranks.
 *   deadlock: rank 0 writes with MPI_File_write_all, then sends to rank 1;
 *             rank 1 first waits in MPI_Recv for that message, then writes.
 *   correct:  rank 1 computes for <seconds> first, then writes, then
 *             receives; rank 0 prints what it reads back.
 * The file is deleted when closed. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

enum { kInts = 1024 };

static void write_block(MPI_File file, const int* block) {
  MPI_File_write_all(file, block, kInts, MPI_INT, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

static void wait_for_rank_0(int* value) {
  MPI_Recv(value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  const double seconds = seconds_argument(argc, argv, 1, "rank 1's computation before it writes");
  static const char* const variants[] = {"deadlock", "correct"};
  const int correct = variant_argument(argc, argv, 2, "variant", variants, 2) == 1;

  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, "file_collective.dat", MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                MPI_INFO_NULL, &file);
  MPI_File_set_view(file, (MPI_Offset)rank * kInts * (MPI_Offset)sizeof(int), MPI_INT, MPI_INT, "native",
                    MPI_INFO_NULL);
  static int block[kInts];
  for (int i = 0; i < kInts; ++i) block[i] = rank * kInts + i;
  int value = 0;
  if (rank == 0) {
    write_block(file, block);
    value = 42;
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else {
    if (correct) compute_for(seconds);
    else wait_for_rank_0(&value);
    write_block(file, block);
    if (correct) wait_for_rank_0(&value);
  }
  MPI_File_sync(file);
  int last = -1;
  MPI_File_read_at(file, kInts - 1, &last, 1, MPI_INT, MPI_STATUS_IGNORE);
  if (rank == 0) printf("rank 0 read back %d\n", last);
  MPI_File_close(&file);
  MPI_Finalize();
  return 0;
}
