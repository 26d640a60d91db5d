#!/bin/bash
# CG (examples/cg.c) under augurrun with AUGUR_STATS=1, class W, 2 outer iterations: the program
# checks its true residual; here zeta must equal the value Open MPI computes on the same 2x2
# grid (the sums run in one fixed order, so a lost or misplaced byte shows), and every rank must
# have taken the eager limit its host's load calls for. With more ranks than the host has cores
# the limit is AUGUR_OVERSUB_EAGER_LIMIT (32 KiB) and CG's 28 KiB and 14 KiB messages all go
# eagerly; else it stays at 8 KiB and they go by rendezvous.
# Usage: cg.sh AUGURRUN CG RANKS
set -u
run=$1
cg=$2
n=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
AUGUR_STATS=1 timeout 600 "$run" -n "$n" "$cg" W 2 >"$out" 2>&1
rc=$?
cat "$out"
[ $rc -eq 0 ] || { echo "FAILED: cg exited with $rc"; exit 1; }
grep -q "zeta 1.6110320989477e+01, residual .* verified" "$out" || { echo "FAILED: zeta or residual wrong"; exit 1; }
cores=$(nproc)
per_host=$n  # AUGUR_HOSTS (two-host guests of equal size) spreads ranks round-robin
case "${AUGUR_HOSTS:-}" in *,*) per_host=$(( (n + 1) / 2 )) ;; esac
over=0; limit=8192
[ "$per_host" -gt "$cores" ] && { over=1; limit=32768; }
awk -v n="$n" -v over=$over -v limit=$limit '
  BEGIN { nk = split("rank eager_limit oversubscribed bounce_msgs rndv_msgs direct_msgs", keys, " ") }
  /^augur-stats / {
    delete s
    for (i = 2; i <= NF; ++i) { split($i, kv, "="); s[kv[1]] = kv[2] }
    for (k = 1; k <= nk; ++k) if (!(keys[k] in s)) { printf "FAILED: no %s in: %s\n", keys[k], $0; bad = 1; next }
    r = s["rank"]; seen[r] = 1
    if (s["oversubscribed"] != over || s["eager_limit"] != limit) {
      printf "FAILED: rank %d: oversubscribed=%s eager_limit=%s, expected %d and %d\n", r, s["oversubscribed"], s["eager_limit"], over, limit; bad = 1
    }
    # Large ones: rendezvous unless the limit covers them (steering may place some directly).
    if (over && s["rndv_msgs"] != 0) { printf "FAILED: rank %d sent %d by rendezvous under a 32 KiB limit\n", r, s["rndv_msgs"]; bad = 1 }
    if (!over && s["rndv_msgs"] == 0) { printf "FAILED: rank %d: no rendezvous under an 8 KiB limit\n", r; bad = 1 }
    printf "rank %d: eager limit %d, %d bounce, %d rendezvous, %d direct\n", r, s["eager_limit"], s["bounce_msgs"], s["rndv_msgs"], s["direct_msgs"]
  }
  END {
    for (r = 0; r < n; ++r) if (!(r in seen)) { printf "FAILED: no augur-stats line from rank %d\n", r; bad = 1 }
    exit bad
  }' "$out" || exit 1
echo "cg: $n ranks, $per_host per host of $cores cores, eager limit $limit, verified"
