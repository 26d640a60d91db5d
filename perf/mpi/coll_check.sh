#!/bin/bash
# What AUGUR_CHECK_COLLECTIVES=1 costs: coll_time with the check off (A) and on (B), alternately,
# medians and the ratio on/off per collective (coll_ab.sh).
# Usage: coll_check.sh AUGURRUN COLL_TIME [RANKS] [ITERS] [ROUNDS]
set -euo pipefail
exec "$(dirname "$0")/coll_ab.sh" "$1" "$2" "${3:-4}" "${4:-200}" "${5:-3}" AUGUR_CHECK_COLLECTIVES=0 AUGUR_CHECK_COLLECTIVES=1
