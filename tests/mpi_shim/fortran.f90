! Fortran callers of augur's MPI through `use mpi`: point-to-point with statuses and Get_count,
! Waitall/Waitany/Waitsome/Testany (1-based indices), Mprobe/Mrecv, buffered sends, cancellation,
! MPI_IN_PLACE and MPI_STATUS(ES)_IGNORE from the common blocks, collectives checked against
! serial references, derived types with INTEGER(KIND=MPI_ADDRESS_KIND) strides, displacements
! and extents, Pack/Unpack, groups and Comm_create, cartesian shift and Cart_sub (LOGICAL
! remain_dims), Alloc_mem/Free_mem through c_f_pointer, windows and their attributes,
! distributed graphs and neighbourhood collectives, external32 packing, Wtime.
program fortran_conformance
  use mpi
  use, intrinsic :: iso_c_binding, only: c_int, c_double, c_ptr, c_f_pointer
  implicit none
  ! A C-layout record: two INTEGERs at 0, a gap the struct type skips, a DOUBLE at 16.
  type, bind(c) :: rec_t
    integer(c_int) :: a(2)
    real(c_double) :: pad
    real(c_double) :: d
  end type rec_t
  integer :: ierr, rank, nprocs, left, right, i, n, idx, cnt, cart, src, dst, vec, vec2
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2), reqs(2)
  integer :: ibuf(100), jbuf(100), dims(1), coords(1), total
  integer :: pass, fail, counts(2), all_counts(2)
  logical :: periods(1)
  double precision :: x(8), y(8), t0
  integer :: k, bsize, psize, pos, pos2, newtype, outcount, expect, neven, nodd, sub
  integer :: wgroup, evens, odds, both, rev, gsize, grank, big(1000), kbuf(3), seen(3)
  integer :: msg, reqs3(3), indices(3), statuses3(MPI_STATUS_SIZE, 3), bl(2), types(2), idispls(3)
  integer :: ranks_a(64), ranks_b(64), dims2(2), coords2(2)
  integer(kind=1) :: bbuf(1024), pbuf(256), rpbuf(256)
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent, stride, adispls(2), asize, baseptr
  logical :: flag, ok, remain(2), periods2(2)
  integer :: info, info2, nkeys, vlen, gidx(2), gedges(2), gcomm, nbrs(2), node, nsize, ecls, ecode, slen
  character(len=64) :: key, val, tname
  character(len=MPI_MAX_ERROR_STRING) :: etext
  type(rec_t) :: recs_out(2), recs_in(2)
  type(c_ptr) :: cp
  double precision, pointer :: mem(:)
  integer :: win, wbuf(4)
  integer :: icomm, merged, mrank
  integer :: kv1, kv2, kv3, d1, d2, ival, ndeleted, lastdel
  integer(kind=MPI_ADDRESS_KIND) :: aval
  common /augur_test_del/ ndeleted, lastdel
  external count_delete
  type(c_ptr) :: sptr
  integer, pointer :: shared(:)
  integer(kind=8) :: cnt8, one8, old8
  integer :: dg, dg2, indeg, outdeg, nb_in(1), nb_w(1), nb_out(1), nb_w2(1), sval, rval, kv4, wrq
  integer(kind=MPI_ADDRESS_KIND) :: apos, waddr
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
  ! Matched probe: the message handle is an INTEGER, set to MPI_MESSAGE_NULL by Mrecv.
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 6, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Mprobe(left, 6, MPI_COMM_WORLD, msg, status, ierr)
  call check(ierr == MPI_SUCCESS .and. msg /= MPI_MESSAGE_NULL .and. status(MPI_SOURCE) == left, 'mprobe')
  call MPI_Mrecv(jbuf, 1, MPI_INTEGER, msg, status, ierr)
  call check(ierr == MPI_SUCCESS .and. jbuf(1) == left .and. msg == MPI_MESSAGE_NULL .and. status(MPI_TAG) == 6, 'mrecv')
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)

  ! Waitsome behind a null request: indices 2 and 3 (1-based), statuses packed in their order,
  ! then MPI_UNDEFINED once every request is null.
  kbuf = -1
  reqs3(1) = MPI_REQUEST_NULL
  call MPI_Irecv(kbuf(2), 1, MPI_INTEGER, left, 12, MPI_COMM_WORLD, reqs3(2), ierr)
  call MPI_Irecv(kbuf(3), 1, MPI_INTEGER, left, 13, MPI_COMM_WORLD, reqs3(3), ierr)
  call MPI_Send(rank + 12, 1, MPI_INTEGER, right, 12, MPI_COMM_WORLD, ierr)
  call MPI_Send(rank + 13, 1, MPI_INTEGER, right, 13, MPI_COMM_WORLD, ierr)
  seen = 0
  ok = .true.
  do n = 1, 10
    call MPI_Waitsome(3, reqs3, outcount, indices, statuses3, ierr)
    if (outcount == MPI_UNDEFINED) exit
    if (outcount < 1 .or. outcount > 3) ok = .false.
    do k = 1, min(max(outcount, 0), 3)
      if (indices(k) < 1 .or. indices(k) > 3) then
        ok = .false.
      else
        seen(indices(k)) = seen(indices(k)) + 1
        if (statuses3(MPI_TAG, k) /= 10 + indices(k) .or. statuses3(MPI_SOURCE, k) /= left) ok = .false.
      end if
    end do
  end do
  call check(ok .and. outcount == MPI_UNDEFINED .and. all(seen == (/ 0, 1, 1 /)), 'waitsome indices are 1-based')
  call check(kbuf(2) == left + 12 .and. kbuf(3) == left + 13 .and. all(reqs3 == MPI_REQUEST_NULL), 'waitsome data')

  ! Testany behind a null request: index 2; on nulls flag true and MPI_UNDEFINED.
  reqs(1) = MPI_REQUEST_NULL
  call MPI_Irecv(kbuf(1), 1, MPI_INTEGER, left, 14, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Send(rank + 14, 1, MPI_INTEGER, right, 14, MPI_COMM_WORLD, ierr)
  flag = .false.
  ok = .true.
  do while (.not. flag)
    call MPI_Testany(2, reqs, idx, flag, status, ierr)
    if (.not. flag .and. idx /= MPI_UNDEFINED) ok = .false.
  end do
  call check(ok .and. idx == 2 .and. kbuf(1) == left + 14 .and. status(MPI_TAG) == 14 &
             .and. reqs(2) == MPI_REQUEST_NULL, 'testany index is 1-based')
  call MPI_Testany(2, reqs, idx, flag, MPI_STATUS_IGNORE, ierr)
  call check(flag .and. idx == MPI_UNDEFINED, 'testany on nulls')

  ! Test_cancelled: false for the receive above, true for a receive cancelled unmatched.
  flag = .true.
  call MPI_Test_cancelled(status, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 'test_cancelled on a completed receive')
  call MPI_Irecv(kbuf(1), 1, MPI_INTEGER, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Cancel(reqs(1), ierr)
  call MPI_Wait(reqs(1), status, ierr)
  flag = .false.
  call MPI_Test_cancelled(status, flag, ierr)
  call check(flag, 'unmatched receive is cancelled')

  ! Buffered send from an attached buffer: the size bounds it; detach returns the size.
  call MPI_Pack_size(100, MPI_INTEGER, MPI_COMM_WORLD, psize, ierr)
  call check(psize == 400, 'pack_size of 100 INTEGERs')
  bsize = psize + MPI_BSEND_OVERHEAD
  call MPI_Buffer_attach(bbuf, bsize, ierr)
  call check(ierr == MPI_SUCCESS, 'buffer_attach')
  ibuf = (/ (rank + i, i = 1, 100) /)
  call MPI_Bsend(ibuf, 100, MPI_INTEGER, right, 10, MPI_COMM_WORLD, ierr)
  ibuf(1) = -1
  big = 0
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Bsend(big, 1000, MPI_INTEGER, right, 11, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_ERR_BUFFER, 'bsend past the attached buffer')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  jbuf = -1
  call MPI_Recv(jbuf, 100, MPI_INTEGER, left, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(jbuf(1) == left + 1 .and. jbuf(100) == left + 100, 'bsend data')
  n = -1
  call MPI_Buffer_detach(bbuf, n, ierr)
  call check(ierr == MPI_SUCCESS .and. n == bsize, 'buffer_detach returns the size')

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
  ! Nonblocking collectives: two in flight, completed together.
  total = -1
  y = 0
  if (rank == nprocs - 1) y = (/ (dble(i), i = 11, 18) /)
  call MPI_Iallreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Ibcast(y, 8, MPI_DOUBLE_PRECISION, nprocs - 1, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. total == nprocs * (nprocs + 1) / 2 .and. y(1) == 11d0 .and. y(8) == 18d0 &
             .and. all(reqs == MPI_REQUEST_NULL), 'iallreduce and ibcast')
  counts(1) = rank
  counts(2) = -rank
  call MPI_Allgather(counts(1), 1, MPI_INTEGER, ibuf, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(ibuf(1:nprocs) == (/ (i, i = 0, nprocs - 1) /)), 'allgather')
  call MPI_Reduce(counts, all_counts, 2, MPI_INTEGER, MPI_MIN, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(all_counts(1) == 0 .and. all_counts(2) == 1 - nprocs, 'reduce min')
  call MPI_Scan(1, n, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(n == rank + 1, 'scan')
  ! Reduce_scatter_block: rank r gets elements 2r+1, 2r+2 of the sum.
  ibuf(1:2 * nprocs) = (/ (rank * 100 + i, i = 1, 2 * nprocs) /)
  jbuf = -1
  call MPI_Reduce_scatter_block(ibuf, jbuf, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(jbuf(1) == 50 * nprocs * (nprocs - 1) + nprocs * (2 * rank + 1) &
             .and. jbuf(2) == 50 * nprocs * (nprocs - 1) + nprocs * (2 * rank + 2) .and. jbuf(3) == -1, &
             'reduce_scatter_block')

  ! A strided derived type: every other element.
  call MPI_Type_vector(4, 1, 2, MPI_DOUBLE_PRECISION, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  x = (/ (dble(rank * 10 + i), i = 1, 8) /)
  y = -1
  call MPI_Sendrecv(x, 1, vec, right, 6, y, 4, MPI_DOUBLE_PRECISION, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(y(1) == dble(left * 10 + 1) .and. y(4) == dble(left * 10 + 7), 'vector type')

  call MPI_Type_get_extent(vec, lb, extent, ierr)
  call check(lb == 0 .and. extent == 56, 'vector extent')
  call MPI_Type_free(vec, ierr)

  ! Type_create_resized: elements 1 and 5 with an extent of one element, so 4 of them transpose
  ! a 4x2 array.
  call MPI_Type_vector(2, 1, 4, MPI_DOUBLE_PRECISION, vec2, ierr)
  lb = 0
  extent = 8
  call MPI_Type_create_resized(vec2, lb, extent, newtype, ierr)
  call MPI_Type_commit(newtype, ierr)
  lb = -1
  extent = -1
  call MPI_Type_get_extent(newtype, lb, extent, ierr)
  call check(lb == 0 .and. extent == 8, 'resized extent')
  y = -1
  call MPI_Sendrecv(x, 4, newtype, right, 8, y, 8, MPI_DOUBLE_PRECISION, left, 8, MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, MPI_DOUBLE_PRECISION, cnt, ierr)
  call check(cnt == 8 .and. all(y == dble(left * 10) + (/ 1d0, 5d0, 2d0, 6d0, 3d0, 7d0, 4d0, 8d0 /)), &
             'resized vector transposes')
  call MPI_Type_free(newtype, ierr)
  lb = -8
  extent = 24
  call MPI_Type_create_resized(vec2, lb, extent, newtype, ierr)
  lb = 0
  extent = 0
  call MPI_Type_get_extent(newtype, lb, extent, ierr)
  call check(lb == -8 .and. extent == 24, 'resized with a negative lb')
  call MPI_Type_free(newtype, ierr)
  call MPI_Type_free(vec2, ierr)

  ! Type_create_hvector: a byte stride of 16 selects every other DOUBLE PRECISION.
  stride = 16
  call MPI_Type_create_hvector(4, 1, stride, MPI_DOUBLE_PRECISION, newtype, ierr)
  call MPI_Type_commit(newtype, ierr)
  lb = -1
  extent = -1
  call MPI_Type_get_extent(newtype, lb, extent, ierr)
  call check(lb == 0 .and. extent == 56, 'hvector extent')
  y = -1
  call MPI_Sendrecv(x, 1, newtype, right, 20, y, 8, MPI_DOUBLE_PRECISION, left, 20, MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, MPI_DOUBLE_PRECISION, cnt, ierr)
  call check(cnt == 4 .and. all(y(1:4) == (/ (dble(left * 10 + 2 * i - 1), i = 1, 4) /)) .and. y(5) == -1, &
             'hvector type')
  call MPI_Type_free(newtype, ierr)

  ! Type_create_hindexed: 2 elements at byte 0 and 1 at byte 40 (elements 1, 2, 6).
  bl = (/ 2, 1 /)
  adispls = (/ 0_MPI_ADDRESS_KIND, 40_MPI_ADDRESS_KIND /)
  call MPI_Type_create_hindexed(2, bl, adispls, MPI_DOUBLE_PRECISION, newtype, ierr)
  call MPI_Type_commit(newtype, ierr)
  call MPI_Type_get_extent(newtype, lb, extent, ierr)
  call check(lb == 0 .and. extent == 48, 'hindexed extent')
  y = -1
  call MPI_Sendrecv(x, 1, newtype, right, 21, y, 8, MPI_DOUBLE_PRECISION, left, 21, MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, MPI_DOUBLE_PRECISION, cnt, ierr)
  call check(cnt == 3 .and. all(y(1:3) == dble(left * 10) + (/ 1d0, 2d0, 6d0 /)) .and. y(4) == -1, 'hindexed type')
  call MPI_Type_free(newtype, ierr)

  ! Type_create_indexed_block: blocks of 2 INTEGERs at elements 0, 3, 6.
  idispls = (/ 0, 3, 6 /)
  call MPI_Type_create_indexed_block(3, 2, idispls, MPI_INTEGER, newtype, ierr)
  call MPI_Type_commit(newtype, ierr)
  call MPI_Type_size(newtype, n, ierr)
  call check(n == 24, 'indexed_block size')
  ibuf = (/ (rank * 1000 + i, i = 1, 100) /)
  jbuf = -1
  call MPI_Sendrecv(ibuf, 1, newtype, right, 22, jbuf, 100, MPI_INTEGER, left, 22, MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  call check(cnt == 6 .and. all(jbuf(1:6) == left * 1000 + (/ 1, 2, 4, 5, 7, 8 /)) .and. jbuf(7) == -1, &
             'indexed_block type')
  call MPI_Type_free(newtype, ierr)

  ! Type_create_struct over a C-layout record: the gap is neither sent nor written.
  bl = (/ 2, 1 /)
  adispls = (/ 0_MPI_ADDRESS_KIND, 16_MPI_ADDRESS_KIND /)
  types = (/ MPI_INTEGER, MPI_DOUBLE_PRECISION /)
  call MPI_Type_create_struct(2, bl, adispls, types, newtype, ierr)
  call MPI_Type_commit(newtype, ierr)
  call MPI_Type_size(newtype, n, ierr)
  call MPI_Type_get_extent(newtype, lb, extent, ierr)
  call check(n == 16 .and. lb == 0 .and. extent == 24, 'struct size and extent')
  do k = 1, 2
    recs_out(k)%a = (/ rank * 10 + k, -rank - k /)
    recs_out(k)%pad = 99d0
    recs_out(k)%d = rank + 0.5d0 * k
    recs_in(k)%a = -1
    recs_in(k)%pad = -1d0
    recs_in(k)%d = -1d0
  end do
  call MPI_Sendrecv(recs_out, 2, newtype, right, 23, recs_in, 2, newtype, left, 23, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  ok = .true.
  do k = 1, 2
    if (recs_in(k)%a(1) /= left * 10 + k .or. recs_in(k)%a(2) /= -left - k) ok = .false.
    if (recs_in(k)%d /= left + 0.5d0 * k .or. recs_in(k)%pad /= -1d0) ok = .false.
  end do
  call check(ok, 'struct type')
  call MPI_Type_free(newtype, ierr)

  ! Pack 3 INTEGERs and 2 DOUBLE PRECISIONs, send as MPI_PACKED, unpack on the other side.
  call MPI_Pack_size(3, MPI_INTEGER, MPI_COMM_WORLD, psize, ierr)
  call check(psize == 12, 'pack_size')
  kbuf = (/ rank, rank + 1, rank + 2 /)
  x(1:2) = (/ rank + 0.5d0, rank + 0.25d0 /)
  pos = 0
  call MPI_Pack(kbuf, 3, MPI_INTEGER, pbuf, 256, pos, MPI_COMM_WORLD, ierr)
  call check(pos == 12, 'pack position after INTEGERs')
  call MPI_Pack(x, 2, MPI_DOUBLE_PRECISION, pbuf, 256, pos, MPI_COMM_WORLD, ierr)
  call check(pos == 28, 'pack position after DOUBLE PRECISIONs')
  call MPI_Sendrecv(pbuf, pos, MPI_PACKED, right, 24, rpbuf, 256, MPI_PACKED, left, 24, MPI_COMM_WORLD, status, ierr)
  call MPI_Get_count(status, MPI_PACKED, cnt, ierr)
  kbuf = -1
  y = -1
  pos2 = 0
  call MPI_Unpack(rpbuf, cnt, pos2, kbuf, 3, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Unpack(rpbuf, cnt, pos2, y, 2, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD, ierr)
  call check(cnt == 28 .and. pos2 == 28 .and. all(kbuf == (/ left, left + 1, left + 2 /)) &
             .and. y(1) == left + 0.5d0 .and. y(2) == left + 0.25d0 .and. y(3) == -1, 'unpack')

  ! Cartesian ring.
  dims(1) = 0
  call MPI_Dims_create(nprocs, 1, dims, ierr)
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .false., cart, ierr)
  call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
  call MPI_Cart_coords(cart, rank, 1, coords, ierr)
  call check(dims(1) == nprocs .and. src == left .and. dst == right .and. coords(1) == rank, 'cart')
  call MPI_Comm_free(cart, ierr)

  ! Cart_sub of a 2-D grid (row-major ranks), keeping one dimension at a time.
  dims2 = 0
  call MPI_Dims_create(nprocs, 2, dims2, ierr)
  periods2 = .false.
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, periods2, .false., cart, ierr)
  call MPI_Cart_coords(cart, rank, 2, coords2, ierr)
  remain = (/ .true., .false. /)
  call MPI_Cart_sub(cart, remain, sub, ierr)
  call MPI_Comm_size(sub, gsize, ierr)
  call MPI_Comm_rank(sub, grank, ierr)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
  call check(gsize == dims2(1) .and. grank == coords2(1) &
             .and. total == dims2(2) * dims2(1) * (dims2(1) - 1) / 2 + dims2(1) * coords2(2), 'cart_sub keeps dim 1')
  call MPI_Comm_free(sub, ierr)
  remain = (/ .false., .true. /)
  call MPI_Cart_sub(cart, remain, sub, ierr)
  call MPI_Comm_size(sub, gsize, ierr)
  call MPI_Comm_rank(sub, grank, ierr)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
  call check(gsize == dims2(2) .and. grank == coords2(2) &
             .and. total == dims2(2) * dims2(2) * coords2(1) + dims2(2) * (dims2(2) - 1) / 2, 'cart_sub keeps dim 2')
  call MPI_Comm_free(sub, ierr)
  call MPI_Comm_free(cart, ierr)

  ! Groups: the world's, evens (incl), odds (excl), their union, translations, Comm_create.
  call MPI_Comm_group(MPI_COMM_WORLD, wgroup, ierr)
  call MPI_Group_size(wgroup, gsize, ierr)
  call MPI_Group_rank(wgroup, grank, ierr)
  call check(gsize == nprocs .and. grank == rank, 'comm_group size and rank')
  neven = (nprocs + 1) / 2
  nodd = nprocs / 2
  ranks_a(1:neven) = (/ (2 * i, i = 0, neven - 1) /)
  call MPI_Group_incl(wgroup, neven, ranks_a, evens, ierr)
  call MPI_Group_excl(wgroup, neven, ranks_a, odds, ierr)
  call MPI_Group_size(evens, gsize, ierr)
  call MPI_Group_rank(evens, grank, ierr)
  expect = MPI_UNDEFINED
  if (mod(rank, 2) == 0) expect = rank / 2
  call check(gsize == neven .and. grank == expect, 'group_incl')
  call MPI_Group_size(odds, gsize, ierr)
  call MPI_Group_rank(odds, grank, ierr)
  expect = MPI_UNDEFINED
  if (mod(rank, 2) == 1) expect = rank / 2
  call check(gsize == nodd .and. grank == expect, 'group_excl')
  ranks_a(1:nodd) = (/ (i, i = 0, nodd - 1) /)
  ranks_b = -5
  call MPI_Group_translate_ranks(odds, nodd, ranks_a, wgroup, ranks_b, ierr)
  call check(all(ranks_b(1:nodd) == (/ (2 * i + 1, i = 0, nodd - 1) /)) .and. ranks_b(nodd + 1) == -5, &
             'translate odds to world')
  ranks_a(1:nprocs) = (/ (i, i = 0, nprocs - 1) /)
  call MPI_Group_translate_ranks(wgroup, nprocs, ranks_a, evens, ranks_b, ierr)
  ok = .true.
  do i = 0, nprocs - 1
    expect = MPI_UNDEFINED
    if (mod(i, 2) == 0) expect = i / 2
    if (ranks_b(i + 1) /= expect) ok = .false.
  end do
  call check(ok, 'translate world to evens')
  call MPI_Group_union(odds, evens, both, ierr)
  call MPI_Group_size(both, gsize, ierr)
  call MPI_Group_translate_ranks(both, nprocs, ranks_a, wgroup, ranks_b, ierr)
  call check(gsize == nprocs .and. all(ranks_b(1:nodd) == (/ (2 * i + 1, i = 0, nodd - 1) /)) &
             .and. all(ranks_b(nodd + 1:nprocs) == (/ (2 * i, i = 0, neven - 1) /)), 'group_union order')
  ! A communicator from the world group in reverse order.
  ranks_a(1:nprocs) = (/ (nprocs - 1 - i, i = 0, nprocs - 1) /)
  call MPI_Group_incl(wgroup, nprocs, ranks_a, rev, ierr)
  call MPI_Comm_create(MPI_COMM_WORLD, rev, sub, ierr)
  call MPI_Comm_size(sub, gsize, ierr)
  call MPI_Comm_rank(sub, grank, ierr)
  ibuf = -1
  call MPI_Allgather(rank, 1, MPI_INTEGER, ibuf, 1, MPI_INTEGER, sub, ierr)
  call check(gsize == nprocs .and. grank == nprocs - 1 - rank &
             .and. all(ibuf(1:nprocs) == (/ (nprocs - i, i = 1, nprocs) /)), 'comm_create from a reversed group')
  call MPI_Comm_free(sub, ierr)
  ! Only the evens are in it; the others get MPI_COMM_NULL.
  call MPI_Comm_create(MPI_COMM_WORLD, evens, sub, ierr)
  if (mod(rank, 2) == 0) then
    call MPI_Comm_rank(sub, grank, ierr)
    call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, sub, ierr)
    call check(sub /= MPI_COMM_NULL .and. grank == rank / 2 .and. total == neven * (neven - 1), 'comm_create evens')
    call MPI_Comm_free(sub, ierr)
  else
    call check(sub == MPI_COMM_NULL, 'comm_create: not in the group')
  end if
  call MPI_Group_free(wgroup, ierr)
  call MPI_Group_free(evens, ierr)
  call MPI_Group_free(odds, ierr)
  call MPI_Group_free(both, ierr)
  call MPI_Group_free(rev, ierr)
  call check(wgroup == MPI_GROUP_NULL .and. evens == MPI_GROUP_NULL .and. odds == MPI_GROUP_NULL &
             .and. both == MPI_GROUP_NULL .and. rev == MPI_GROUP_NULL, 'group_free')

  ! Alloc_mem returns the address (page-aligned, docs/mpi.md) as an address-kind INTEGER; the
  ! memory is sent from and received into; Free_mem gets the memory itself.
  asize = 8 * 1000
  baseptr = -1
  call MPI_Alloc_mem(asize, MPI_INFO_NULL, baseptr, ierr)
  call check(ierr == MPI_SUCCESS .and. baseptr /= 0 .and. baseptr /= -1 &
             .and. mod(baseptr, 4096_MPI_ADDRESS_KIND) == 0, 'alloc_mem')
  cp = transfer(baseptr, cp)
  call c_f_pointer(cp, mem, (/ 1000 /))
  mem = (/ (dble(rank * 10000 + i), i = 1, 1000) /)
  call MPI_Sendrecv_replace(mem, 1000, MPI_DOUBLE_PRECISION, right, 25, left, 25, MPI_COMM_WORLD, &
                            MPI_STATUS_IGNORE, ierr)
  call check(mem(1) == dble(left * 10000 + 1) .and. mem(1000) == dble(left * 10000 + 1000), 'alloc_mem buffer')
  call MPI_Free_mem(mem, ierr)
  call check(ierr == MPI_SUCCESS, 'free_mem')

  ! Info objects, datatype names, user error strings, a graph and its neighbourhood collective.
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'augur_key', '  a value  ', ierr)
  call MPI_Info_get_nkeys(info, nkeys, ierr)
  call MPI_Info_get_nthkey(info, 0, key, ierr)
  call MPI_Info_get(info, 'augur_key', 64, val, flag, ierr)
  call MPI_Info_get_valuelen(info, 'augur_key', vlen, ok, ierr)
  call check(nkeys == 1 .and. key == 'augur_key' .and. flag .and. val == 'a value' .and. ok .and. vlen == 7, 'info')
  call MPI_Info_dup(info, info2, ierr)
  call MPI_Info_delete(info, 'augur_key', ierr)
  call MPI_Info_get(info, 'augur_key', 64, val, flag, ierr)
  call MPI_Info_get_nkeys(info2, nkeys, ierr)
  call check(.not. flag .and. nkeys == 1, 'info delete and dup')
  call MPI_Info_free(info, ierr)
  call MPI_Info_free(info2, ierr)
  call check(info == MPI_INFO_NULL, 'info free')
  call MPI_Type_contiguous(2, MPI_INTEGER, newtype, ierr)
  call MPI_Type_set_name(newtype, 'pair of ints', ierr)
  call MPI_Type_get_name(newtype, tname, slen, ierr)
  call check(tname == 'pair of ints' .and. slen == 12, 'type names')
  call MPI_Type_free(newtype, ierr)
  call MPI_Add_error_class(ecls, ierr)
  call MPI_Add_error_code(ecls, ecode, ierr)
  call MPI_Add_error_string(ecode, 'a fortran error', ierr)
  call MPI_Error_string(ecode, etext, slen, ierr)
  call check(ecls > MPI_ERR_LASTCODE .and. etext == 'a fortran error' .and. slen == 15, 'user error string')
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node, ierr)
  call MPI_Comm_size(node, nsize, ierr)
  call check(ierr == MPI_SUCCESS .and. nsize >= 1 .and. nsize <= nprocs, 'comm_split_type')
  call MPI_Comm_free(node, ierr)
  if (nprocs >= 2) then
    ! Two nodes, each the other's neighbour: the smallest graph on any job.
    gidx = (/ 1, 2 /)
    gedges = (/ 1, 0 /)
    call MPI_Graph_create(MPI_COMM_WORLD, 2, gidx, gedges, .false., gcomm, ierr)
    if (rank < 2) then
      call MPI_Graph_neighbors(gcomm, rank, 2, nbrs, ierr)
      jbuf(1) = -1
      call MPI_Neighbor_allgather(rank + 40, 1, MPI_INTEGER, jbuf, 1, MPI_INTEGER, gcomm, ierr)
      call check(nbrs(1) == 1 - rank .and. jbuf(1) == 41 - rank, 'graph neighbour_allgather')
      call MPI_Comm_free(gcomm, ierr)
    else
      call check(gcomm == MPI_COMM_NULL, 'graph_create leaves the others out')
    end if
  end if

  ! An intercommunicator of the even ranks against the odd ones, merged back with the evens first.
  if (nprocs >= 2) then
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, node, ierr)
    call MPI_Intercomm_create(node, 0, MPI_COMM_WORLD, 1 - mod(rank, 2), 7, icomm, ierr)
    call MPI_Comm_test_inter(icomm, flag, ierr)
    call MPI_Comm_remote_size(icomm, nsize, ierr)
    if (mod(rank, 2) == 0) then
      expect = nprocs / 2
    else
      expect = (nprocs + 1) / 2
    end if
    call check(ierr == MPI_SUCCESS .and. flag .and. nsize == expect, 'intercomm_create, remote_size')
    call MPI_Intercomm_merge(icomm, mod(rank, 2) == 1, merged, ierr)
    call MPI_Comm_rank(merged, mrank, ierr)
    if (mod(rank, 2) == 0) then
      expect = rank / 2
    else
      expect = (nprocs + 1) / 2 + rank / 2
    end if
    call check(ierr == MPI_SUCCESS .and. mrank == expect, 'intercomm_merge puts the low group first')
    call MPI_Comm_free(merged, ierr)
    call MPI_Comm_free(icomm, ierr)
    call MPI_Comm_free(node, ierr)
  end if

  ! A shared window over the ranks of this host: each stores into its own INTEGER, rank 0's is
  ! read through MPI_Win_shared_query.
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node, ierr)
  call MPI_Comm_rank(node, mrank, ierr)
  call MPI_Win_allocate_shared(int(4, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, node, baseptr, win, ierr)
  call c_f_pointer(transfer(baseptr, sptr), shared, (/ 1 /))
  shared(1) = 100 + mrank
  call MPI_Win_fence(0, win, ierr)
  call MPI_Win_shared_query(win, 0, asize, i, baseptr, ierr)
  call c_f_pointer(transfer(baseptr, sptr), shared, (/ 1 /))
  call check(ierr == MPI_SUCCESS .and. asize == 4 .and. i == 4 .and. shared(1) == 100, 'win_allocate_shared, win_shared_query')
  call MPI_Win_fence(0, win, ierr)
  call MPI_Win_free(win, ierr)
  call MPI_Comm_free(node, ierr)

  ! One-sided: a put to the right neighbour under fence (displacement in INTEGERs), and a
  ! fetch_and_op counter at rank 0 under a shared lock.
  wbuf = -1
  call MPI_Win_create(wbuf, int(16, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  kbuf(1) = 500 + rank
  call MPI_Put(kbuf, 1, MPI_INTEGER, mod(rank + 1, nprocs), int(2, MPI_ADDRESS_KIND), 1, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call check(ierr == MPI_SUCCESS .and. wbuf(3) == 500 + mod(rank + nprocs - 1, nprocs) .and. wbuf(1) == -1, &
             'put under fence')
  call MPI_Win_free(win, ierr)
  call check(win == MPI_WIN_NULL, 'win_free')
  cnt8 = 0
  one8 = 1
  call MPI_Win_create(cnt8, int(8, MPI_ADDRESS_KIND), 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
  do i = 1, 10
    call MPI_Fetch_and_op(one8, old8, MPI_INTEGER8, 0, int(0, MPI_ADDRESS_KIND), MPI_SUM, win, ierr)
  end do
  call MPI_Win_unlock(0, win, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win, ierr)
    call check(cnt8 == 10 * nprocs, 'fetch_and_op counter')
    call MPI_Win_unlock(0, win, ierr)
  end if
  call MPI_Win_free(win, ierr)

  ! Attributes: MPI_TAG_UB's value, an attribute MPI_COMM_DUP_FN copies, one whose Fortran delete
  ! callback counts (in a common block), and MPI-1's names with default INTEGERs.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. aval >= 32767, 'comm_get_attr(MPI_TAG_UB) is the value')
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv1, int(0, MPI_ADDRESS_KIND), ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, kv2, int(5, MPI_ADDRESS_KIND), ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, d1, ierr)
  call MPI_Comm_set_attr(d1, kv1, int(1234567890123_8, MPI_ADDRESS_KIND), ierr)
  call MPI_Comm_set_attr(d1, kv2, int(77, MPI_ADDRESS_KIND), ierr)
  call MPI_Comm_dup(d1, d2, ierr)
  call MPI_Comm_get_attr(d2, kv1, aval, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. aval == 1234567890123_8, 'MPI_COMM_DUP_FN copies the attribute')
  call MPI_Comm_get_attr(d2, kv2, aval, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 'MPI_COMM_NULL_COPY_FN does not')
  ndeleted = 0
  lastdel = 0
  call MPI_Comm_free(d1, ierr)
  call check(ierr == MPI_SUCCESS .and. ndeleted == 1 .and. lastdel == 82, 'Fortran delete callback with value and extra')
  call MPI_Comm_free(d2, ierr)
  call MPI_Comm_free_keyval(kv1, ierr)
  call MPI_Comm_free_keyval(kv2, ierr)
  call check(ierr == MPI_SUCCESS .and. kv2 == MPI_KEYVAL_INVALID .and. ndeleted == 1, 'comm_free_keyval')
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, kv3, 0, ierr)
  call MPI_Attr_put(MPI_COMM_WORLD, kv3, 42, ierr)
  call MPI_Attr_get(MPI_COMM_WORLD, kv3, ival, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. ival == 42, 'attr_put, attr_get')
  call MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, ival, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. ival >= 32767, 'attr_get(MPI_TAG_UB) is the value')
  call MPI_Attr_delete(MPI_COMM_WORLD, kv3, ierr)
  call MPI_Attr_get(MPI_COMM_WORLD, kv3, ival, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 'attr_delete')
  call MPI_Keyval_free(kv3, ierr)

  ! Distributed graphs: a ring without weights (MPI_UNWEIGHTED from its common block), then one
  ! edge per rank with a weight; neighbourhood alltoallw (MPI_Aint displacements), ineighbor_*v.
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, (/ left /), MPI_UNWEIGHTED, 1, (/ right /), &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., dg, ierr)
  call MPI_Dist_graph_neighbors_count(dg, indeg, outdeg, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. indeg == 1 .and. outdeg == 1 .and. .not. flag, 'dist_graph_create_adjacent')
  call MPI_Dist_graph_neighbors(dg, 1, nb_in, MPI_UNWEIGHTED, 1, nb_out, MPI_UNWEIGHTED, ierr)
  call check(ierr == MPI_SUCCESS .and. nb_in(1) == left .and. nb_out(1) == right, 'dist_graph_neighbors')
  sval = rank * 10 + 1
  rval = -1
  call MPI_Neighbor_alltoallw(sval, (/ 1 /), (/ int(0, MPI_ADDRESS_KIND) /), (/ MPI_INTEGER /), rval, (/ 1 /), &
                              (/ int(0, MPI_ADDRESS_KIND) /), (/ MPI_INTEGER /), dg, ierr)
  call check(ierr == MPI_SUCCESS .and. rval == left * 10 + 1, 'neighbor_alltoallw')
  rval = -1
  call MPI_Ineighbor_alltoallv(sval + 1, (/ 1 /), (/ 0 /), MPI_INTEGER, rval, (/ 1 /), (/ 0 /), MPI_INTEGER, dg, wrq, ierr)
  call MPI_Wait(wrq, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. rval == left * 10 + 2, 'ineighbor_alltoallv')
  rval = -1
  call MPI_Ineighbor_allgatherv(sval + 2, 1, MPI_INTEGER, rval, (/ 1 /), (/ 0 /), MPI_INTEGER, dg, wrq, ierr)
  call MPI_Wait(wrq, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. rval == left * 10 + 3, 'ineighbor_allgatherv')
  rval = -1
  call MPI_Ineighbor_alltoallw(sval + 3, (/ 1 /), (/ int(0, MPI_ADDRESS_KIND) /), (/ MPI_INTEGER /), rval, (/ 1 /), &
                               (/ int(0, MPI_ADDRESS_KIND) /), (/ MPI_INTEGER /), dg, wrq, ierr)
  call MPI_Wait(wrq, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. rval == left * 10 + 4, 'ineighbor_alltoallw')
  call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, (/ rank /), (/ 1 /), (/ right /), (/ rank + 1 /), MPI_INFO_NULL, &
                             .false., dg2, ierr)
  call MPI_Dist_graph_neighbors_count(dg2, indeg, outdeg, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. indeg == 1 .and. outdeg == 1 .and. flag, 'dist_graph_create, weighted')
  call MPI_Dist_graph_neighbors(dg2, 1, nb_in, nb_w, 1, nb_out, nb_w2, ierr)
  call check(ierr == MPI_SUCCESS .and. nb_in(1) == left .and. nb_w(1) == left + 1 .and. nb_out(1) == right &
             .and. nb_w2(1) == rank + 1, 'dist_graph_neighbors with weights')
  call MPI_Comm_free(dg, ierr)
  call MPI_Comm_free(dg2, ierr)

  ! Window attributes: the predefined ones as values, a keyval whose Fortran delete callback runs
  ! at delete_attr and at win_free.
  call MPI_Win_create(wbuf, int(16, MPI_ADDRESS_KIND), 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, aval, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. aval == 16, 'win_get_attr(MPI_WIN_SIZE)')
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, aval, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. aval == 4, 'win_get_attr(MPI_WIN_DISP_UNIT)')
  call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, aval, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. aval == MPI_WIN_FLAVOR_CREATE, 'win_get_attr(MPI_WIN_CREATE_FLAVOR)')
  call MPI_Win_get_attr(win, MPI_WIN_BASE, aval, flag, ierr)
  call MPI_Get_address(wbuf, waddr, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. aval == waddr, 'win_get_attr(MPI_WIN_BASE) is the address')
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, kv4, int(5, MPI_ADDRESS_KIND), ierr)
  call MPI_Win_set_attr(win, kv4, int(100, MPI_ADDRESS_KIND), ierr)
  call MPI_Win_get_attr(win, kv4, aval, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. aval == 100, 'win_set_attr, win_get_attr')
  ndeleted = 0
  call MPI_Win_delete_attr(win, kv4, ierr)
  call check(ierr == MPI_SUCCESS .and. ndeleted == 1 .and. lastdel == 105, 'win_delete_attr calls the callback')
  call MPI_Win_set_attr(win, kv4, int(7, MPI_ADDRESS_KIND), ierr)
  call MPI_Win_free(win, ierr)
  call check(ierr == MPI_SUCCESS .and. ndeleted == 2 .and. lastdel == 12, 'win_free deletes the attribute')
  call MPI_Win_free_keyval(kv4, ierr)
  call check(ierr == MPI_SUCCESS .and. kv4 == MPI_KEYVAL_INVALID, 'win_free_keyval')

  ! "external32": big-endian INTEGERs, positions in INTEGER(KIND=MPI_ADDRESS_KIND).
  call MPI_Pack_external_size('external32', 3, MPI_INTEGER, asize, ierr)
  call check(ierr == MPI_SUCCESS .and. asize == 12, 'pack_external_size')
  apos = 0
  call MPI_Pack_external('external32', (/ 1, 256, -2 /), 3, MPI_INTEGER, pbuf, int(256, MPI_ADDRESS_KIND), apos, ierr)
  call check(ierr == MPI_SUCCESS .and. apos == 12 .and. all(pbuf(1:8) == int((/ 0, 0, 0, 1, 0, 0, 1, 0 /), 1)) &
             .and. all(pbuf(9:12) == int((/ -1, -1, -1, -2 /), 1)), 'pack_external is big-endian')
  apos = 0
  kbuf = 0
  call MPI_Unpack_external(' external32 ', pbuf, int(12, MPI_ADDRESS_KIND), apos, kbuf, 3, MPI_INTEGER, ierr)
  call check(ierr == MPI_SUCCESS .and. apos == 12 .and. all(kbuf == (/ 1, 256, -2 /)), 'unpack_external')

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

! A Fortran delete callback: counts its calls and keeps value + extra state.
subroutine count_delete(comm, keyval, val, extra, ierr)
  use mpi
  implicit none
  integer :: comm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  integer :: ndeleted, lastdel
  common /augur_test_del/ ndeleted, lastdel
  ndeleted = ndeleted + 1
  lastdel = int(val + extra)
  ierr = MPI_SUCCESS
  if (comm < 0 .or. keyval < 0) ierr = MPI_ERR_OTHER
end subroutine count_delete
