#!/bin/bash
# Early release through augurrun (mpi_test_release, 2 ranks; docs/early-release.md). The program
# checks every byte as it uses each buffer the moment its receive returns; here rank 1's
# augur-stats line must show what was released:
#   AUGUR_EARLY_RELEASE=1 with steering and landing zones off (every large message by rendezvous
#     READ): every receive the program counted as releasable was released (release_early), none
#     was declined, and each release guarded chunks;
#   AUGUR_EARLY_RELEASE=1 with the defaults (predicted steering, landing zones): a correct run
#     (messages that land in a zone before their receive are complete at the match: not released);
#   AUGUR_EARLY_RELEASE=1 with an assist thread (AUGUR_ASSIST=on), every large message by READ:
#     sends are released instead (rank 0 rewrites its buffer the moment each MPI_Send returns,
#     rank 1 receives into a buffer it has just sent from): every blocking send of either rank the
#     program counted was released (release_sends), no receive was;
#   AUGUR_EARLY_RELEASE=0: a correct run, nothing released.
# Usage: release_stats.sh AUGURRUN PROGRAM
set -u
run=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# run_case NAME ENV...: runs the job, prints its output, checks the exit code and rank 1's line.
run_case() {
  local name=$1
  shift
  env AUGUR_STATS=1 "$@" timeout 600 "$run" -n 2 "$prog" 1 >"$out" 2>&1
  local rc=$?
  sed "s/^/[$name] /" "$out"
  if [ $rc -ne 0 ]; then echo "FAILED: $name exited with $rc"; exit 1; fi
  awk -v name="$name" '
    function kvs(arr,   i, kv) { delete arr; for (i = 2; i <= NF; ++i) { split($i, kv, "="); arr[kv[1]] = kv[2] } }
    /^release-expect rank=0 / { kvs(e0); have_e0 = 1 }
    /^release-expect rank=1 / { kvs(e); have_e = 1 }
    /^augur-stats rank=0 / { kvs(s0); have_s0 = 1 }
    /^augur-stats rank=1 / { kvs(s); have_s = 1 }
    END {
      if (!have_e || !have_s || !have_e0 || !have_s0) { printf "FAILED: %s: no release-expect or augur-stats line for a rank\n", name; exit 1 }
      printf "%s: %d of %d releasable receives released early, %d chunks guarded, %d touches waited, %d calls settled first, %d declined\n",
             name, s["release_early"], e["releasable"], s["release_chunks"], s["release_waits"], s["release_settles"], s["release_declined"]
      printf "%s: %d of %d and %d of %d releasable sends released (ranks 0 and 1), %d declined, %d touches waited at rank 0 (stores into sends, with sends released)\n",
             name, s0["release_sends"], e0["sends"], s["release_sends"], e["sends"], s0["release_sends_declined"] + s["release_sends_declined"], s0["release_waits"]
      bad = 0
      if (name == "sends") {
        if (s0["release_sends"] != e0["sends"] || s["release_sends"] != e["sends"]) { printf "FAILED: %s: not every releasable send released\n", name; bad = 1 }
        if (s0["release_sends_declined"] + s["release_sends_declined"] != 0) { printf "FAILED: %s: sends declined\n", name; bad = 1 }
        if (s["release_early"] != 0) { printf "FAILED: %s: a receive released with an assist thread\n", name; bad = 1 }
      } else if (s0["release_sends"] + s["release_sends"] != 0) {
        printf "FAILED: %s: sends released without an assist thread\n", name; bad = 1
      }
      if (name == "rendezvous") {
        if (s["release_early"] != e["releasable"]) { printf "FAILED: %s: release_early %d, want %d\n", name, s["release_early"], e["releasable"]; bad = 1 }
        if (s["release_chunks"] < s["release_early"]) { printf "FAILED: %s: fewer chunks than releases\n", name; bad = 1 }
      } else if (name == "off") {
        if (s["release_early"] != 0 || s["release_chunks"] != 0) { printf "FAILED: %s: released with the mode off\n", name; bad = 1 }
      } else if (s["release_early"] > e["releasable"]) {
        printf "FAILED: %s: %d released, more than the %d releasable\n", name, s["release_early"], e["releasable"]; bad = 1
      }
      if (s["release_declined"] != 0) { printf "FAILED: %s: %d declined\n", name, s["release_declined"]; bad = 1 }
      exit bad
    }' "$out" || exit 1
}

run_case rendezvous AUGUR_EARLY_RELEASE=1 AUGUR_STEERING=off AUGUR_EARLY=off
run_case defaults AUGUR_EARLY_RELEASE=1
run_case sends AUGUR_EARLY_RELEASE=1 AUGUR_ASSIST=on AUGUR_STEERING=off AUGUR_EARLY=off
run_case off AUGUR_EARLY_RELEASE=0
echo "release_stats: every releasable receive (and, with an assist thread, send) released early, every byte checked"
