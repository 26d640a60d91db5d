#!/bin/bash
# The seed applications with early release on (AUGUR_EARLY_RELEASE=1, docs/early-release.md), 4
# ranks, at problem sizes whose messages go by rendezvous READ (AUGUR_EARLY=off: no landing
# zones; AUGUR_RELEASE_CHUNK=16384, so that PES's and N-body's 40 KiB messages hold a chunk): each
# must verify its result and exit 0, and the ranks' augur-stats lines must show receives
# released early (the ring's 8-byte token has nothing to release: it must just be right).
# Usage: release_apps.sh AUGURRUN BINDIR
set -u
run=$1
bin=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for app in "m3 4 192" "pes 3 5120" "nbody 1 5120" "ring 20"; do
  set -- $app
  env AUGUR_STATS=1 AUGUR_EARLY_RELEASE=1 AUGUR_EARLY=off AUGUR_RELEASE_CHUNK=16384 timeout 600 \
    "$run" -n 4 "$bin/augur-mpi-$1" "${@:2}" >"$out" 2>&1
  rc=$?
  sed "s/^/[$1] /" "$out" | grep -v "augur: rank"
  [ $rc -eq 0 ] || { echo "FAILED: $1 exited with $rc"; exit 1; }
  released=$(awk '/^augur-stats /{for(i=2;i<=NF;++i){split($i,kv,"="); if(kv[1]=="release_early") n+=kv[2]}} END{print n+0}' "$out")
  echo "release_apps: $1: $released receives released early"
  if [ "$1" != ring ] && [ "$released" -eq 0 ]; then echo "FAILED: $1: nothing released"; exit 1; fi
done
echo "release_apps: every application verified with early release on"
