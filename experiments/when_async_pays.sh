#!/usr/bin/env bash
# Lab question: when does an asynchronous parameter server pay? The lab CNN
# on Fashion-MNIST (full fidelity: the real math, so the report has test
# accuracy against time) and the CIFAR-10 MLP (timing fidelity:
# throughput), a chief and 3 workers on n1-standard-4, one epoch, with no
# slow task, one or two tasks 1.5 times slower, and every task's steps
# spread (lognormal, sigma 0.5). Six strategies:
#   sync all-reduce (a global batch of 256: 64 a replica), its gradient in
#   buckets (64 KiB of the CNN's 373 KB, 1 MiB of the MLP's 5.6 MB),
#   reduced after the backward pass or beside it (overlap);
#   a sync parameter server, with and without a backup worker (3 of 4
#   pushes a step), and an async one, free or bounded to 1 step of
#   staleness (64 a worker, one server).
# Four sweeps, one report. About 6 minutes on 2 cores.
#   experiments/when_async_pays.sh [OUT]      (default: runs/when-async-pays)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/when-async-pays}
slowdowns='[],[{task: worker:2, factor: 1.5}],[{task: worker:1, factor: 1.5}, {task: worker:2, factor: 1.5}],[{lognormal_sigma: 0.5}]'
common=(--set cluster.workers=3 --set training.eval_every=25 --set training.eval_examples=2000
  --vary "slowdowns=$slowdowns")
# A model's two sweeps: all-reduce (a global batch of 256, buckets of
# BUCKET bytes, overlap or not) and the parameter servers (64 a worker).
sweeps() {  # SCENARIO NAME BUCKET [more sweep arguments]
  local scenario=$1 name=$2 bucket=$3
  shift 3
  ./sweep "$scenario" "${common[@]}" "$@" --set training.batch_size=256 \
    --set strategy.bucket_bytes="$bucket" --vary strategy.overlap=false,true \
    --out "$out/$name-allreduce"
  ./sweep "$scenario" "${common[@]}" "$@" --set training.batch_size=64 \
    --set strategy.name=parameter_server --set cluster.ps=1 \
    --vary 'strategy={name: parameter_server, mode: sync},{name: parameter_server, mode: sync, replicas_to_aggregate: 3},{name: parameter_server, mode: async},{name: parameter_server, mode: async, staleness_bound: 1}' \
    --out "$out/$name-parameter-server"
}
sweeps scenarios/mnist_cnn_sync.yaml cnn 65536
sweeps scenarios/cifar10_mlp_sync.yaml mlp 1048576 --fidelity timing
./report "$out"/cnn-* "$out"/mlp-* --out "$out/report"
