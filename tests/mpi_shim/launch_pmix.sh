#!/bin/bash
# augur programs started by another launcher's PMIx server, with no augur daemon or augurrun:
# Open MPI's mpirun (KIND=mpirun) or Slurm's srun --mpi=pmix (KIND=srun, slurmd and slurmctld
# already running: scripts/slurm-guest). Each case is bounded in time and checked by its output:
#   the p2p and collective suites and the four seed examples at 4 ranks (each suite prints the job
#   size it saw, each example checks its own result), augur-stats lines from every rank, each
#   counting the ranks on its node as the launcher placed them (local_ranks);
#   MPI_Abort on one rank ends the job with its message and a non-zero status;
#   a rank SIGKILLed ends the job (non-zero), no process of it left behind;
#   AUGUR_PMIX=on without a PMIx server is a clear error, not a job of one.
# --quick (what CI runs): the p2p suite and the ring only of the programs, and every failure case.
# --nodes 2: spread the ranks over the two guests of scripts/softroce --vms 2 (srun -N 2 with
# scripts/slurm-guest --shared; mpirun --host with two slots on each, its daemon started on the
# second guest by ssh, scripts/ssh-guest --client); the augur-stats lines must then name augur-h2 too.
# Usage: launch_pmix.sh [--quick] [--nodes N] KIND BIN_DIR
set -u
quick=0 nodes=1
while [ $# -gt 2 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --nodes) nodes=$2; shift 2 ;;
    *) break ;;
  esac
done
kind=$1
bin=$2
pass=0
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

launch() {  # launch NP PROGRAM ARGS...
  local np=$1
  shift
  case $kind in
    mpirun)
      local hosts=()
      [ "$nodes" -gt 1 ] && hosts=(--host "${AUGUR_SOFTROCE_ADDR_H1:-198.51.100.1}:2,${AUGUR_SSH_PEER:-198.51.100.2}:2"
                                 --mca oob_tcp_if_include 198.51.100.0/24)
      mpirun.openmpi --allow-run-as-root --oversubscribe -n "$np" "${hosts[@]}" -x AUGUR_STATS "$@" ;;
    srun) srun --mpi=pmix -N "$nodes" -n "$np" --overcommit "$@" ;;
    *) echo "launch_pmix.sh: unknown launcher '$kind'" >&2; exit 2 ;;
  esac
}

export kind bin nodes
export -f launch

leftovers() {  # processes of the programs still alive after their job ended
  sleep 1
  pgrep -f "^$bin/" >/dev/null && { pgrep -af "^$bin/"; return 0; }
  return 1
}

# name, wanted exit status ("nonzero" or a number), texts that must appear..., --, command...
expect() {
  local name=$1 want=$2
  shift 2
  local texts=()
  while [ "$1" != -- ]; do texts+=("$1"); shift; done
  shift
  local t0=$SECONDS ok=1
  timeout 300 bash -c '"$@"' launch_pmix "$@" >"$out" 2>&1
  local rc=$?
  [ "$rc" -eq 124 ] && ok=0  # a hang
  if [ "$want" = nonzero ]; then [ "$rc" -ne 0 ] || ok=0; else [ "$rc" -eq "$want" ] || ok=0; fi
  for t in "${texts[@]}"; do grep -qE -- "$t" "$out" || { echo "  missing: $t"; ok=0; }; done
  leftovers && { echo "  processes left behind"; ok=0; }
  if [ $ok = 1 ]; then
    pass=$((pass + 1))
    echo "ok: $kind: $name (exit $rc, $((SECONDS - t0)) s)"
  else
    fail=$((fail + 1))
    echo "FAILED: $kind: $name: exit $rc; output:"
    tail -n 40 "$out" | sed 's/^/  | /'
  fi
}

export AUGUR_STATS=1

expect "p2p suite, 4 ranks" 0 "p2p \(4 ranks\): [0-9]+ passed, 0 failed" "augur-stats rank=3 " -- launch 4 "$bin/mpi_test_p2p"
apps="ring pes nbody m3"
if [ $quick = 1 ]; then
  apps=ring
else
  expect "collective suite, 4 ranks" 0 "coll \(4 ranks\): [0-9]+ passed, 0 failed" "augur-stats rank=3 " -- launch 4 "$bin/mpi_test_coll"
fi
spread=()
[ "$nodes" -gt 1 ] && spread=("host=augur-h1" "host=augur-h2")  # the ranks really are on both hosts
# Every rank counts the ranks the launcher put on its node (PMIX_HOSTNAME, PMIX_LOCAL_SIZE).
per_node=$((4 / nodes))
ranks=()
for r in 0 1 2 3; do ranks+=("augur-stats rank=$r .* local_ranks=$per_node "); done
for app in $apps; do
  expect "example $app, 4 ranks" 0 "${ranks[@]}" "${spread[@]}" -- launch 4 "$bin/augur-mpi-$app" 20
done
unset AUGUR_STATS
expect "MPI_Abort on rank 1 of 3" nonzero "rank 1 called MPI_Abort with error code 3" -- launch 3 "$bin/mpi_test_fatal" abort
expect "rank 1 of 3 killed" nonzero "signal 9|Killed" -- launch 3 "$bin/mpi_test_fatal" crash
if [ "$kind" = srun ]; then
  # A batch job whose script starts its step with srun, as cluster users submit work.
  job=$(mktemp /tmp/augur-job.XXXXXX)
  joblog=$job.out
  printf '#!/bin/sh\nsrun --mpi=pmix %s\n' "$bin/mpi_test_coll" > "$job"
  batch() { sbatch --wait -N "$nodes" -n 4 --overcommit -o "$joblog" "$job" && cat "$joblog"; }
  export job joblog
  export -f batch
  expect "sbatch of a job script that runs the collective suite by srun, 4 ranks" 0 \
    "Submitted batch job" "coll \(4 ranks\): [0-9]+ passed, 0 failed" -- batch
  rm -f "$job" "$joblog"
fi
# Not under a launcher: AUGUR_PMIX=on must refuse, naming PMIx.
expect "AUGUR_PMIX=on without a PMIx server" nonzero "PMIx_Init" -- \
  env -u PMIX_NAMESPACE -u PMIX_RANK -u PMIX_SERVER_URI4 -u PMIX_SERVER_URI41 -u PMIX_SERVER_URI3 -u PMIX_SERVER_URI2 \
      -u PMIX_SERVER_URI21 AUGUR_PMIX=on "$bin/mpi_test_p2p"
echo "launch_pmix ($kind): $pass passed, $fail failed"
[ "$fail" -eq 0 ]
