#!/bin/bash
# PES (2-D Poisson halo exchange) under augurrun with AUGUR_STATS=1: the program checks its own
# result; here every rank must report its augur-stats line, have messages placed directly into
# user buffers (direct_msgs > 0) with predictor hits, and its path counters must add up to the
# messages it received. Across two hosts this shows RDMA writes landing in the other host's buffers.
# Usage: steering_stats.sh AUGURRUN PES RANKS
set -u
run=$1
pes=$2
n=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# PES's rows are 64 doubles, 512 bytes: under the default AUGUR_DIRECT_MIN (1024), so lowered.
AUGUR_STATS=1 AUGUR_STEERING=predicted AUGUR_DIRECT_MIN=512 timeout 600 "$run" -n "$n" "$pes" 100 >"$out" 2>&1
rc=$?
cat "$out"
[ $rc -eq 0 ] || { echo "FAILED: PES exited with $rc"; exit 1; }
want_hosts=1
case "${AUGUR_HOSTS:-}" in *,*) want_hosts=2 ;; esac
# Every key read must be on the line: awk reads a missing one as "", which passes "==" checks.
awk -v n="$n" -v want_hosts=$want_hosts '
  BEGIN { nk = split("rank host direct_msgs bounce_msgs rndv_msgs pred_hits credits_used credits_revoked credits_issued", keys, " ") }
  /^augur-stats / {
    delete s
    for (i = 2; i <= NF; ++i) { split($i, kv, "="); s[kv[1]] = kv[2] }
    missing = 0
    for (k = 1; k <= nk; ++k) if (!(keys[k] in s)) { printf "FAILED: no %s in: %s\n", keys[k], $0; missing = bad = 1 }
    if (missing) next
    r = s["rank"]; seen[r] = 1
    if (s["direct_msgs"] <= 0) { printf "FAILED: rank %d placed no message directly\n", r; bad = 1 }
    if (s["pred_hits"] <= 0) { printf "FAILED: rank %d had no predictor hit\n", r; bad = 1 }
    if (s["credits_used"] != s["direct_msgs"]) { printf "FAILED: rank %d: credits_used %d != direct_msgs %d\n", r, s["credits_used"], s["direct_msgs"]; bad = 1 }
    if (s["credits_used"] + s["credits_revoked"] > s["credits_issued"]) { printf "FAILED: rank %d: more credits used+revoked than issued\n", r; bad = 1 }
    total = s["direct_msgs"] + s["bounce_msgs"] + s["rndv_msgs"]
    printf "rank %d on %s: %d of %d messages placed directly, predictor hits %d\n", r, s["host"], s["direct_msgs"], total, s["pred_hits"]
    hosts[s["host"]] = 1
  }
  END {
    for (r = 0; r < n; ++r) if (!(r in seen)) { printf "FAILED: no augur-stats line from rank %d\n", r; bad = 1 }
    nh = 0; for (h in hosts) ++nh
    if (want_hosts > nh) { printf "FAILED: ranks ran on %d host(s), expected %d\n", nh, want_hosts; bad = 1 }
    exit bad
  }' "$out" || exit 1
echo "steering_stats: $n ranks, every one placed messages directly"
