#!/bin/bash
# The seed applications with early release on (AUGUR_EARLY_RELEASE=1, docs/early-release.md), 4
# ranks, at problem sizes whose messages go by rendezvous READ (AUGUR_EARLY=off: no landing
# zones; AUGUR_RELEASE_CHUNK=16384, so that PES's and N-body's 40 KiB messages hold a chunk): each
# must verify its result and exit 0, and the ranks' augur-stats lines must show receives
# released early (the ring's 8-byte token has nothing to release: it must just be right).
# Then M3 and N-body again with an assist thread (AUGUR_ASSIST=on), where sends are released
# instead: each must verify and show blocking sends released (PES sends with MPI_Isend and the
# ring's token is eager: they release no send).
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
for app in "m3 4 192" "nbody 1 5120"; do
  set -- $app
  env AUGUR_STATS=1 AUGUR_EARLY_RELEASE=1 AUGUR_ASSIST=on AUGUR_EARLY=off AUGUR_RELEASE_CHUNK=16384 timeout 600 \
    "$run" -n 4 "$bin/augur-mpi-$1" "${@:2}" >"$out" 2>&1
  rc=$?
  sed "s/^/[$1 sends] /" "$out" | grep -v "augur: rank"
  [ $rc -eq 0 ] || { echo "FAILED: $1 (sends) exited with $rc"; exit 1; }
  sends=$(awk '/^augur-stats /{for(i=2;i<=NF;++i){split($i,kv,"="); if(kv[1]=="release_sends") n+=kv[2]; if(kv[1]=="release_early") r+=kv[2]}} END{print n+0, r+0}' "$out")
  set -- $1 $sends
  echo "release_apps: $1 with an assist thread: $2 sends released early, $3 receives"
  if [ "$2" -eq 0 ] || [ "$3" -ne 0 ]; then echo "FAILED: $1: want sends released and no receive"; exit 1; fi
done
echo "release_apps: every application verified with early release on, receives and sends"
