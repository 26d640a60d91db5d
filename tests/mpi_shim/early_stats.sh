#!/bin/bash
# Early arrivals through augurrun (mpi_test_early, 2 or 3 ranks; every receive posted after its
# message came). The program checks every byte; here rank 1's augur-stats line must show the path:
#   default mode (landing zones), 64 KiB: as many late receives found their message in a zone
#     before the post (landing_early) as the program made in its learned cycle (`predictable`:
#     after warm-up, not the touch round, not a misprediction), and no more went by rendezvous
#     than the receives the predictor could not know;
#   the same with the predicted buffer read after its message came: a correct run;
#   AUGUR_STEERING=speculative, 4 KiB: as many written straight into the predicted buffer before
#     the post and taken there (spec_early, spec_placed), no more bytes copied than the others
#     hold, the touch before the message a guard fault that revoked a credit, no violation;
#   speculative with the read after the message came: the run stops, non-zero, with the report
#     that names the buffer and the advice;
#   speculative with a truncated receive of a message written ahead: the run stops, reporting
#     the bytes past the receive as overwritten (the default mode returns MPI_ERR_TRUNCATE).
# Usage: early_stats.sh AUGURRUN PROGRAM
set -u
run=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# run_case NAME WANT_RC RANKS ENV... -- ARGS...: runs the job, prints its output, checks the exit
# code. With 3 ranks, rank 2 sends two messages from a source the predictor does not expect.
run_case() {
  local name=$1 want=$2 np=$3
  shift 3
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env AUGUR_STATS=1 "${envs[@]}" timeout 600 "$run" -n "$np" "$prog" "$@" >"$out" 2>&1
  local rc=$?
  sed "s/^/[$name] /" "$out"
  if [ "$want" = 0 ] && [ $rc -ne 0 ]; then echo "FAILED: $name exited with $rc"; exit 1; fi
  if [ "$want" != 0 ] && { [ $rc -eq 0 ] || [ $rc -eq 124 ]; }; then echo "FAILED: $name exited with $rc, want a stop"; exit 1; fi
}

# check NAME MODE: rank 1's counters against its early-expect line (MODE landing or speculative).
check() {
  local want_hosts=1
  case "${AUGUR_HOSTS:-}" in *,*) want_hosts=2 ;; esac
  awk -v name="$1" -v mode="$2" -v want_hosts=$want_hosts '
    /^augur-stats / { for (i = 2; i <= NF; ++i) if ($i ~ /^host=/) hosts[substr($i, 6)] = 1 }
    function kvs(arr, need,   i, kv, k, n, keys) {
      delete arr; for (i = 2; i <= NF; ++i) { split($i, kv, "="); arr[kv[1]] = kv[2] }
      n = split(need, keys, " ")
      for (k = 1; k <= n; ++k) if (!(keys[k] in arr)) { printf "FAILED: %s: no %s in: %s\n", name, keys[k], $0; bad = 1 }
    }
    /^early-expect / { kvs(e, "rank late_recvs predictable bytes"); have_e = 1 }
    /^augur-stats rank=1 / {
      kvs(s, "landing_early landing_msgs rndv_msgs spec_early spec_placed spec_revoked guard_faults spec_violations bytes_copied")
      have_s = 1
    }
    END {
      if (!have_e || !have_s) { printf "FAILED: %s: no early-expect or augur-stats line from rank 1\n", name; exit 1 }
      nh = 0; for (h in hosts) ++nh
      if (nh < want_hosts) { printf "FAILED: %s: the ranks ran on %d host(s), expected %d\n", name, nh, want_hosts; bad = 1 }
      want = e["predictable"]; unpredictable = e["late_recvs"] - e["predictable"]
      if (e["predictable"] < 30) { printf "FAILED: %s: only %d predictable receives\n", name, e["predictable"]; bad = 1 }
      if (mode == "landing") {
        printf "%s: %d of %d predictable late receives found in a zone (landing_early), %d by rendezvous, %d late in all\n",
               name, s["landing_early"], e["predictable"], s["rndv_msgs"], e["late_recvs"]
        if (s["landing_early"] < want) { printf "FAILED: %s: landing_early %d < %d\n", name, s["landing_early"], want; bad = 1 }
        if (s["rndv_msgs"] > unpredictable) {
          printf "FAILED: %s: %d by rendezvous, more than the %d unpredictable\n", name, s["rndv_msgs"], unpredictable; bad = 1
        }
        if (s["spec_early"] != 0) { printf "FAILED: %s: speculation in the default mode\n", name; bad = 1 }
      } else {
        printf "%s: %d of %d predictable late receives written ahead (spec_early), %d taken in place, %d revoked, %d guard faults, %d bytes copied\n",
               name, s["spec_early"], e["predictable"], s["spec_placed"], s["spec_revoked"], s["guard_faults"], s["bytes_copied"]
        if (s["spec_early"] < want || s["spec_placed"] < want) { printf "FAILED: %s: spec_early/spec_placed under %d\n", name, want; bad = 1 }
        if (s["guard_faults"] < 1 || s["spec_revoked"] < 1) { printf "FAILED: %s: the touch was not a guard fault that revoked\n", name; bad = 1 }
        if (s["spec_violations"] != 0) { printf "FAILED: %s: violations\n", name; bad = 1 }
        if (s["bytes_copied"] > unpredictable * e["bytes"]) {
          printf "FAILED: %s: %d bytes copied, more than the %d unpredictable receives hold\n", name, s["bytes_copied"], unpredictable; bad = 1
        }
      }
      exit bad
    }' "$out" || exit 1
}

run_case landing 0 3 -- 65536 --truncate
check landing landing
run_case landing-touch-after 0 2 -- 65536 --touch-after
check landing-touch-after landing
run_case speculative 0 3 AUGUR_STEERING=speculative -- 4096
check speculative speculative
run_case speculative-touch-after 1 2 AUGUR_STEERING=speculative -- 4096 --touch-after
grep -q "touched buffer 0x" "$out" && grep -q "AUGUR_STEERING=predicted" "$out" ||
  { echo "FAILED: speculative-touch-after: no report naming the buffer"; exit 1; }
run_case speculative-truncate 1 2 AUGUR_STEERING=speculative -- 4096 --truncate
grep -q "took a message of 4096 bytes ahead of its receive, and the receive posted for it holds 3096" "$out" ||
  { echo "FAILED: speculative-truncate: no report of the bytes written past the receive"; exit 1; }
echo "early_stats: zones and speculation placed the early messages; the touch after and the truncation were reported"
