#!/usr/bin/env bash
# scripts/augur-perf-report on saved runs (augur-perf-results/raw/, from a --quick run at MTU 4096):
# the JSON carries each contender's medians as the runs printed them, the raw-verbs contender
# from the raw side of the MPI runs, augur's copies from rank 1's counters, a failed contender
# with its error (never dropped), a contender with no run as such; the tables give the ratios;
# the PNGs are written.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
report="$here/../../scripts/augur-perf-report"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cp -r "$here/augur-perf-results/raw" "$tmp/"
contenders="raw-verbs augur-off augur-predicted openmpi-tcp mpich mpich-tcp"
python3 "$report" "$tmp" 4096 "$contenders" lat bw halo early-arrival buffering > "$tmp/summary.txt"
q() { python3 -c "import json, sys; d = json.load(open('$tmp/' + sys.argv[1] + '.json')); print($2)" "$1"; }

# lat: augur-predicted's 64-byte row is "64 13.78 16.48 1.20"; raw verbs is the median of the raw
# column over the three MPI runs that completed (13.78, 17.36... : augur-off, augur-predicted, openmpi-tcp).
[ "$(q lat 'd["contenders"]["augur-predicted"]["rows"][1]')" = \
  "{'bytes': 64, 't_typical': 16.48, 'raw_t_typical': 13.78, 'ratio_to_raw': 1.2}" ] || fail "lat augur-predicted row"
raw64=$(awk '$1 == 64 { print $2 }' "$tmp"/raw/lat.{augur-off,augur-predicted,openmpi-tcp}.1.out | sort -n | sed -n 2p)
[ "$(q lat 'd["contenders"]["raw-verbs"]["rows"][1]["t_typical"]')" = "$raw64" ] || fail "raw-verbs is not the median raw side"
q lat 'd["contenders"]["mpich"]["error"]' | grep -q "exit status 6: .*Fatal: UD endpoint" || fail "mpich's error: $(q lat 'd["contenders"]["mpich"]')"
[ "$(q lat 'd["contenders"]["mpich-tcp"]')" = "{'error': 'no run'}" ] || fail "a contender with no run must stay, as such"
grep -q "^      64            1.00 " "$tmp/summary.txt" || fail "no ratio row for 64 bytes"
# bw: Open MPI's 64 KiB row is "65536 60.64 174.81 2.88 925 2667" (raw MB/s, MPI MB/s, ratio, rates).
[ "$(q bw '[ (r["mbps"], r["msgs_per_s"], r["ratio_to_raw"]) for r in d["contenders"]["openmpi-tcp"]["rows"] if r["bytes"] == 65536 ]')" = \
  "[(174.81, 2667.0, 2.88)]" ] || fail "bw row"
# halo: the failed contender keeps its error.
q halo 'd["contenders"]["mpich"]["error"]' | grep -q Fatal || fail "halo mpich error"
# early-arrival: receive posted late, 4096 bytes cyclic: every byte copied (rank 1's counter, not
# rank 0's result messages); pre-posted: none copied, all 90 placed directly.
[ "$(q early-arrival '[ (c["bytes_copied"], c["bytes_received"]) for c in d["cases"] if c["contender"] == "augur-predicted" and c["post"] == "late" ]')" = \
  "[(368640, 368640)]" ] || fail "late: bytes copied"
[ "$(q early-arrival '[ (c["bytes_copied"], c["messages"]["direct_msgs"]) for c in d["cases"] if c["contender"] == "augur-predicted" and c["post"] == "pre" ]')" = \
  "[(0, 90)]" ] || fail "pre: bytes copied / direct"
[ "$(q early-arrival '[ (c["contender"], c["bytes_copied"]) for c in d["cases"] if not c["contender"].startswith("augur") ]')" = \
  "[('openmpi-tcp', None), ('mpich', None)]" ] || fail "the other MPIs' copies are unknown, not 0"
# buffering: the harmonic means over the sizes, from the rows.
hm=$(python3 -c "import json, statistics; r = json.loads(open('$tmp/raw/buffering.augur-off.1.out').read())['rows']; print(round(statistics.harmonic_mean([x['mbps_preposted'] for x in r]), 6))")
[ "$(q buffering 'round(d["contenders"]["augur-off"]["harmonic_mean_mbps"]["preposted"], 6)')" = "$hm" ] || fail "harmonic mean"
for png in lat bw halo early-arrival buffering; do
  [ "$(head -c 8 "$tmp/$png.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png.png is not a PNG"
done
echo "augur-perf-report: JSON, ratios and plots as the saved runs say"
