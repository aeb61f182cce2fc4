/* Null handles passed to calls that mpisentry wraps, under
 * MPI_ERRORS_RETURN (on MPI_COMM_WORLD, MPI_COMM_SELF and files): each
 * call must return what it returns without the checker. Rank 0 prints
 * each call's error class. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

static const char* class_name(int code) {
  int error_class = code;
  if (code != MPI_SUCCESS) MPI_Error_class(code, &error_class);
  switch (error_class) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_COMM: return "MPI_ERR_COMM";
    case MPI_ERR_FILE: return "MPI_ERR_FILE";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    default: return "another error class";
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
#if MPI_VERSION < 4
  (void)rank, (void)class_name;
  lacks_mpi4("MPI_Bcast_c, MPI_Allreduce_c and MPI_Sendrecv_replace_c");
#else
  int values[4] = {1, 2, 3, 4};
  int sums[4];
  MPI_Comm null_comm = MPI_COMM_NULL;
  MPI_File null_file = MPI_FILE_NULL;
  MPI_File file;
  const int results[] = {
      MPI_Bcast_c(values, 4, MPI_INT, 0, MPI_COMM_NULL),
      MPI_Allreduce_c(values, sums, 4, MPI_INT, MPI_SUM, MPI_COMM_NULL),
      MPI_Sendrecv_replace_c(values, 1, MPI_INT, 0, 0, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE),
      MPI_File_open(MPI_COMM_NULL, "bad_handles.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file),
      MPI_File_write_all(MPI_FILE_NULL, values, 4, MPI_INT, MPI_STATUS_IGNORE),
      MPI_File_write_at(MPI_FILE_NULL, 0, values, 4, MPI_INT, MPI_STATUS_IGNORE),
      MPI_File_read_all_begin(MPI_FILE_NULL, values, 4, MPI_INT),
      MPI_File_set_view(MPI_FILE_NULL, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL),
      MPI_File_close(&null_file),
      MPI_Comm_disconnect(&null_comm),
  };
  static const char* const calls[] = {
      "MPI_Bcast_c on MPI_COMM_NULL",      "MPI_Allreduce_c on MPI_COMM_NULL",
      "MPI_Sendrecv_replace_c on MPI_COMM_NULL", "MPI_File_open on MPI_COMM_NULL",
      "MPI_File_write_all on MPI_FILE_NULL", "MPI_File_write_at on MPI_FILE_NULL",
      "MPI_File_read_all_begin on MPI_FILE_NULL", "MPI_File_set_view on MPI_FILE_NULL",
      "MPI_File_close of MPI_FILE_NULL",    "MPI_Comm_disconnect of MPI_COMM_NULL",
  };
  if (rank == 0)
    for (size_t i = 0; i < sizeof results / sizeof results[0]; ++i) printf("%s: %s\n", calls[i], class_name(results[i]));
#endif
  /* The checker's records stay usable: a collective after the errors. */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
