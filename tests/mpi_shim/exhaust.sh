#!/bin/bash
# exhaust.c with a 1 MiB registration-cache bound: the program checks the error classes and that
# the job goes on; then, with --fatal, the refused send under MPI_ERRORS_ARE_FATAL must stop the
# job with a message naming the bound and its setting.
# Usage: exhaust.sh AUGURRUN PROGRAM RANKS
set -u
run=$1 prog=$2 ranks=$3
export AUGUR_RCACHE_MAX_BYTES=1048576
timeout -k 10 600 "$run" -n "$ranks" "$prog" || { echo "exhaust.sh: FAILED: the checks (above)"; exit 1; }
out=$(mktemp)
timeout -k 10 600 "$run" -n "$ranks" "$prog" --fatal >"$out" 2>&1
rc=$?
cat "$out"
bad=0
[ $rc -ne 0 ] || { echo "exhaust.sh: FAILED: the fatal refusal did not fail the job"; bad=1; }
for want in "rank 0: MPI_Send:" "registration cache full" "AUGUR_RCACHE_MAX_BYTES=1048576" "[MPI_ERR_NO_MEM]"; do
  grep -qF -- "$want" "$out" || { echo "exhaust.sh: FAILED: no \"$want\" in the job's output"; bad=1; }
done
rm -f "$out"
[ $bad -eq 0 ] && echo "exhaust.sh: passed"
exit $bad
