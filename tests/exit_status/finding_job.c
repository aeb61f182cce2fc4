/* What the exit-status tests run on 2 ranks: argv[1] says what the job
 * finds, argv[2] is the status each rank returns after MPI_Finalize.
 *   clean     nothing
 *   warning   rank 1 never frees a communicator it made in make_halo_comm
 *             (LOCAL:COMM:NOT_FREED, a warning, on by default)
 *   library   the same, made in the helper library's lib_make_comm
 *   error     rank 1 sends to a rank that does not exist under
 *             MPI_ERRORS_RETURN in send_to_missing_rank
 *             (LOCAL:MPI:CALL_FAILED, an error, when switched on)
 *   deadlock  both ranks receive first (GLOBAL:DEADLOCK:HARD)
 *   sends     both ranks send first, a message MPI buffers
 *             (GLOBAL:DEADLOCK:POTENTIAL in the potential-deadlock mode)
 *   crash     rank 1 dereferences a null pointer (SIGSEGV) */
#include <mpi.h>
#include <stdlib.h>

#include "finding_helper.h"
#include "support.h"

static MPI_Comm halo_comm = MPI_COMM_NULL;

static void make_halo_comm(void) { MPI_Comm_dup(MPI_COMM_SELF, &halo_comm); }

static void send_to_missing_rank(void) {
  int value = 0;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Send(&value, 1, MPI_INT, 5, 0, MPI_COMM_WORLD); /* rank 5 does not exist */
}

static void send_first(int rank) {
  int value = 0;
  MPI_Send(&value, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD);
  MPI_Recv(&value, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void receive_first(int rank) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  MPI_Send(&value, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  static const char* const kVariants[] = {"clean", "warning", "library", "error", "deadlock", "crash", "sends"};
  MPI_Init(&argc, &argv);
  const int variant = variant_argument(argc, argv, 1, "what the job finds", kVariants, 7);
  const int status = argc > 2 ? atoi(argv[2]) : 0;
  const int rank = world_rank_checked(2, 2);
  if (rank == 1) {
    switch (variant) {
      case 1: make_halo_comm(); break;
      case 2: lib_make_comm(); break;
      case 3: send_to_missing_rank(); break;
      case 5: *(volatile int*)NULL = 1; break;
      default: break;
    }
  }
  if (variant == 4) receive_first(rank);
  if (variant == 6) send_first(rank);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
