#!/usr/bin/env bash
# The fidelity benchmark: calibrates this machine, then runs lab scenarios of
# several shapes both for real (./realnet --launch) and in the simulator on
# the calibrated `local` machine with one_host placement, and prints the
# error of each figure. bench/fidelity.py has the details;
# bench/fidelity.sh --help lists the options.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/build" --target distlab-simulate distlab-realnet distlab-calibrate
exec /usr/bin/python3 "$root/bench/fidelity.py" "$@"
