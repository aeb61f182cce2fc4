/* Erroneous window synchronization under MPI_ERRORS_RETURN, for which the
 * checker must give what MPI gives: MPI_WIN_NULL passed to MPI_Win_fence,
 * MPI_Win_lock and MPI_Win_wait; on a real window, an epoch ended that was
 * never started, an unlock without a lock, and MPI_GROUP_NULL to
 * MPI_Win_start. Rank 0 prints each call's error class; then the ranks still
 * fence and free the window as a correct program would. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

static const char* class_name(int code) {
  int error_class = code;
  if (code != MPI_SUCCESS) MPI_Error_class(code, &error_class);
  switch (error_class) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_WIN: return "MPI_ERR_WIN";
    case MPI_ERR_RMA_SYNC: return "MPI_ERR_RMA_SYNC";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP";
    case MPI_ERR_RANK: return "MPI_ERR_RANK";
    default: return "another error class";
  }
}

static void report(int rank, const char* call, int code) {
  if (rank == 0) printf("%s: %s\n", call, class_name(code));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  report(rank, "MPI_Win_fence(MPI_WIN_NULL)", MPI_Win_fence(0, MPI_WIN_NULL));
  report(rank, "MPI_Win_lock(MPI_WIN_NULL)", MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, MPI_WIN_NULL));
  report(rank, "MPI_Win_wait(MPI_WIN_NULL)", MPI_Win_wait(MPI_WIN_NULL));
  MPI_Win null_window = MPI_WIN_NULL;
  report(rank, "MPI_Win_free(&MPI_WIN_NULL)", MPI_Win_free(&null_window));

  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  report(rank, "MPI_Win_wait without MPI_Win_post", MPI_Win_wait(win));
  report(rank, "MPI_Win_complete without MPI_Win_start", MPI_Win_complete(win));
  report(rank, "MPI_Win_unlock without MPI_Win_lock", MPI_Win_unlock(0, win));
  report(rank, "MPI_Win_start(MPI_GROUP_NULL)", MPI_Win_start(MPI_GROUP_NULL, 0, win));
  report(rank, "MPI_Win_flush(rank out of range)", MPI_Win_flush(99, win));
  report(rank, "MPI_Win_fence", MPI_Win_fence(0, win));
  report(rank, "MPI_Win_free", MPI_Win_free(&win));
  MPI_Finalize();
  return 0;
}
