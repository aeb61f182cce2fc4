/* What the api_completeness test preprocesses: the MPI API as a program sees it. */
#include <mpi.h>
#include <mpio.h>
