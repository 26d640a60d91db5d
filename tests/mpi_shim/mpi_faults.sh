#!/bin/bash
# Faults real jobs meet, under augurrun on the soft-RoCE device, each bounded in time:
#   a job that computes far longer than AUGUR_BOOTSTRAP_TIMEOUT between MPI calls (must pass);
#   a rank that never reaches MPI_Init's fence (must be named);
#   a rank SIGKILLed mid eager flood, mid rendezvous READ, inside a collective: with
#   --continue-on-failure the survivors report MPI_ERR_PROC_FAILED (time printed, bound checked),
#   without it the job stops; either way augurrun exits 137 naming the rank;
#   augurrun itself SIGKILLed (its ranks must not outlive it) and SIGTERMed (clean stop).
# After every case no process of the job may be left. Prints one row per case for the fault
# table in docs/faults.md. Usage: mpi_faults.sh AUGURRUN FAULTS_PROGRAM
set -u
run=$1
prog=$2
bound_ms=${AUGUR_FAULT_BOUND_MS:-30000}  # detection bound: keepalive (1 s) + emulation slack
pass=0
fail=0
out=$(mktemp)
trap 'rm -f "$out"; pkill -9 -f "^$prog( |\$)" 2>/dev/null' EXIT

leftovers() {  # processes of the job still alive after it ended
  sleep 0.5
  pgrep -f "^$prog( |\$)" >/dev/null && { echo "left behind:"; pgrep -af "^$prog( |\$)"; return 0; }
  return 1
}

result() {  # name, ok (1/0), exit status, seconds
  if [ "$2" = 1 ]; then
    pass=$((pass + 1))
    echo "ok: $1 (exit $3, $4 s)"
  else
    fail=$((fail + 1))
    echo "FAILED: $1: exit $3; output:"
    sed 's/^/  | /' "$out"
  fi
}

# name, wanted exit status (or "nonzero"), survivors that must report (a count, or "any"), texts..., --, command...
expect() {
  local name=$1 want=$2 reporters=$3
  shift 3
  local texts=()
  while [ "$1" != -- ]; do texts+=("$1"); shift; done
  shift
  local t0=$SECONDS
  timeout 300 "$@" >"$out" 2>&1
  local rc=$? ok=1
  if [ "$want" = nonzero ]; then [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || ok=0; else [ "$rc" -eq "$want" ] || ok=0; fi
  for t in "${texts[@]}"; do grep -q -- "$t" "$out" || ok=0; done
  local got
  got=$(grep -c "detected: MPI_ERR_PROC_FAILED" "$out")
  [ "$reporters" = any ] || [ "$got" -eq "$reporters" ] || ok=0
  # Every survivor's report must come within the bound.
  local worst
  worst=$(sed -n 's/.*detected: MPI_ERR_PROC_FAILED (class [0-9]*) after \([0-9]*\) ms/\1/p' "$out" | sort -n | tail -n1)
  [ -n "$worst" ] && [ "$worst" -gt "$bound_ms" ] && ok=0
  leftovers && ok=0
  result "$name" $ok $rc $((SECONDS - t0))
  echo "row: | $name | ${got} survivor(s) reported MPI_ERR_PROC_FAILED | ${worst:--} ms | exit $rc | $(leftovers >/dev/null && echo processes || echo nothing) |"
}

export AUGUR_KEEPALIVE_MS=${AUGUR_KEEPALIVE_MS:-1000}
# The timeout leaves room for sanitizer builds to start under emulation; the job computes 3x it.
expect "job computing 45 s with AUGUR_BOOTSTRAP_TIMEOUT=15" 0 0 "computed 45 s between MPI calls" -- \
  env AUGUR_BOOTSTRAP_TIMEOUT=15 "$run" -n 2 "$prog" compute 45
expect "rank 1 never reaches MPI_Init (AUGUR_BOOTSTRAP_TIMEOUT=15)" nonzero 0 "ranks \(0,\)\?1 did not connect within 15000 ms" -- \
  env AUGUR_BOOTSTRAP_TIMEOUT=15 "$run" -n 2 "$prog" late-init 120
for cont in --continue-on-failure ""; do
  n0=1 n2=2
  [ -z "$cont" ] && n0=any n2=any  # the launcher stops the survivors, who may or may not have looked
  expect "SIGKILL mid eager flood ${cont:-(job stopped)}" 137 $n0 "rank 1 was killed by signal 9" -- \
    "$run" -n 2 $cont "$prog" flood
  expect "SIGKILL mid rendezvous READ ${cont:-(job stopped)}" 137 $n0 "rank 1 was killed by signal 9" -- \
    "$run" -n 2 $cont "$prog" rendezvous
  expect "SIGKILL inside allreduce, 3 ranks ${cont:-(job stopped)}" 137 $n2 "rank 2 was killed by signal 9" -- \
    "$run" -n 3 $cont "$prog" collective
done

# The launcher killed: PR_SET_PDEATHSIG takes its ranks with it. Then SIGTERM: a clean stop.
for sig in KILL TERM; do
  "$run" -n 2 "$prog" hang >"$out" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    [ "$(grep -c hanging "$out")" -ge 2 ] && break
    sleep 0.1
  done
  t0=$SECONDS
  kill -$sig $pid
  wait $pid
  rc=$?
  ok=1
  want=$((128 + $(kill -l $sig)))
  [ $rc -eq $want ] || ok=0
  [ $sig = TERM ] && { grep -q "received Terminated" "$out" || ok=0; }
  leftovers && ok=0
  result "augurrun SIG$sig while ranks compute" $ok $rc $((SECONDS - t0))
  echo "row: | augurrun SIG$sig while ranks compute | ranks stopped | - | exit $rc | $(leftovers >/dev/null && echo processes || echo nothing) |"
done
echo "mpi_faults: $pass passed, $fail failed"
[ $fail -eq 0 ]
