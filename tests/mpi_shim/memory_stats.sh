#!/bin/bash
# Pinned memory per rank against its formula (docs/launch.md, "Memory per process"): runs the
# ring at each rank count with AUGUR_STATS=1 and checks every rank's augur-stats line —
#   peers_connected = the peers the rank talked to: its two neighbours (one at 2 ranks), as
#     connections are made on first use; N - 1 with AUGUR_CONNECT=all,
#   channel_bytes = peers_connected * (AUGUR_SLOTS * (eager_limit + 24) + 16 + 32 * AUGUR_CREDITS)
#     (each connection's send slots, grant words and credit table),
#   srq_slots = AUGUR_SRQ_SLOTS * max(1, ceil(peers * AUGUR_SRQ_PEER_SLOTS / AUGUR_SRQ_SLOTS)) (the
#     shared receive pool: one chunk until the peers' first windows need more; the ring's peers
#     are admitted before windows grow, so the count is exact) and srq_bytes = srq_slots * (eager_limit + 24),
#   pinned_peak_bytes >= channel_bytes + srq_bytes (both are part of what the process pinned) —
# and prints one table row per rank count (the largest rank's figures; all ranks agree).
# Usage: memory_stats.sh AUGURRUN RING_PROGRAM N...
set -u
run=$1
prog=$2
shift 2
slots=${AUGUR_SLOTS:-64}
credits=${AUGUR_CREDITS:-16}
srq=${AUGUR_SRQ_SLOTS:-128}
peer_window=${AUGUR_SRQ_PEER_SLOTS:-16}
[ "$peer_window" -le "$slots" ] || peer_window=$slots
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "| ranks | peers connected | eager limit | per peer (bytes) | channel_bytes | srq_slots | srq_bytes | pinned_peak_bytes | pinned_regions |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in "$@"; do
  if ! AUGUR_STATS=1 timeout 600 "$run" -n "$n" "$prog" 10 >"$out" 2>&1; then
    echo "FAILED: $n ranks: the ring failed"; sed 's/^/  | /' "$out" | tail -n 20; fail=1; continue
  fi
  want=$((n - 1))
  [ "${AUGUR_CONNECT:-lazy}" = all ] || [ "$want" -le 2 ] || want=2
  awk -v n="$n" -v want="$want" -v slots="$slots" -v credits="$credits" -v srq="$srq" -v pw="$peer_window" '
    /^augur-stats / {
      delete s
      for (i = 2; i <= NF; i++) { split($i, kv, "="); s[kv[1]] = kv[2] }
      seen++
      per = slots * (s["eager_limit"] + 24) + 16 + 32 * credits
      chunks = int((want * pw + srq - 1) / srq); if (chunks < 1) chunks = 1
      pool = srq * chunks
      if (s["peers_connected"] != want) { printf "FAILED: %d ranks: rank %s connected to %s peers, expected %d\n", n, s["rank"], s["peers_connected"], want; bad = 1 }
      if (s["channel_bytes"] != want * per) { printf "FAILED: %d ranks: rank %s channel_bytes=%s, expected %d x %d\n", n, s["rank"], s["channel_bytes"], want, per; bad = 1 }
      if (s["srq_slots"] != pool) { printf "FAILED: %d ranks: rank %s srq_slots=%s, expected %d\n", n, s["rank"], s["srq_slots"], pool; bad = 1 }
      if (s["srq_bytes"] != pool * (s["eager_limit"] + 24)) { printf "FAILED: %d ranks: rank %s srq_bytes=%s, expected %d x %d\n", n, s["rank"], s["srq_bytes"], pool, s["eager_limit"] + 24; bad = 1 }
      if (s["pinned_peak_bytes"] + 0 < s["channel_bytes"] + s["srq_bytes"]) { printf "FAILED: %d ranks: rank %s pinned_peak_bytes=%s below channel_bytes + srq_bytes\n", n, s["rank"], s["pinned_peak_bytes"]; bad = 1 }
      row = sprintf("| %d | %s | %s | %d | %s | %s | %s | %s | %s |", n, s["peers_connected"], s["eager_limit"], per, s["channel_bytes"], s["srq_slots"], s["srq_bytes"], s["pinned_peak_bytes"], s["pinned_regions"])
    }
    END {
      if (seen != n) { printf "FAILED: %d ranks: %d augur-stats lines\n", n, seen; bad = 1 }
      if (!bad) print row
      exit bad
    }' "$out" || fail=1
done
[ "$fail" -eq 0 ] && echo "memory_stats: ok" || echo "memory_stats: FAILED"
exit "$fail"
