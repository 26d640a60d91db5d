! Ring in Fortran (mpif.h): the recorder must see mpi_recv_ and mpi_irecv_.
program ring_f
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs, left, right, i, iters, req
  integer :: token, inbuf
  integer :: status(MPI_STATUS_SIZE)
  character(len=16) :: arg
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  iters = 50
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) iters
  end if
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)
  token = rank
  do i = 1, iters
    call MPI_Irecv(inbuf, 1, MPI_INTEGER, left, 5, MPI_COMM_WORLD, req, ierr)
    call MPI_Send(token, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD, ierr)
    call MPI_Wait(req, status, ierr)
    token = inbuf + 1
    call MPI_Isend(token, 1, MPI_INTEGER, right, 6, MPI_COMM_WORLD, req, ierr)
    call MPI_Recv(inbuf, 1, MPI_INTEGER, left, 6, MPI_COMM_WORLD, status, ierr)
    call MPI_Wait(req, status, ierr)
  end do
  call MPI_Finalize(ierr)
end program ring_f
