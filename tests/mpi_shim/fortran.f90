! Fortran callers of augur's MPI through `use mpi`: point-to-point with statuses and Get_count,
! Waitall/Waitany, MPI_IN_PLACE and MPI_STATUS(ES)_IGNORE from the common blocks, collectives
! checked against serial references, a derived type, a cartesian shift, Wtime.
program fortran_conformance
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, left, right, i, n, idx, cnt, cart, src, dst, vec
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2), reqs(2)
  integer :: ibuf(100), jbuf(100), dims(1), coords(1), total
  integer :: pass, fail, counts(2), all_counts(2)
  logical :: periods(1)
  double precision :: x(8), y(8), t0
  pass = 0
  fail = 0
  call MPI_Init(ierr)
  call check(ierr == MPI_SUCCESS, 'init')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  t0 = MPI_Wtime()
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)

  ! Sendrecv with a status; Get_count.
  ibuf = rank
  call MPI_Sendrecv(ibuf, 37, MPI_INTEGER, right, 3, jbuf, 100, MPI_INTEGER, left, 3, MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  call check(status(MPI_SOURCE) == left .and. status(MPI_TAG) == 3 .and. cnt == 37 .and. jbuf(37) == left, 'sendrecv')

  ! Irecv/Isend + Waitall with statuses; Waitany on nulls.
  jbuf = -1
  call MPI_Irecv(jbuf, 100, MPI_INTEGER, left, 4, MPI_COMM_WORLD, reqs(1), ierr)
  ibuf = (/ (rank * 1000 + i, i = 1, 100) /)
  call MPI_Isend(ibuf, 100, MPI_INTEGER, right, 4, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, statuses, ierr)
  call check(jbuf(1) == left * 1000 + 1 .and. jbuf(100) == left * 1000 + 100, 'waitall data')
  call check(statuses(MPI_SOURCE, 1) == left .and. reqs(1) == MPI_REQUEST_NULL, 'waitall statuses')
  call MPI_Waitany(2, reqs, idx, MPI_STATUS_IGNORE, ierr)
  call check(idx == MPI_UNDEFINED, 'waitany on nulls')
  call MPI_Irecv(jbuf, 1, MPI_INTEGER, left, 5, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Send(rank, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD, ierr)
  call MPI_Waitany(2, reqs, idx, status, ierr)
  call check(idx == 1 .and. jbuf(1) == left, 'waitany index is 1-based')
  call MPI_Recv(jbuf, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'recv from PROC_NULL with STATUS_IGNORE')

  ! Collectives against serial references.
  call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(total == nprocs * (nprocs + 1) / 2, 'allreduce')
  x = dble(rank)
  call MPI_Allreduce(MPI_IN_PLACE, x, 8, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(all(x == dble(nprocs - 1)), 'allreduce in place')
  y = 0
  if (rank == 0) y = (/ (dble(i), i = 1, 8) /)
  call MPI_Bcast(y, 8, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call check(y(8) == 8d0, 'bcast')
  counts(1) = rank
  counts(2) = -rank
  call MPI_Allgather(counts(1), 1, MPI_INTEGER, ibuf, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(ibuf(1:nprocs) == (/ (i, i = 0, nprocs - 1) /)), 'allgather')
  call MPI_Reduce(counts, all_counts, 2, MPI_INTEGER, MPI_MIN, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(all_counts(1) == 0 .and. all_counts(2) == 1 - nprocs, 'reduce min')
  call MPI_Scan(1, n, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(n == rank + 1, 'scan')

  ! A strided derived type: every other element.
  call MPI_Type_vector(4, 1, 2, MPI_DOUBLE_PRECISION, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  x = (/ (dble(rank * 10 + i), i = 1, 8) /)
  y = -1
  call MPI_Sendrecv(x, 1, vec, right, 6, y, 4, MPI_DOUBLE_PRECISION, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(y(1) == dble(left * 10 + 1) .and. y(4) == dble(left * 10 + 7), 'vector type')
  call MPI_Type_free(vec, ierr)

  ! Cartesian ring.
  dims(1) = 0
  call MPI_Dims_create(nprocs, 1, dims, ierr)
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
  call MPI_Cart_coords(cart, rank, 1, coords, ierr)
  call check(dims(1) == nprocs .and. src == left .and. dst == right .and. coords(1) == rank, 'cart')
  call MPI_Comm_free(cart, ierr)
  call check(MPI_Wtime() >= t0, 'wtime')

  call MPI_Reduce((/ pass, fail /), counts, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a)', 'fortran (', nprocs, ' ranks): ', counts(1), ' passed, ', counts(2), ' failed'
  call MPI_Finalize(ierr)
  if (fail > 0) stop 1
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      pass = pass + 1
    else
      fail = fail + 1
      print '(a,i0,a,a)', 'rank ', rank, ': FAILED: ', what
    end if
  end subroutine check
end program fortran_conformance
