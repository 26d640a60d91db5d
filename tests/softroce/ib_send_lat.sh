#!/usr/bin/env bash
# Checks the soft-RoCE environment itself with perftest: ib_send_lat between two processes on
# AUGUR_DEVICE, and prints the latency table. Fails if perftest fails or prints no result.
set -euo pipefail
dev=${AUGUR_DEVICE:?AUGUR_DEVICE not set: run under scripts/softroce}
command -v ib_send_lat >/dev/null || { echo "ib_send_lat not found (apt-get install perftest)"; exit 1; }
gid=$(for i in 0 1 2 3; do t=$(cat /sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i 2>/dev/null || true);
      g=$(cat /sys/class/infiniband/$dev/ports/1/gids/$i 2>/dev/null || true);
      if [ "$t" = "RoCE v2" ] && [[ "$g" == 0000:0000:0000:0000:0000:ffff:* ]]; then echo $i; break; fi; done)
gid=${gid:-1}
port=$((18515 + RANDOM % 1000))
out=$(mktemp)
timeout 120 ib_send_lat -d "$dev" -x "$gid" -F -n 1000 -p "$port" >/dev/null 2>&1 &
server=$!
# The server may take a while to listen on a loaded, emulated machine: retry the client.
for attempt in $(seq 1 20); do
  sleep 1
  if timeout 120 ib_send_lat -d "$dev" -x "$gid" -F -n 1000 -p "$port" 127.0.0.1 >"$out" 2>&1; then break; fi
  kill -0 "$server" 2>/dev/null || { cat "$out"; echo "ib_send_lat server exited"; exit 1; }
done
cat "$out"
wait "$server"
# The result row starts with the message size (2 bytes by default).
grep -Eq '^ *2 +1000 +[0-9.]+' "$out" || { echo "ib_send_lat printed no result row"; exit 1; }
awk '/^ *2 +1000/ { printf "ib_send_lat on %s: 2 bytes, t_typical %s us\n", dev, $5 }' dev="$dev" "$out"
rm -f "$out"
