#!/usr/bin/env bash
# Lab question: checkpoint interval against total time. The CIFAR-10 MLP,
# synchronous all-reduce on 3 preemptible n1-standard-4 that fail once a
# minute each on average (scenarios/checkpoint_interval.yaml); every failure
# rolls back to the last checkpoint. Each interval is run with 5 seeds (5
# draws of the failure times); the figures show medians. Checkpointing often
# costs writes, rarely costs work done again: the total time has a minimum
# (Young and Daly's formulas put it near 150 to 180 steps here). About a
# minute on 2 cores.
#   experiments/checkpoint_interval.sh [OUT]  (default: runs/checkpoint-interval)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/checkpoint-interval}
./sweep scenarios/checkpoint_interval.yaml \
  --vary checkpoint.every_steps=25,50,100,200,400,800,1600 --vary seed=1,2,3,4,5 \
  --out "$out"
./report "$out"
