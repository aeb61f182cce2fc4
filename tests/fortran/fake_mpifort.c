/* Stands in for an MPICH Fortran library (it is built as libmpifort.so)
 * linked with full RELRO and without a PLT, as MPICH builds may be: its
 * PMPI_Barrier call goes through a GOT slot that is read-only once the
 * library is loaded, the case that MPICH 4.0.2 on Debian (partial RELRO)
 * does not show. */
#include <mpi.h>

__attribute__((visibility("default"))) void fake_mpifort_barrier(MPI_Comm comm) {
  PMPI_Barrier(comm);
}
