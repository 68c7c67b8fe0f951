#!/usr/bin/env bash
# Lab question: CPU against GPU machine types for the same job: the lab CNN,
# synchronous all-reduce over a chief and one worker, 200 steps, on two CPU
# machine types and three with one GPU (K80, P100, V100; figures from
# scenarios/machines.yaml). Timing fidelity: compute times come from each
# machine's roofline model, messages are exact. Seconds on 2 cores.
#   experiments/cpu_vs_gpu.sh [OUT]         (default: runs/cpu-vs-gpu)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/cpu-vs-gpu}
./sweep scenarios/mnist_cnn_sync.yaml --fidelity timing \
  --vary cluster.machine=n1-standard-4,n1-standard-16,standard_gpu,standard_p100,standard_v100 \
  --unset training.epochs --set training.steps=200 --out "$out"
./report "$out"
