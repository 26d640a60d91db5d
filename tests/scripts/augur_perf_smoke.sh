#!/usr/bin/env bash
# scripts/augur-perf --smoke in the soft-RoCE guest (BUILD is the build tree): every subcommand
# runs every contender asked for and keeps each one in its JSON, with rows or an error; augur and
# Open MPI's TCP transport must produce rows; raw verbs is there for lat and bw; and the paths of
# early arrival are the expected ones: a pre-posted 4 KiB receive is placed directly (nothing
# copied, every data message direct), a receive posted after its message arrived is copied from
# a bounce slot. The figures themselves are not checked (no timing in tests).
set -euo pipefail
build=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$build/augur-perf-smoke
# augur-off is left out: the same program and library as augur-predicted with another setting,
# and the smoke test is one of the longest in CI (176 s with it).
contenders=raw-verbs,augur-predicted,openmpi-tcp,mpich
"$here/../../scripts/augur-perf" --in-guest --smoke --contenders "$contenders" --build "$build" --out "$out"
python3 - "$out" "$contenders" <<'PY'
import json, sys
out, contenders = sys.argv[1], sys.argv[2].split(",")
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)
for sub in ("lat", "bw", "halo", "buffering", "overlap", "rma"):
    d = json.load(open(f"{out}/{sub}.json"))["contenders"]
    want = contenders if sub in ("lat", "bw") else [c for c in contenders if c != "raw-verbs"]
    check(sorted(d) == sorted(want), f"{sub}: contenders {sorted(d)}")
    for c in want:
        check("rows" in d.get(c, {}) or "error" in d.get(c, {}), f"{sub}: {c} has neither rows nor an error")
    for c in ("augur-predicted", "openmpi-tcp") + (("raw-verbs",) if sub in ("lat", "bw") else ()):
        check(d.get(c, {}).get("rows"), f"{sub}: {c} produced no rows: {d.get(c)}")
cases = json.load(open(f"{out}/early-arrival.json"))["cases"]
check(len(cases) == 4 * (len(contenders) - 1), f"early-arrival: {len(cases)} cases")
for c in cases:
    check("post_to_completion_us" in c or "error" in c, f"early-arrival: {c}")
    if c["contender"] in ("augur-predicted", "openmpi-tcp"):
        check("post_to_completion_us" in c, f"early-arrival: {c}")
    if c["contender"] == "augur-predicted" and "messages" in c:
        m = c["messages"]
        if c["post"] == "pre":
            # Every data message direct, none copied (rank 1's other receives are empty ones).
            check(c["bytes_copied"] == 0 and m["direct_msgs"] == c["bytes_received"] // c["bytes"], f"pre-posted not direct: {c}")
        else:
            check(c["bytes_copied"] > 0 and m["bounce_msgs"] > 0, f"late receive not copied: {c}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
echo "augur-perf --smoke: every contender reported, paths as expected"
