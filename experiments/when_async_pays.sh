#!/usr/bin/env bash
# Lab question: when does an asynchronous parameter server pay? The lab CNN
# on Fashion-MNIST (full fidelity: the real math, so the report has test
# accuracy against time), a chief and 3 workers on n1-standard-4, one
# epoch, with no slow task, one or two tasks 1.5 times slower, and every
# task's steps spread (lognormal, sigma 0.5). Six strategies:
#   sync all-reduce (a global batch of 256: 64 a replica), its gradient in
#   buckets of 64 KiB, reduced after the backward pass or beside it
#   (overlap);
#   a sync parameter server, with and without a backup worker (3 of 4
#   pushes a step), and an async one, free or bounded to 1 step of
#   staleness (64 a worker, one server).
# Two sweeps, one report. About 4 minutes on 2 cores.
#   experiments/when_async_pays.sh [OUT]      (default: runs/when-async-pays)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/when-async-pays}
slowdowns='[],[{task: worker:2, factor: 1.5}],[{task: worker:1, factor: 1.5}, {task: worker:2, factor: 1.5}],[{lognormal_sigma: 0.5}]'
common=(--set cluster.workers=3 --set training.eval_every=25 --set training.eval_examples=2000
  --vary "slowdowns=$slowdowns")
./sweep scenarios/mnist_cnn_sync.yaml "${common[@]}" --set training.batch_size=256 \
  --set strategy.bucket_bytes=65536 --vary strategy.overlap=false,true --out "$out/allreduce"
./sweep scenarios/mnist_cnn_sync.yaml "${common[@]}" --set training.batch_size=64 \
  --set strategy.name=parameter_server --set cluster.ps=1 \
  --vary 'strategy={name: parameter_server, mode: sync},{name: parameter_server, mode: sync, replicas_to_aggregate: 3},{name: parameter_server, mode: async},{name: parameter_server, mode: async, staleness_bound: 1}' \
  --out "$out/parameter-server"
./report "$out/allreduce" "$out/parameter-server" --out "$out/report"
