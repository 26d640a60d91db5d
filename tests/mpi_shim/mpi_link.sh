#!/bin/bash
# Link faults between two hosts (scripts/softroce --vms 2; this script runs on the first guest, as
# root, and cuts that guest's only link, eth0, under traffic of `faults link`: one rank per host,
# swapping checked eager and rendezvous messages):
#   flap  every packet on the link dropped (tc netem loss 100%) for FLAP_S seconds, then restored:
#         RC retransmission covers it (AUGUR_QP_TIMEOUT/AUGUR_QP_RETRY_COUNT: 2.1 s by default),
#         so the job must finish with every byte verified;
#   loss  the same, held for CUT_S seconds: the survivor must report MPI_ERR_PROC_FAILED within
#         the bound (either rank: the loss is one-way, eth0's egress), augurrun must exit non-zero;
#   down  `ip link set eth0 down` held for CUT_S seconds (rxe removes the route: the QP fails at
#         once): the same.
# After each case, once the link is back, no process of the job may be left on either host
# (checked by a job of `sh -c pgrep` across both). Prints one row per case for docs/faults.md.
# Usage: mpi_link.sh AUGURRUN FAULTS_PROGRAM
set -u
run=$1
prog=$2
dev=${AUGUR_LINK_DEV:-eth0}
flap_s=${AUGUR_LINK_FLAP_S:-0.9}  # under AUGUR_KEEPALIVE_MS (1 s)
cut_s=${AUGUR_LINK_CUT_S:-15}  # past TCP_USER_TIMEOUT (10 s): the hosts give each other up
bound_ms=${AUGUR_FAULT_BOUND_MS:-30000}
pass=0
fail=0
out=$(mktemp)
restore() { tc qdisc del dev "$dev" root 2>/dev/null; ip link set "$dev" up; }
trap 'restore; rm -f "$out" "$out.rc"' EXIT

case "${AUGUR_HOSTS:-}" in
  *,*) ;;
  *) echo "mpi_link.sh: AUGUR_HOSTS='${AUGUR_HOSTS:-}' does not name two hosts (run under scripts/softroce --vms 2)"; exit 1 ;;
esac
[ "$(id -u)" = 0 ] || { echo "mpi_link.sh: needs root to cut $dev"; exit 1; }
ip link show "$dev" >/dev/null || { echo "mpi_link.sh: no $dev"; exit 1; }
modprobe sch_netem 2>/dev/null
tc qdisc add dev "$dev" root netem loss 100% && tc qdisc del dev "$dev" root ||
  { echo "mpi_link.sh: tc netem is not available"; exit 1; }

now_ms() { date +%s%3N; }

# Runs the job, waits for traffic, cuts the link with $2 ("loss" or "down") for $3 seconds.
# Sets cut_at (ms), held_ms (how long the link was cut), job_rc, job_ms (cut to the launcher's exit).
cut_under_traffic() {
  local secs=$1 how=$2 hold=$3
  # --continue-on-failure: the launcher leaves the survivor running, so that it can report.
  (timeout -k 5 300 "$run" -n 2 --continue-on-failure "$prog" link "$secs" >"$out" 2>&1; echo "$? $(now_ms)" >"$out.rc") &
  local job=$!
  for _ in $(seq 1200); do
    grep -q "traffic flowing" "$out" && break
    kill -0 "$job" 2>/dev/null || break  # the job ended before traffic (e.g. a host is down): no wait
    sleep 0.1
  done
  cut_at=$(now_ms)
  if [ "$how" = loss ]; then tc qdisc add dev "$dev" root netem loss 100%; else ip link set "$dev" down; fi
  sleep "$hold"
  restore
  held_ms=$(( $(now_ms) - cut_at ))
  wait_for_peer
  wait $job
  local end
  read -r job_rc end <"$out.rc"
  job_ms=$((end - cut_at))
  sed 's/^/    | /' "$out" | grep -v '^    | augur-stats'
}

# After a cut, until the second host's augur-hostd answers again (ARP and routes come back in
# well under a second): the leftover check needs the link; a host that never answers is named.
wait_for_peer() {
  local peer=${AUGUR_SOFTROCE_ADDR2:-} t0
  [ -n "$peer" ] || return 0
  t0=$(now_ms)
  for _ in $(seq 60); do
    timeout 2 bash -c "exec 3<>/dev/tcp/$peer/${AUGUR_HOSTD_PORT:-7117}" 2>/dev/null && return 0
    sleep 1
  done
  echo "    the second host ($peer) did not answer within $(( ($(now_ms) - t0) / 1000 )) s of the link's restoration"
  peer_console
}

peer_console() {  # the second guest's last console lines, when it stopped answering
  # This side first: a cut left in place (qdisc, link state) or an unresolved neighbour.
  echo "    this host: $(tc qdisc show dev "$dev" | tr '\n' ';') $(ip -br link show "$dev") neighbours: $(ip neigh show dev "$dev" | tr '\n' ';')"
  local c=${AUGUR_SOFTROCE_PEER_CONSOLE:-}
  [ -r "$c" ] || return 0
  echo "    the second host's console, last lines:"
  tr -d '\r' < "$c" | grep -v '^\s*$' | tail -n 25 | sed 's/^/    h2| /'
  local k=${c%/*}/dmesg  # its kernel log (scripts/softroce-guest), beside the console
  [ -s "$k" ] && { echo "    the second host's kernel log, last lines:"; tail -n 20 "$k" | sed 's/^/    h2| /'; }
  return 0
}

left_anywhere() {  # a job of one rank per host that lists the fault program's processes
  sleep 1
  local l
  l=$(timeout -k 5 120 "$run" -n 2 /bin/sh -c "pgrep -af '^$prog( |\$)' | sed \"s/^/\$(hostname): /\"" 2>&1)
  local rc=$?
  if [ $rc != 0 ]; then
    echo "    leftover check failed (exit $rc): $l"
    peer_console
    return 0
  fi
  [ -n "$l" ] && { echo "    left behind: $l"; return 0; }
  return 1
}

result() {  # name, ok, detail
  if [ "$2" = 1 ]; then pass=$((pass + 1)); echo "ok: $1 ($3)"; else fail=$((fail + 1)); echo "FAILED: $1 ($3)"; fi
}

echo "== flap: all packets on $dev dropped for $flap_s s under traffic; the job must finish intact"
cut_under_traffic 12 loss "$flap_s"
ok=1
[ "$job_rc" = 0 ] || ok=0
[ "$(grep -c 'exchanges verified, finalized' "$out")" = 2 ] || ok=0
left_anywhere && ok=0
result "link drops packets for ${flap_s} s" $ok "cut for $held_ms ms, exit $job_rc, both ranks verified and finalized: $(grep -c 'exchanges verified, finalized' "$out")/2"

for how in loss down; do
  echo "== $how: $dev cut ($how) for $cut_s s under traffic; the survivor must report it"
  cut_under_traffic 600 "$how" "$cut_s"
  ok=1
  # Either rank may learn of it first (its clock: both guests take the host's at boot).
  line=$(grep -m1 '^rank [0-9]*: detected:' "$out")
  det_ms=-1
  if [ -n "$line" ]; then
    at=$(echo "$line" | sed -n 's/.* at \([0-9]*\)\.\([0-9]*\) .*/\1\2/p')
    det_ms=$((at - cut_at))
    echo "$line" | grep -q MPI_ERR_PROC_FAILED || ok=0
    [ "$det_ms" -le "$bound_ms" ] || ok=0
  else
    ok=0
  fi
  [ "$job_rc" != 0 ] || ok=0
  grep -q '^augurrun: ' "$out" || ok=0
  left_anywhere && ok=0
  result "link cut ($how) for ${cut_s} s" $ok "${line%%:*} reported MPI_ERR_PROC_FAILED ${det_ms} ms after the cut (bound ${bound_ms}); augurrun exit $job_rc ${job_ms} ms after the cut: $(grep -m1 '^augurrun: ' "$out")"
done

echo "mpi_link.sh: $pass passed, $fail failed"
[ $fail = 0 ]
