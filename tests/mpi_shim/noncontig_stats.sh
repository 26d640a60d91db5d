#!/bin/bash
# mpi_test_noncontig under augurrun with AUGUR_STATS=1, with the default AUGUR_SGE_MAX_RUNS (16),
# with 64 and with 0 (always pack): the program checks its data; here each rank's sge_sends and
# sge_recvs must equal what the program expects for that setting (non-zero by default, zero when
# packing), so the path each message took is checked, not only its bytes.
# Usage: noncontig_stats.sh AUGURRUN PROGRAM
set -u
run=$1
prog=$2
for limit in default 64 0; do
  out=$(mktemp)
  if [ $limit = default ]; then
    (unset AUGUR_SGE_MAX_RUNS; AUGUR_STATS=1 timeout 600 "$run" -n 2 "$prog") >"$out" 2>&1
  else
    AUGUR_STATS=1 AUGUR_SGE_MAX_RUNS=$limit timeout 600 "$run" -n 2 "$prog" >"$out" 2>&1
  fi
  rc=$?
  cat "$out"
  [ $rc -eq 0 ] || { echo "FAILED: noncontig (AUGUR_SGE_MAX_RUNS=$limit) exited with $rc"; rm -f "$out"; exit 1; }
  awk -v limit=$([ $limit = default ] && echo 16 || echo $limit) '
    # A key missing from a line fails (awk would read it as "", equal to another missing one).
    function kvs(arr,   i, kv, k, need) {
      delete arr; for (i = 2; i <= NF; ++i) { split($i, kv, "="); arr[kv[1]] = kv[2] }
      split("rank sge_sends sge_recvs", need, " ")
      for (k = 1; k <= 3; ++k) if (!(need[k] in arr)) { printf "FAILED: no %s in: %s\n", need[k], $0; bad = 1 }
    }
    /^noncontig-expect / { kvs(e); want_s[e["rank"]] = e["sge_sends"]; want_r[e["rank"]] = e["sge_recvs"] }
    /^augur-stats / { kvs(s); got_s[s["rank"]] = s["sge_sends"]; got_r[s["rank"]] = s["sge_recvs"] }
    END {
      for (r = 0; r < 2; ++r) {
        if (!(r in want_s) || !(r in got_s)) { printf "FAILED: rank %d: missing expect or augur-stats line\n", r; bad = 1; continue }
        if (got_s[r] != want_s[r] || got_r[r] != want_r[r]) {
          printf "FAILED: limit %d rank %d: sge_sends=%s sge_recvs=%s, want %s %s\n", limit, r, got_s[r], got_r[r], want_s[r], want_r[r]; bad = 1
        }
        if (limit > 0 && want_s[r] == 0) { printf "FAILED: the default limit expects no gather list\n"; bad = 1 }
        if (limit == 0 && want_s[r] != 0) { printf "FAILED: limit 0 expects gather lists\n"; bad = 1 }
      }
      exit bad
    }' "$out" || { rm -f "$out"; exit 1; }
  rm -f "$out"
  echo "noncontig_stats: AUGUR_SGE_MAX_RUNS=$limit: counters match"
done
