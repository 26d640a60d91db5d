#!/bin/bash
# augurrun's remote launch through augur-hostd, on this machine: a host given as HOST:PORT is
# always reached through the daemon, so 127.0.0.1:PORT exercises the whole remote path (proxy,
# daemon, output relay, exit status, signals, a job that dies together).
# Usage: launch_remote.sh AUGURRUN AUGUR_HOSTD
set -u
run=$(realpath "$1")
hostd=$(realpath "$2")
pass=0
fail=0
tmp=$(mktemp -d)
daemon=
trap '[ -n "$daemon" ] && kill $daemon 2>/dev/null; rm -rf "$tmp"' EXIT

start_daemon() {  # token; sets $port and $daemon
  for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 30000))
    AUGUR_HOSTD_PORT=$port AUGUR_HOSTD_TOKEN=$1 "$hostd" --listen 127.0.0.1 2>"$tmp/hostd.log" &
    daemon=$!
    for _ in $(seq 1 50); do grep -q listening "$tmp/hostd.log" && return 0; kill -0 $daemon 2>/dev/null || break; sleep 0.1; done
    kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; daemon=
  done
  echo "FAILED: augur-hostd did not start:"; cat "$tmp/hostd.log"; exit 1
}
check() {  # name, condition (0 ok), output file
  if [ "$2" -eq 0 ]; then pass=$((pass + 1)); echo "ok: $1"; else fail=$((fail + 1)); echo "FAILED: $1; output:"; sed 's/^/  | /' "$3"; fi
}

start_daemon ""
remote=127.0.0.1:$port
out=$tmp/out

# Ranks alternate between this host and the daemon; every rank runs, output is tagged.
timeout 60 "$run" -n 4 --host-list localhost,$remote --tag-output sh -c 'echo "rank $AUGUR_RANK of $AUGUR_SIZE"' >"$out" 2>&1
rc=$?
ok=$rc
for r in 0 1 2 3; do grep -qx "\[$r\] rank $r of 4" "$out" || ok=1; done
[ "$(grep -c 'started sh' "$tmp/hostd.log")" -eq 2 ] || ok=1
check "ranks 1 and 3 run through augur-hostd, all four report" $ok "$out"

# The environment: AUGUR_* always, others only with -x; the working directory follows.
(cd "$tmp" && FOO=bar AUGUR_X=y timeout 60 "$run" -n 1 --host-list $remote sh -c 'echo "x=$AUGUR_X foo=${FOO:-unset} pwd=$(pwd)"') >"$out" 2>&1
grep -qx "x=y foo=unset pwd=$tmp" "$out"; check "AUGUR_* and the working directory are forwarded, other variables are not" $? "$out"
FOO=bar timeout 60 "$run" -n 1 -x FOO --host-list $remote sh -c 'echo "foo=$FOO"' >"$out" 2>&1
grep -qx "foo=bar" "$out"; check "-x forwards a variable" $? "$out"

# The bootstrap address reaches the launcher from the daemon's side.
timeout 60 "$run" -n 2 --host-list $remote sh -c 'echo "boot=$AUGUR_BOOTSTRAP"' >"$out" 2>&1
grep -q "boot=127.0.0.1:[0-9]" "$out"; check "remote ranks get a reachable AUGUR_BOOTSTRAP" $? "$out"

# A remote rank's exit status and death by signal are the job's, and end the other ranks.
timeout 60 "$run" -n 3 --host-list localhost,$remote sh -c '[ "$AUGUR_RANK" = 1 ] && exit 5; exec sleep 60' >"$out" 2>&1
rc=$?
[ $rc -eq 5 ] && grep -q "rank 1 exited with status 5" "$out"; check "a remote rank's exit status ends the job (exit $rc)" $? "$out"
timeout 60 "$run" -n 2 --host-list localhost,$remote sh -c '[ "$AUGUR_RANK" = 1 ] && kill -9 $$; exec sleep 60' >"$out" 2>&1
rc=$?
[ $rc -eq 137 ] && grep -q "rank 1 was killed by signal 9" "$out"; check "a remote rank killed by a signal ends the job (exit $rc)" $? "$out"

# A local failure stops the remote ranks: nothing of the job is left on the daemon's side.
timeout 60 "$run" -n 2 --host-list localhost,$remote sh -c '[ "$AUGUR_RANK" = 0 ] && { sleep 1; exit 4; }; echo $$ > '"$tmp"'/r1.pid; exec sleep 60' >"$out" 2>&1
rc=$?
r1=$(cat "$tmp/r1.pid" 2>/dev/null || echo 0)
sleep 0.5
[ $rc -eq 4 ] && [ "$r1" -gt 0 ] && ! kill -0 "$r1" 2>/dev/null; check "a local rank's failure stops the remote rank (exit $rc)" $? "$out"

# Ctrl-C reaches the remote ranks.
"$run" -n 2 --host-list $remote sh -c 'echo $$ > '"$tmp"'/r$AUGUR_RANK.pid; exec sleep 60' >"$out" 2>&1 &
job=$!
for _ in $(seq 1 100); do [ -s "$tmp/r0.pid" ] && [ -s "$tmp/r1.pid" ] && break; sleep 0.1; done
sleep 0.3
kill -INT $job
wait $job
rc=$?
sleep 0.5
left=0
for r in 0 1; do kill -0 "$(cat "$tmp/r$r.pid" 2>/dev/null || echo 0)" 2>/dev/null && left=1; done
[ $rc -eq 130 ] && [ $left -eq 0 ] && grep -q "received Interrupt" "$out"; check "SIGINT stops remote ranks (exit $rc)" $? "$out"

# A launcher killed outright (SIGKILL, no cleanup) still takes its remote ranks along.
rm -f "$tmp"/r*.pid
"$run" -n 2 --host-list $remote sh -c 'echo $$ > '"$tmp"'/r$AUGUR_RANK.pid; exec sleep 60' >"$out" 2>&1 &
job=$!
for _ in $(seq 1 100); do [ -s "$tmp/r0.pid" ] && [ -s "$tmp/r1.pid" ] && break; sleep 0.1; done
kill -9 $job
wait $job 2>/dev/null
left=1
for _ in $(seq 1 50); do
  left=0
  for r in 0 1; do kill -0 "$(cat "$tmp/r$r.pid" 2>/dev/null || echo 0)" 2>/dev/null && left=1; done
  [ $left -eq 0 ] && break
  sleep 0.1
done
[ $left -eq 0 ]; check "remote ranks die with a SIGKILLed launcher" $? "$tmp/hostd.log"

# A missing program and an unreachable daemon are reported, not hung on.
timeout 60 "$run" -n 1 --host-list $remote /nonexistent/program >"$out" 2>&1
rc=$?
[ $rc -eq 127 ] && grep -q "cannot run /nonexistent/program" "$out"; check "a missing program on the remote host (exit $rc)" $? "$out"
kill $daemon; wait $daemon 2>/dev/null; daemon=
timeout 90 "$run" -n 1 --host-list $remote /bin/true >"$out" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "augur-hostd connect to 127.0.0.1:$port" "$out"; check "no daemon: a clear error (exit $rc)" $? "$out"

# A daemon with a token refuses launchers without it.
start_daemon s3cret
remote=127.0.0.1:$port
timeout 60 "$run" -n 1 --host-list $remote /bin/true >"$out" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "AUGUR_HOSTD_TOKEN does not match" "$out"; check "a wrong token is refused (exit $rc)" $? "$out"
AUGUR_HOSTD_TOKEN=s3cret timeout 60 "$run" -n 1 --host-list $remote /bin/true >"$out" 2>&1
check "the right token is accepted" $? "$out"

echo "launch_remote: $pass passed, $fail failed"
[ $fail -eq 0 ]
