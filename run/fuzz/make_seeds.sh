#!/usr/bin/env bash
# Writes scenario_fuzz's seeds (run/fuzz/scenario_fuzz.cc) into FOLDER from
# the files the repository ships: every scenario with its model spec beside
# it, every model spec alone, the test suite's bad scenarios and specs (the
# errors' paths), and a few written here for what those leave out
# (overrides, faults, a scenario read as ./realnet reads it). Run by
# tools/fuzz --seeds.
# Usage: run/fuzz/make_seeds.sh FOLDER
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
mkdir -p "$out"

# scenario SEED MODE FILE MODEL [OVERRIDES]: a scenario seed. Its model key
# names model.yaml, the file the target writes MODEL's text to beside it.
scenario() {
  local seed=$1 mode=$2 file=$3 model=$4 overrides=${5:-}
  {
    printf "\\x$mode"
    sed 's|^model:.*|model: model.yaml|' "$file"
    printf '\0'
    cat "$model"
    if [ -n "$overrides" ]; then
      printf '\0%s' "$overrides"
    fi
  } >"$out/$seed.bin"
}

# model SEED FILE: a model spec alone.
model() {
  {
    printf '\x00'
    cat "$2"
  } >"$out/$1.bin"
}

for file in "$root"/scenarios/*.yaml; do
  name=$(basename "$file" .yaml)
  [ "$name" = machines ] && continue
  spec=$(sed -n 's|^model: *||p' "$file")
  scenario "scenario_$name" 01 "$file" "$root/scenarios/$spec"
done
for file in "$root"/scenarios/models/*.yaml; do
  model "model_$(basename "$file" .yaml)" "$file"
done
for file in "$root"/tests/nn/bad_specs/*.yaml; do
  model "bad_spec_$(basename "$file" .yaml)" "$file"
done
for file in "$root"/tests/run/bad_scenarios/*.yaml; do
  scenario "bad_scenario_$(basename "$file" .yaml)" 01 "$file" \
    "$root/scenarios/models/mnist_cnn.yaml"
done

# A small scenario and model of every section, read with and without the
# machine types, and changed by overrides (a new strategy, steps in place
# of epochs, a key removed).
small=$(mktemp)
small_model=$(mktemp)
trap 'rm -f "$small" "$small_model"' EXIT
cat >"$small" <<'YAML'
description: every section, small
model: model.yaml
data: synthetic-taxi:200
seed: 7
fidelity: timing
cluster: {machine: n1-standard-4, chief: 1, workers: 2, ps: 1, ps_machine: n1-highmem-8}
strategy: {name: parameter_server, mode: sync, segment_bytes: 4096, gradient_dtype: bfloat16}
training: {batch_size: 8, epochs: 2, eval_every: 5, eval_examples: 20, train_examples: 100}
input_pipeline:
  measured_ghz: 2.45
  stages: {decode_jpeg: 1283, resize: 1140}
  offline: [decode_jpeg]
  preprocessed: false
checkpoint: {every_steps: 10, every_seconds: 1.5, keep: 2}
faults:
  - {task: worker:1, at_step: 3}
  - {task: ps:0, at_seconds: 0.5}
  - {machine: n1-standard-4, mtbf_hours: 0.01}
recovery: {max_restarts: 2, detect_seconds: 1, restart_seconds: 2}
network: {latency_us: 20, bandwidth_gbps: 10, model: lv08}
YAML
cat >"$small_model" <<'YAML'
name: small
input: [4, 4, 2]
classes: 3
batch_size: 8
layers:
  - conv2d: {filters: 2, kernel: [3, 3], strides: 1, padding: same, activation: relu}
  - branches:
      combine: sum
      paths:
        - []
        - [{batch_norm: {momentum: 0.9}}, {relu: }]
  - pad_channels: {before: 1, after: 1}
  - average_pool2d: {pool: 2}
  - max_pool2d: {pool: [1, 1], padding: same}
  - global_average_pool2d:
  - dropout: {rate: 0.25}
  - dense: {units: 3, kernel_regularizer: {l2: 0.001}, name: logits}
optimizer:
  per_layer:
    - layers: [logits]
      ftrl: {learning_rate: 0.01}
    - adam: {learning_rate: 0.001}
reduce_lr_on_plateau: {factor: 0.5, patience: 2}
YAML
scenario small_simulate 01 "$small" "$small_model"
scenario small_realnet 02 "$small" "$small_model"
scenario small_overrides 01 "$small" "$small_model" \
  $'strategy.name=allreduce\ntraining.steps=3\n-faults\nnetwork.model=cm02\n'
