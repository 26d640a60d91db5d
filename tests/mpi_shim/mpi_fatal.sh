#!/bin/bash
# The fatal paths of augur's MPI under augurrun: an erroneous call under MPI_ERRORS_ARE_FATAL, a
# truncated receive, MPI_Abort, a rank killed by a signal, calls before MPI_Init and after
# MPI_Finalize, a rank's exit status, and Ctrl-C: every one ends the whole job (bounded in
# time) with the expected exit status and message. Usage: mpi_fatal.sh AUGURRUN FATAL_PROGRAM
set -u
run=$1
prog=$2
pass=0
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

expect() {  # name, wanted exit status ("nonzero" or a number), wanted text, command...
  local name=$1 want=$2 text=$3
  shift 3
  local t0=$SECONDS
  timeout 120 "$@" >"$out" 2>&1
  local rc=$?
  local ok=1
  if [ "$want" = nonzero ]; then [ "$rc" -ne 0 ] || ok=0; else [ "$rc" -eq "$want" ] || ok=0; fi
  [ "$rc" -eq 124 ] && ok=0
  grep -q -- "$text" "$out" || ok=0
  if [ $ok = 1 ]; then
    pass=$((pass + 1))
    echo "ok: $name (exit $rc, $((SECONDS - t0)) s)"
  else
    fail=$((fail + 1))
    echo "FAILED: $name: exit $rc (wanted $want), text '$text' expected; output:"
    sed 's/^/  | /' "$out"
  fi
}

for n in 2 3; do
  expect "invalid rank is fatal ($n ranks)" 1 "MPI_ERR_RANK" "$run" -n $n "$prog" rank
  expect "truncation is fatal ($n ranks)" 1 "MPI_ERR_TRUNCATE" "$run" -n $n "$prog" truncate
  expect "MPI_Abort ends the job with its code ($n ranks)" 3 "MPI_Abort with error code 3" "$run" -n $n "$prog" abort
  expect "a killed rank ends the job ($n ranks)" 137 "rank 1 was killed by signal 9" "$run" -n $n "$prog" crash
done
expect "call before MPI_Init" 1 "called before MPI_Init" "$run" -n 2 "$prog" before-init
expect "call after MPI_Finalize" 1 "called after MPI_Finalize" "$run" -n 2 "$prog" after-finalize
expect "a rank's exit status is the job's" 5 "rank 2 exited with status 5" "$run" -n 3 "$prog" exit-code
expect "missing program" 127 "cannot run" "$run" -n 2 /nonexistent/program
expect "mismatched collective roots are fatal (AUGUR_CHECK_COLLECTIVES=1)" 1 "MPI_ERR_ROOT" \
  env AUGUR_CHECK_COLLECTIVES=1 "$run" -n 3 "$prog" coll-root

# Ctrl-C: SIGINT to augurrun stops every rank.
"$run" -n 3 "$prog" hang >"$out" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [ "$(grep -c hanging "$out")" -ge 2 ] && break
  sleep 0.1
done
sleep 0.5
kill -INT $pid
t0=$SECONDS
wait $pid
rc=$?
if [ $rc -eq 130 ] && grep -q "received Interrupt" "$out" && ! pgrep -f "$prog hang" >/dev/null; then
  pass=$((pass + 1))
  echo "ok: SIGINT stops the job (exit $rc, $((SECONDS - t0)) s)"
else
  fail=$((fail + 1))
  echo "FAILED: SIGINT: exit $rc; output:"
  sed 's/^/  | /' "$out"
fi
echo "mpi_fatal: $pass passed, $fail failed"
[ $fail -eq 0 ]
