#!/usr/bin/env bash
# scripts/plot-main-job on saved main-job results (main-job-results/, from a run at 340a30d):
# the data it plots is what the results say (per-rank ratios recomputed by hand from the
# augur-stats lines), both PNGs are written, and a folder without results is an error.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
plot="$here/../../scripts/plot-main-job"
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cp "$here"/main-job-results/*.txt "$tmp/"
"$plot" "$tmp"
# rank hit% direct%: rank 0 393/404 hits, 274/404 direct; rank 1 793/802, 342/802; ...
expect_pes=$'0 97.3 67.8\n1 98.9 42.6\n2 98.8 52.3\n3 97.8 51.7'
[ "$(cat "$tmp/pes.dat")" = "$expect_pes" ] || fail "pes.dat: $(cat "$tmp/pes.dat")"
# mode vs_off direct% copied KiB/iter (8192, 1178.7, 1210.6 bytes)
read -r -d '' expect_halo <<'T' || true
off 1.00 0.0 8
posted 1.14 85.6 1.15107
predicted 1.15 85.2 1.18223
T
[ "$(cat "$tmp/halo.dat")" = "$expect_halo" ] || fail "halo.dat: $(cat "$tmp/halo.dat")"
[ "$(wc -l < "$tmp/latency.dat")" -eq 8 ] || fail "latency.dat should have the 8 sizes"
[ "$(awk 'NR == 3 { print $1, $2, $8 }' "$tmp/latency.dat")" = "64 9.63 1.10" ] || fail "latency.dat row 64"
for png in latency steering; do
  [ "$(head -c 8 "$tmp/$png.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png.png is not a PNG"
  [ "$(stat -c %s "$tmp/$png.png")" -gt 10000 ] || fail "$png.png is nearly empty"
done

mkdir "$tmp/empty"
if "$plot" "$tmp/empty" 2> "$tmp/err"; then fail "a folder without results was accepted"; fi
grep -q "no results in" "$tmp/err" || fail "unclear error: $(cat "$tmp/err")"
echo "plot-main-job: data and plots as expected"
