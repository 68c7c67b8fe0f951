#!/usr/bin/env bash
# The simulator's GPU step times against steps measured on a GPU machine
# (bench/torch_gpu_steps.py). bench/gpu_step_validation.py has the details;
# bench/gpu_step_validation.sh --help lists the options.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/build" --target distlab-simulate >/dev/null
exec /usr/bin/python3 "$root/bench/gpu_step_validation.py" "$@"
