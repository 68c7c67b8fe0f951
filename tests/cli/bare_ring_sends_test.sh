#!/usr/bin/env bash
# bench/bare_ring, the floor of bench/simulate_scale.sh, sends in several
# ways (--send) that cost SimGrid more or less work; the ring they simulate
# is the same: the same simulated seconds, which match the alpha-beta model
# with each round's addition.
# Usage: bare_ring_sends_test.sh BARE_RING SOURCE_DIR
set -euo pipefail
bare_ring=$1 src=$2
source "$src/tests/support/check.sh"

figures() {  # simulated and model seconds of one mode
  "$bare_ring" --workers 12 --bytes 40000 --steps 2 --add-us 3 --send "$1" |
    /usr/bin/python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
print("%.12g %.12g" % (r["simulated_seconds"], r["model_seconds"]))'
}
eager=$(figures eager)
kept=$(figures kept)
echo "eager: $eager; kept: $kept"
check "kept sends simulate the ring that detached ones do" test "$kept" = "$eager"
check "and both meet the alpha-beta model with the additions" /usr/bin/python3 -c '
import sys
simulated, model = map(float, sys.argv[1].split())
sys.exit(abs(simulated - model) > 1e-3 * model)' "$kept"
exit "$failures"
