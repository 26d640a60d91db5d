#!/bin/bash
# What AUGUR_CHECK_COLLECTIVES=1 costs: runs coll_time with the check off and on, alternately
# (ROUNDS times each, so machine noise hits both alike), and prints the median microseconds per
# call and the ratio on/off for each collective.
# Usage: coll_check.sh AUGURRUN COLL_TIME [RANKS] [ITERS] [ROUNDS]
set -euo pipefail
run=$1 prog=$2 n=${3:-4} iters=${4:-200} rounds=${5:-3}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  for check in 0 1; do
    line=$(AUGUR_CHECK_COLLECTIVES=$check "$run" -n "$n" "$prog" "$iters")
    echo "check=$check $line" >> "$out"
    echo "round $r/$rounds check=$check: $line" >&2
  done
done
awk -v n="$n" '
  function median(a, k,   i, j, t) { for (i = 1; i <= k; ++i) for (j = i + 1; j <= k; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((k + 1) / 2)] }
  { split($1, c, "="); for (i = 2; i < NF; i += 2) { name[i] = $i; k = ++cnt[c[2], $i]; v[c[2], $i, k] = $(i + 1) } }
  END {
    printf "%-14s %12s %12s %8s   (%d ranks, median us per call)\n", "collective", "check off", "check on", "on/off", n
    for (i = 2; i in name; i += 2) {
      m = name[i]
      for (k = 1; k <= cnt[0, m]; ++k) off[k] = v[0, m, k]
      for (k = 1; k <= cnt[1, m]; ++k) on[k] = v[1, m, k]
      moff = median(off, cnt[0, m]); mon = median(on, cnt[1, m])
      printf "%-14s %12.1f %12.1f %8.2f\n", m, moff, mon, (moff > 0 ? mon / moff : 0)
    }
  }' "$out"
