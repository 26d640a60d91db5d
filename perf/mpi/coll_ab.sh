#!/bin/bash
# Runs a timing program (one line of "name value" pairs, e.g. augur-perf-coll-time) under two
# settings, alternately (ROUNDS times each, so machine noise hits both alike), and prints the
# median of each figure under A and B and the ratio B/A.
# A and B are each a space-separated list of VAR=value settings ("" for none), e.g.
#   coll_ab.sh augurrun augur-perf-coll-time 4 200 3 AUGUR_CHECK_COLLECTIVES=0 AUGUR_CHECK_COLLECTIVES=1
#   coll_ab.sh augurrun augur-perf-coll-time 2 2000 5 "" LD_LIBRARY_PATH=/path/to/older/lib
# Extra arguments after B go to the program after ITERS.
# Usage: coll_ab.sh AUGURRUN PROGRAM RANKS ITERS ROUNDS A B [PROGRAM-ARGS...]
set -euo pipefail
run=$1 prog=$2 n=$3 iters=$4 rounds=$5 a=$6 b=$7
shift 7
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  for side in A B; do
    settings=$a
    [ "$side" = B ] && settings=$b
    # shellcheck disable=SC2086  # the settings are words
    line=$(env $settings "$run" -n "$n" "$prog" "$iters" "$@")
    echo "$side $line" >> "$out"
    echo "round $r/$rounds $side ($settings): $line" >&2
  done
done
awk -v n="$n" -v a="$a" -v b="$b" '
  function median(x, k,   i, j, t) { for (i = 1; i <= k; ++i) for (j = i + 1; j <= k; ++j) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t } return x[int((k + 1) / 2)] }
  { for (i = 2; i < NF; i += 2) { name[i] = $i; k = ++cnt[$1, $i]; v[$1, $i, k] = $(i + 1) } }
  END {
    printf "A: %s\nB: %s\n", (a == "" ? "(nothing set)" : a), (b == "" ? "(nothing set)" : b)
    printf "%-14s %12s %12s %8s   (%d ranks, median per call)\n", "figure", "A", "B", "B/A", n
    for (i = 2; i in name; i += 2) {
      m = name[i]
      for (k = 1; k <= cnt["A", m]; ++k) xa[k] = v["A", m, k]
      for (k = 1; k <= cnt["B", m]; ++k) xb[k] = v["B", m, k]
      ma = median(xa, cnt["A", m]); mb = median(xb, cnt["B", m])
      printf "%-14s %12.1f %12.1f %8.2f\n", m, ma, mb, (ma > 0 ? mb / ma : 0)
    }
  }' "$out"
