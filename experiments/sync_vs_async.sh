#!/usr/bin/env bash
# Lab question: synchronous all-reduce against an asynchronous parameter
# server on communication overhead. Same model (the CIFAR-10 MLP, 5.6 MB of
# parameters), data and batch; 1 to 16 workers on n1-standard-4, no chief
# (worker 0 leads). Timing fidelity: message sizes and compute times are
# those of the real run, the math is skipped (15 seconds on 2 cores; without
# `--fidelity timing` the report adds test accuracy against time, in about
# 3 minutes).
#   experiments/sync_vs_async.sh [OUT]      (default: runs/sync-vs-async)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/sync-vs-async}
./sweep scenarios/cifar10_mlp_sync.yaml --fidelity timing \
  --vary strategy.name=allreduce,parameter_server \
  --vary cluster.workers=1,2,4,8,16 \
  --set cluster.chief=0 --unset training.epochs --set training.steps=150 \
  --out "$out"
./report "$out"
