#!/bin/bash
# Runs the soak workload (soak.c) under augurrun with AUGUR_STATS=1 and checks what the program
# cannot see itself, from each rank's augur-stats line: both registration caches stayed within
# AUGUR_RCACHE_MAX_BYTES and AUGUR_RCACHE_MAX_ENTRIES (peaks), no registration was refused, no
# message was truncated, and the engines received at least the messages the program counted.
# The program checks the data, the message totals and the RSS. Results in OUTDIR: result.txt
# (totals, RSS per rank, the caches' peaks), rss.dat (RSS over time), stdout.txt, stderr.txt.
# Usage: soak.sh AUGURRUN PROGRAM SECONDS RANKS OUTDIR [PROGRAM OPTIONS...]
set -u
[ $# -ge 5 ] || { echo "usage: soak.sh AUGURRUN PROGRAM SECONDS RANKS OUTDIR [OPTIONS...]" >&2; exit 2; }
run=$1 prog=$2 secs=$3 ranks=$4 out=$5
shift 5
# Bounds small enough that the caches evict during the run (the job pins at most ~20 MiB at
# once: 4 x ranks rendezvous sends of up to 1 MiB and the halos), unless the caller sets them.
export AUGUR_RCACHE_MAX_BYTES=${AUGUR_RCACHE_MAX_BYTES:-67108864}
export AUGUR_RCACHE_MAX_ENTRIES=${AUGUR_RCACHE_MAX_ENTRIES:-128}
export AUGUR_STATS=1
mkdir -p "$out" || exit 2
rm -f "$out/result.txt" "$out/rss.dat"
: >"$out/stdout.txt"  # so that tail below shows nothing of an earlier run
echo "soak.sh: $run -n $ranks $prog --seconds $secs (AUGUR_RCACHE_MAX_BYTES=$AUGUR_RCACHE_MAX_BYTES AUGUR_RCACHE_MAX_ENTRIES=$AUGUR_RCACHE_MAX_ENTRIES)"
timeout -k 10 $((secs * 2 + 300)) "$run" -n "$ranks" "$prog" --seconds "$secs" --out "$out/result.txt" \
  --rss-log "$out/rss.dat" "$@" >"$out/stdout.txt" 2>"$out/stderr.txt" &
job=$!
tail -f --pid=$job "$out/stdout.txt" 2>/dev/null &  # progress as it comes
wait $job
rc=$?
sleep 1
grep -v '^augur: rank .*assist thread' "$out/stderr.txt" | grep -v '^augur-stats ' | head -40 >&2
grep '^augur-stats ' "$out/stderr.txt"
[ $rc -eq 0 ] || { echo "soak.sh: FAILED: the job exited with $rc"; exit 1; }
[ -s "$out/result.txt" ] || { echo "soak.sh: FAILED: no $out/result.txt"; exit 1; }
received=$(sed -n 's/^messages_received=//p' "$out/result.txt")
awk -v ranks="$ranks" -v max_bytes="$AUGUR_RCACHE_MAX_BYTES" -v max_entries="$AUGUR_RCACHE_MAX_ENTRIES" \
    -v received="${received:-missing}" -v result="$out/result.txt" '
  /^augur-stats / {
    delete s
    for (i = 2; i <= NF; ++i) { split($i, kv, "="); s[kv[1]] = kv[2] }
    # A key missing from a line fails (awk would read it as 0).
    split("rank direct_msgs bounce_msgs rndv_msgs self_msgs truncated rcache_refused rcache_evictions rcache_peak_bytes rcache_peak_entries", need, " ")
    for (k in need) if (!(need[k] in s)) { printf "soak.sh: FAILED: no %s in: %s\n", need[k], $0; bad = 1 }
    r = s["rank"]
    if (r in seen) { printf "soak.sh: FAILED: two augur-stats lines for rank %s\n", r; bad = 1 }
    seen[r] = 1; ++lines
    engine_msgs += s["direct_msgs"] + s["bounce_msgs"] + s["rndv_msgs"] + s["self_msgs"]
    evictions += s["rcache_evictions"]
    if (s["rcache_peak_bytes"] + 0 > max_bytes + 0 || s["rcache_peak_entries"] + 0 > max_entries + 0) {
      printf "soak.sh: FAILED: rank %s: registration cache peaks %s bytes / %s regions pass the bounds %s / %s\n",
             r, s["rcache_peak_bytes"], s["rcache_peak_entries"], max_bytes, max_entries; bad = 1
    }
    if (s["rcache_refused"] != 0) { printf "soak.sh: FAILED: rank %s: %s registrations refused\n", r, s["rcache_refused"]; bad = 1 }
    if (s["truncated"] != 0) { printf "soak.sh: FAILED: rank %s: %s messages truncated\n", r, s["truncated"]; bad = 1 }
    peaks = peaks sprintf("rank%s_rcache peak_bytes=%s peak_entries=%s evictions=%s refused=%s\n", r,
                          s["rcache_peak_bytes"], s["rcache_peak_entries"], s["rcache_evictions"], s["rcache_refused"])
  }
  END {
    if (lines != ranks) { printf "soak.sh: FAILED: %d augur-stats lines for %d ranks\n", lines, ranks; bad = 1 }
    if (received == "missing") { print "soak.sh: FAILED: no messages_received in the result"; bad = 1 }
    else if (engine_msgs < received) {
      printf "soak.sh: FAILED: the engines received %d messages, fewer than the %d the program counted\n", engine_msgs, received; bad = 1
    }
    printf "%sengine_messages_received=%d\nrcache_max_bytes=%s\nrcache_max_entries=%s\nrcache_evictions=%d\nchecks=%s\n",
           peaks, engine_msgs, max_bytes, max_entries, evictions, bad ? "FAILED" : "passed" >> result
    printf "soak.sh: engines received %d messages (program: %d point-to-point), registration caches within %s bytes / %s regions (%d evictions)\n",
           engine_msgs, received, max_bytes, max_entries, evictions
    exit bad
  }' "$out/stderr.txt" || { echo "soak.sh: FAILED (see above; results in $out)"; exit 1; }
echo "soak.sh: passed (results in $out)"
