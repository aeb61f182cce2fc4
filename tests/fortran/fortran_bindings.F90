! The same calls through each of MPICH's Fortran bindings (fortran_binding.h
! chooses one when compiling), on a duplicate of MPI_COMM_WORLD, two ranks:
!   deadlock          rank 0 waits in a barrier that rank 1 never enters,
!                     rank 1 in a receive from rank 0;
!   imbalance SECONDS rank 0 computes for SECONDS and then sends, rank 1
!                     waits in the receive meanwhile; both meet in the barrier;
!   leak              each rank makes a communicator, a datatype and a group
!                     that it never frees, and both meet in the barrier.
program fortran_bindings
#include "fortran_binding.h"
  COMM_HANDLE :: comm
  integer :: rank, size
  character(len=16) :: mode, seconds

  call MPI_Init(IERROR_ALONE)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank IERROR)
  call MPI_Comm_size(MPI_COMM_WORLD, size IERROR)
  call get_command_argument(1, mode)
  call get_command_argument(2, seconds)
  if (size /= 2 .or. .not. (mode == 'deadlock' .or. mode == 'leak' .or. (mode == 'imbalance' .and. seconds /= ''))) &
    then
    if (rank == 0) write (0, '(a)') 'fortran_bindings: usage: mpiexec -n 2 fortran_bindings deadlock|imbalance SECONDS|leak'
    call MPI_Abort(MPI_COMM_WORLD, 2 IERROR)
  end if
  call MPI_Comm_dup(MPI_COMM_WORLD, comm IERROR)
  if (mode == 'leak') then
    call leak_handles(comm)
  else if (rank == 0) then
    if (mode == 'imbalance') then
      call compute_for(seconds)
      call send_work(comm)
    end if
  else
    call wait_for_work(comm)
  end if
  call synchronize(comm)
  call MPI_Comm_free(comm IERROR)
  call MPI_Finalize(IERROR_ALONE)
end program fortran_bindings

subroutine synchronize(comm)
#include "fortran_binding.h"
  COMM_HANDLE, intent(in) :: comm
  call MPI_Barrier(comm IERROR) ! mpisentry: blocks
end subroutine synchronize

! Handles never freed, each made on its own marked line.
subroutine leak_handles(comm)
#include "fortran_binding.h"
  COMM_HANDLE, intent(in) :: comm
  COMM_HANDLE :: split
  DATATYPE_HANDLE :: vector
  GROUP_HANDLE :: group
  integer :: rank
  call MPI_Comm_rank(comm, rank IERROR)
  call MPI_Comm_split(comm, 0, rank, split IERROR) ! mpisentry: split
  call MPI_Type_vector(2, 1, 2, MPI_INTEGER, vector IERROR) ! mpisentry: vector
  call MPI_Comm_group(comm, group IERROR) ! mpisentry: group
end subroutine leak_handles

subroutine wait_for_work(comm)
#include "fortran_binding.h"
  COMM_HANDLE, intent(in) :: comm
  STATUS_OBJECT :: status
  integer :: work
  call MPI_Recv(work, 1, MPI_INTEGER, 0, 0, comm, status IERROR) ! mpisentry: blocks
end subroutine wait_for_work

subroutine send_work(comm)
#include "fortran_binding.h"
  COMM_HANDLE, intent(in) :: comm
  call MPI_Send(1, 1, MPI_INTEGER, 1, 0, comm IERROR)
end subroutine send_work

! Busy on the CPU, without MPI, for `seconds` (a decimal number).
subroutine compute_for(seconds)
  implicit none
  character(len=*), intent(in) :: seconds
  real :: duration
  integer(kind=8) :: start, now, rate
  real(kind=8) :: sink
  integer :: i
  read (seconds, *) duration
  sink = 0
  call system_clock(start, rate)
  do
    do i = 1, 1000
      sink = sink + 1.0d0 / i
    end do
    call system_clock(now)
    if (real(now - start) / real(rate) >= duration) exit
  end do
  if (sink < 0) write (*, *) sink
end subroutine compute_for
