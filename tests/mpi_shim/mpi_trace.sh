#!/bin/bash
# The predictor's trace recorder (libaugur_trace, a PMPI interposer built against augur's mpi.h)
# on programs built with augur: the C and Fortran rings under augurrun, 3 ranks, write one trace
# per rank with every receive, and augur-trace replays them (the ring's receives repeat, so the
# single-cycle predictor must hit). Usage: mpi_trace.sh AUGURRUN LIBTRACE AUGUR_TRACE RING RING_F
set -u
run=$1 lib=$2 tool=$3 ring=$4 ring_f=${5:-}
# The recorder is never sanitized; preloaded into a sanitized build's programs it comes before
# the ASan runtime in the library list, which is harmless here.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0 pass=0
check() {
  if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $2"; fi
}
mkdir -p "$dir/c" "$dir/f"
"$run" -n 3 env LD_PRELOAD="$lib" AUGUR_TRACE_DIR="$dir/c" "$ring" 60
check '[ $? -eq 0 ]' "C ring under the recorder"
for r in 0 1 2; do
  f=$dir/c/augur-trace.$r.txt
  check '[ -f "$f" ] && grep -q "mpi=augur" "$f" && [ "$(grep -c "^recv " "$f")" -eq 60 ]' "C trace of rank $r: $(head -2 "$f" 2>/dev/null | tr '\n' ' ') $(grep -c '^recv ' "$f" 2>/dev/null) receives"
done
out=$("$tool" replay --predictor single-cycle --json "$dir"/c/augur-trace.*.txt 2>&1)
check '[ $? -eq 0 ] && echo "$out" | grep -q "single-cycle"' "augur-trace replay: $out"
echo "$out" | head -c 400
echo
if [ -n "$ring_f" ]; then
  "$run" -n 3 env LD_PRELOAD="$lib" AUGUR_TRACE_DIR="$dir/f" "$ring_f" 40
  check '[ $? -eq 0 ]' "Fortran ring under the recorder"
  for r in 0 1 2; do
    f=$dir/f/augur-trace.$r.txt
    check '[ -f "$f" ] && [ "$(grep -c "^irecv " "$f")" -eq 40 ] && [ "$(grep -c "^recv " "$f")" -eq 40 ]' "Fortran trace of rank $r"
  done
fi
echo "mpi_trace: $pass passed, $fail failed"
[ $fail -eq 0 ]
