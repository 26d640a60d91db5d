#!/bin/bash
# Runs a test across two hosts: refuses to run (and fails) unless AUGUR_HOSTS names at least two
# hosts, one of them another machine, as scripts/softroce --vms 2 sets it up; a two-host test run on
# one host would pass without testing what it claims. Usage: twohost.sh COMMAND [ARGS...]
set -u
hosts=${AUGUR_HOSTS:-}
case "$hosts" in
  *,*) ;;
  *) echo "twohost: AUGUR_HOSTS='$hosts' does not name two hosts (run under scripts/softroce --vms 2)" >&2; exit 1 ;;
esac
echo "twohost: ranks placed round-robin on $hosts"
exec "$@"
