#!/bin/bash
# Pinned memory per rank against its formula (docs/launch.md, "Memory per process"): runs the
# ring at each rank count with AUGUR_STATS=1 and checks every rank's augur-stats line —
#   peers_connected = the peers the rank talked to: its two neighbours (one at 2 ranks), as
#     connections are made on first use; N - 1 with AUGUR_CONNECT=all,
#   channel_bytes = peers_connected * (2 * AUGUR_SLOTS * (eager_limit + 24) + 16 + 32 * AUGUR_CREDITS),
#   pinned_peak_bytes >= channel_bytes (the channels are part of what the process pinned) —
# and prints one table row per rank count (the largest rank's figures; all ranks agree).
# Usage: memory_stats.sh AUGURRUN RING_PROGRAM N...
set -u
run=$1
prog=$2
shift 2
slots=${AUGUR_SLOTS:-64}
credits=${AUGUR_CREDITS:-16}
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "| ranks | peers connected | eager limit | per peer (bytes) | channel_bytes | pinned_peak_bytes | pinned_regions |"
echo "|---|---|---|---|---|---|---|"
for n in "$@"; do
  if ! AUGUR_STATS=1 timeout 600 "$run" -n "$n" "$prog" 10 >"$out" 2>&1; then
    echo "FAILED: $n ranks: the ring failed"; sed 's/^/  | /' "$out" | tail -n 20; fail=1; continue
  fi
  want=$((n - 1))
  [ "${AUGUR_CONNECT:-lazy}" = all ] || [ "$want" -le 2 ] || want=2
  awk -v n="$n" -v want="$want" -v slots="$slots" -v credits="$credits" '
    /^augur-stats / {
      delete s
      for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] = kv[2] }
      seen++
      per = 2 * slots * (s["eager_limit"] + 24) + 16 + 32 * credits
      if (s["peers_connected"] != want) { printf "FAILED: %d ranks: rank %s connected to %s peers, expected %d\n", n, s["rank"], s["peers_connected"], want; bad = 1 }
      if (s["channel_bytes"] != want * per) { printf "FAILED: %d ranks: rank %s channel_bytes=%s, expected %d x %d\n", n, s["rank"], s["channel_bytes"], want, per; bad = 1 }
      if (s["pinned_peak_bytes"] + 0 < s["channel_bytes"] + 0) { printf "FAILED: %d ranks: rank %s pinned_peak_bytes=%s below channel_bytes=%s\n", n, s["rank"], s["pinned_peak_bytes"], s["channel_bytes"]; bad = 1 }
      row = sprintf("| %d | %s | %s | %d | %s | %s | %s |", n, s["peers_connected"], s["eager_limit"], per, s["channel_bytes"], s["pinned_peak_bytes"], s["pinned_regions"])
    }
    END {
      if (seen != n) { printf "FAILED: %d ranks: %d augur-stats lines\n", n, seen; bad = 1 }
      if (!bad) print row
      exit bad
    }' "$out" || fail=1
done
[ "$fail" -eq 0 ] && echo "memory_stats: ok" || echo "memory_stats: FAILED"
exit "$fail"
