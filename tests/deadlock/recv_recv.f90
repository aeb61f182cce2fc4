! Two ranks each receive from the other before either sends: a hard
! deadlock, through the Fortran bindings.
! mpisentry-expect: 2 ranks, GLOBAL:DEADLOCK:HARD
! mpisentry-expect: rank 0 MPI_Recv\(
! mpisentry-expect: rank 1 MPI_Recv\(
! mpisentry-expect: blocks in *
program recv_recv
  use mpi
  implicit none
  integer :: rank, size, peer, value, ierr
  integer :: status(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (size /= 2) then
    if (rank == 0) write (0, '(a, i0)') 'recv_recv_f: needs exactly 2 ranks, runs on ', size
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  peer = 1 - rank
  value = rank
  call MPI_Recv(value, 1, MPI_INTEGER, peer, 0, MPI_COMM_WORLD, status, ierr) ! mpisentry: blocks
  call MPI_Send(value, 1, MPI_INTEGER, peer, 0, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program recv_recv
