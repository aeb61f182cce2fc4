! The specification part that opens every program unit of
! fortran_bindings.F90, its handle types and its error argument, for the
! binding chosen when compiling: BINDING_MPIF_H (include 'mpif.h'),
! BINDING_MPI (use mpi) or BINDING_F08 (use mpi_f08). IERROR ends an
! argument list with the error argument, IERROR_ALONE is all of one. An f08
! call leaves out its optional error argument, as f08 programs do (gfortran
! 12 gives an MPI_Barrier call that passes it the line of the subroutine
! statement in the debug information).
#if defined(BINDING_F08)
  use mpi_f08
  implicit none
#define COMM_HANDLE type(MPI_Comm)
#define DATATYPE_HANDLE type(MPI_Datatype)
#define GROUP_HANDLE type(MPI_Group)
#define STATUS_OBJECT type(MPI_Status)
#define IERROR
#define IERROR_ALONE
#elif defined(BINDING_MPI)
  use mpi
  implicit none
#define COMM_HANDLE integer
#define DATATYPE_HANDLE integer
#define GROUP_HANDLE integer
#define STATUS_OBJECT integer, dimension(MPI_STATUS_SIZE)
#define IERROR , ierr
#define IERROR_ALONE ierr
  integer :: ierr
#elif defined(BINDING_MPIF_H)
  implicit none
  include 'mpif.h'
#define COMM_HANDLE integer
#define DATATYPE_HANDLE integer
#define GROUP_HANDLE integer
#define STATUS_OBJECT integer, dimension(MPI_STATUS_SIZE)
#define IERROR , ierr
#define IERROR_ALONE ierr
  integer :: ierr
#else
#error "define BINDING_MPIF_H, BINDING_MPI or BINDING_F08"
#endif
