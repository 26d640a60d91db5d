#!/usr/bin/env bash
# `use mpi` declares explicit interfaces: correct calls compile (choice buffers of any type, kind
# and rank: scalars, arrays, sections, expressions; LOGICAL flags; address-sized integers;
# MPI_STATUS(ES)_IGNORE; CHARACTER arguments; procedures), and wrong ones are compile errors
# that name the argument. Usage: fortran_interfaces.sh FC MODULE_DIR
set -euo pipefail
fc=$1 fmod=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

cat > "$dir/good.f90" <<'EOF'
subroutine my_sum(invec, inoutvec, len, datatype)
  integer :: len, datatype
  double precision :: invec(len), inoutvec(len)
  inoutvec = inoutvec + invec
end subroutine my_sum

program good
  use mpi
  implicit none
  external :: my_sum
  integer :: ierr, rank, req(2), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2), x(4), keyval, op, info, vlen
  logical :: flag
  double precision :: y(3, 3), t
  real :: r
  complex :: z
  character(len=MPI_MAX_INFO_VAL) :: val
  integer(kind=MPI_ADDRESS_KIND) :: lb, ext, attr, addr
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_send(x, 4, MPI_INTEGER, rank, 1, MPI_COMM_WORLD, ierr)              ! array
  call mpi_send(y(2, :), 3, MPI_DOUBLE_PRECISION, rank, 1, MPI_COMM_WORLD, ierr) ! section
  call mpi_send(r, 1, MPI_REAL, rank, 1, MPI_COMM_WORLD, ierr)                 ! scalar
  call mpi_send(2.0d0 * y(1, 1), 1, MPI_DOUBLE_PRECISION, rank, 1, MPI_COMM_WORLD, ierr)
  call mpi_irecv(z, 1, MPI_COMPLEX, rank, 1, MPI_COMM_WORLD, req(1), ierr)
  call mpi_irecv(y, 9, MPI_DOUBLE_PRECISION, rank, 1, MPI_COMM_WORLD, req(2), ierr)
  call mpi_waitall(2, req, sts, ierr)
  call mpi_waitall(2, req, MPI_STATUSES_IGNORE, ierr)
  call mpi_recv(x, 4, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
  call mpi_test(req(1), flag, MPI_STATUS_IGNORE, ierr)
  call mpi_allreduce(MPI_IN_PLACE, y, 9, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call mpi_type_get_extent(MPI_INTEGER, lb, ext, ierr)
  call mpi_get_address(y(2, 2), addr, ierr)
  call mpi_info_create(info, ierr)
  call mpi_info_set(info, 'key', 'value', ierr)
  call mpi_info_get(info, 'key', MPI_MAX_INFO_VAL, val, flag, ierr)
  call mpi_info_get_valuelen(info, 'key', vlen, flag, ierr)
  call mpi_comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, attr, ierr)
  call mpi_comm_set_attr(MPI_COMM_WORLD, keyval, attr, ierr)
  call mpi_op_create(my_sum, .true., op, ierr)
  t = mpi_wtime() + mpi_wtick()
  call mpi_finalize(ierr)
end program good
EOF
if ! out=$("$fc" -c -I"$fmod" -o "$dir/good.o" "$dir/good.f90" 2>&1); then
  echo "FAIL: correct calls do not compile against use mpi:"
  echo "$out"
  fail=1
else
  echo "ok: correct calls compile"
fi

# name|declarations|call|what the compiler must say
cases=(
  "no ierror|integer :: x(4)|call mpi_send(x, 4, MPI_INTEGER, 0, 1, MPI_COMM_WORLD)|Missing actual argument for argument .ierror."
  "INTEGER flag|integer :: req, flag, ierr|call mpi_test(req, flag, MPI_STATUS_IGNORE, ierr)|passed INTEGER\(4\) to LOGICAL\(4\)"
  "default INTEGER for an address|integer :: lb, ext, ierr|call mpi_type_get_extent(MPI_INTEGER, lb, ext, ierr)|passed INTEGER\(4\) to INTEGER\(8\)"
  "scalar status|integer :: x, st, ierr|call mpi_recv(x, 1, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, st, ierr)|Rank mismatch in argument .status."
  "extra argument|integer :: ierr|call mpi_barrier(MPI_COMM_WORLD, 0, ierr)|More actual than formal arguments"
  "REAL count|real :: n; integer :: x(4), ierr|call mpi_send(x, n, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, ierr)|passed REAL\(4\) to INTEGER\(4\)"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name decl call want <<< "$c"
  printf 'program bad\n  use mpi\n  implicit none\n  %s\n  %s\nend program bad\n' "$decl" "$call" > "$dir/bad.f90"
  if out=$("$fc" -c -I"$fmod" -o "$dir/bad.o" "$dir/bad.f90" 2>&1); then
    echo "FAIL: $name: compiled"
    fail=1
  elif ! grep -Eq "$want" <<< "$out"; then
    echo "FAIL: $name: not the expected error ($want):"
    echo "$out"
    fail=1
  else
    echo "ok: $name: $(grep -Eo "$want" <<< "$out" | head -n1)"
  fi
done
exit $fail
