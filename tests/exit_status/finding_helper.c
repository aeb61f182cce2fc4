#include "finding_helper.h"

#include <mpi.h>

static MPI_Comm kept = MPI_COMM_NULL;

void lib_make_comm(void) { MPI_Comm_dup(MPI_COMM_SELF, &kept); }
