#!/usr/bin/env bash
# Breaks the soft-RoCE environment on purpose and checks that scripts/softroce fails with the
# right exit status and a message naming the failed step, within its bounds. Boots the guest twice.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
sr="$root/scripts/softroce"
failures=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# expect NAME WANT_RC WANT_TEXT -- ARGS...
expect() {
  local name=$1 want_rc=$2 want_text=$3
  shift 4
  local start=$SECONDS
  "$sr" "$@" >"$out" 2>&1 </dev/null
  local rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! grep -qF -- "$want_text" "$out"; then
    echo "FAIL $name: exit $rc (want $want_rc), output lacks '$want_text':"
    sed 's/^/    /' "$out"
    failures=$((failures + 1))
  else
    echo "ok   $name: exit $rc, '$want_text' ($((SECONDS - start)) s)"
  fi
}

expect "unknown option" 2 'FAILED at step "arguments"' -- --bogus true
expect "no command" 2 'no command given' --
expect "wrong kernel path" 3 'FAILED at step "kernel": kernel image /nonexistent/vmlinuz not found' -- \
  --mode vm --kernel /nonexistent/vmlinuz true
expect "command fails: status propagates" 7 'command exit status 7' -- \
  --mode vm --hosts 1 --timeout 120 sh -c 'test -e /sys/class/infiniband/rxe0 && echo rxe0-present && exit 7'
grep -q rxe0-present "$out" || { echo "FAIL command fails: rxe0 was not present in the guest"; failures=$((failures + 1)); }
expect "command hangs: bounded" 124 'FAILED at step "command": timed out after 5s' -- \
  --mode vm --hosts 1 --timeout 5 sleep 600

echo "softroce self-test: $((5 - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
