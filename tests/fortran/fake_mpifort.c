/* Stands in for an MPICH Fortran bindings library, by what such a library
 * is: it needs MPI's library and defines PMPI_Init's Fortran binding
 * (pmpi_init_); its file name (libfortran_stand_in.so) is nobody's. Linked
 * with full RELRO and without a PLT, as MPICH builds may be: its
 * PMPI_Barrier call goes through a GOT slot that is read-only once the
 * library is loaded, the case that MPICH 4.0.2 on Debian (partial RELRO)
 * does not show. */
#include <mpi.h>
#include <stddef.h>

__attribute__((visibility("default"))) void pmpi_init_(MPI_Fint* ierror) { *ierror = PMPI_Init(NULL, NULL); }

__attribute__((visibility("default"))) void fake_mpifort_barrier(MPI_Comm comm) {
  PMPI_Barrier(comm);
}
