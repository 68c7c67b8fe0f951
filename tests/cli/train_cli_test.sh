#!/usr/bin/env bash
# The ./train program as a user meets it: help, bad input (exit 2 with the
# place of the problem), and a short run that leaves its files behind.
# Usage: train_cli_test.sh PATH/TO/distlab-train SOURCE_DIR
set -u
train=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"

"$train" --help >"$work/help" 2>&1
check "--help exits 0" test $? -eq 0
check "... and shows examples and data sources" grep -q "synthetic-taxi\[:N\]" "$work/help"

"$train" --no-such-option >"$work/out" 2>"$work/err"
check "an unknown option exits 2" test $? -eq 2
"$train" --epochs 0 >"$work/out" 2>"$work/err"
check "an option out of range exits 2" test $? -eq 2

"$train" "$work/missing.yaml" >"$work/out" 2>"$work/err"
check "a missing model exits 2" test $? -eq 2
check "... and names the file" grep -q "missing.yaml: cannot open the file" "$work/err"

"$train" "$src/tests/nn/bad_specs/unknown_key.yaml" >"$work/out" 2>"$work/err"
check "a broken model exits 2" test $? -eq 2
check "... with file, line and key" grep -q "unknown_key.yaml:5: layers\[0\].dense.activaton" "$work/err"

"$train" --data nonsense >"$work/out" 2>"$work/err"
check "an unknown data source exits 2" test $? -eq 2

"$train" "$src/scenarios/models/cifar10_mlp.yaml" --data fashion-mnist >"$work/out" 2>"$work/err"
check "data of the wrong shape exit 2" test $? -eq 2
check "... saying what the model expects" grep -q "expects (32, 32, 3)" "$work/err"

"$train" "$src/scenarios/models/taxi_wide_deep.yaml" --data synthetic:100 >"$work/out" 2>"$work/err"
check "data that do not fit the model's embeddings exit 2" test $? -eq 2
check "... naming the column and the vocabulary" grep -q "not an id below its vocabulary" "$work/err"

"$train" "$src/scenarios/models/mnist_cnn.yaml" --data synthetic:600 --epochs 2 \
  --train-examples 300 --batch 50 --out "$work/run" >"$work/out" 2>"$work/err"
check "a short run succeeds" test $? -eq 0
check "... prints one line per epoch" test "$(grep -c '^epoch [12]: ' "$work/out")" -eq 2
check "... on the examples and batch asked for" grep -q "300 examples, batch 50" "$work/out"
check "... with 6 steps an epoch" test "$(tail -1 "$work/run/curve.csv" | cut -d, -f2)" -eq 12
check "... writes curve.csv with a header and two epochs" test "$(wc -l <"$work/run/curve.csv")" -eq 3
check "... writes summary.json with the final accuracy" grep -q '"final_accuracy"' "$work/run/summary.json"
check "... and the final weights, model.safetensors" test -s "$work/run/model.safetensors"
"$train" --evaluate "$work/run/model.safetensors" >"$work/out" 2>"$work/err"
check "--evaluate exits 0" test $? -eq 0
want=$(/usr/bin/python3 -c 'import json, sys; print("%.4f" % json.load(open(sys.argv[1]))["final_accuracy"])' \
  "$work/run/summary.json")
check "... and finds the run's final accuracy ($want) on its data" \
  grep -q "test accuracy $want on the 100 test examples of synthetic:600" "$work/out"
"$train" --evaluate "$work/run" --data synthetic:1200 --seed 1 >"$work/out" 2>"$work/err"
check "... or on the data and seed given" grep -q "on the 200 test examples of synthetic:1200" "$work/out"
"$train" --evaluate "$work/nothing" >"$work/out" 2>"$work/err"
check "--evaluate of nothing exits 2" test $? -eq 2

# Checkpoints at epoch ends, and a resumed run that ends as the run that
# never stopped: the CIFAR-10 MLP, whose Adam moments, BatchNorm statistics,
# dropout masks and plateau schedule must all come back.
sha() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["weights_sha256"])' "$1"; }
mlp=("$src/scenarios/models/cifar10_mlp.yaml" --data synthetic:1200 --quiet)
"$train" "${mlp[@]}" --epochs 3 --out "$work/whole"
"$train" "${mlp[@]}" --epochs 1 --checkpoint-every 1 --out "$work/first"
check "a checkpoint is written at the epoch's end" test -f "$work/first/checkpoints/step-000000008.safetensors"
"$train" --evaluate "$work/first/checkpoints/step-000000008.safetensors" >"$work/out" 2>"$work/err"
check "--evaluate of a checkpoint exits 2, pointing to the model file" \
  grep -q "a checkpoint, not a model file" "$work/err"
"$train" "${mlp[@]}" --epochs 3 --resume "$work/first" --out "$work/resumed"
check "a resumed run ends with the weights of the run that never stopped" \
  test "$(sha "$work/resumed/summary.json")" = "$(sha "$work/whole/summary.json")"
check "... its curve goes on from epoch 2" test "$(sed -n 2p "$work/resumed/curve.csv" | cut -d, -f1)" = 2
# --steps: the lab's --train-steps. The MLP's epoch here is 8 steps (the
# checkpoint above), so 20 steps stop 4 into the third epoch, and 24 steps
# are the 3 epochs of the whole run.
"$train" "${mlp[@]:0:3}" --steps 20 --checkpoint-every 1 --out "$work/steps" >"$work/out" 2>&1
check "--steps runs" test $? -eq 0
check "... and says it replaces the epochs" grep -q "note: --steps 20 replaces the epochs: 2.50 passes" "$work/out"
check "... stopping part way through the third epoch" \
  test "$(tail -1 "$work/steps/curve.csv" | cut -d, -f1-2)" = "3,20"
check "... with a checkpoint at its last step" test -f "$work/steps/checkpoints/step-000000020.safetensors"
"$train" "${mlp[@]}" --steps 24 --resume "$work/steps" --out "$work/steps-resumed"
check "a run resumed from part way through an epoch ends as the run that never stopped" \
  test "$(sha "$work/steps-resumed/summary.json")" = "$(sha "$work/whole/summary.json")"
# Before the schedule's first observation its best loss is infinite, which
# JSON cannot hold: such a checkpoint was once unreadable.
"$train" "${mlp[@]}" --steps 3 --checkpoint-every 1 --out "$work/early"
"$train" "${mlp[@]:0:3}" --steps 24 --resume "$work/early" --out "$work/early-resumed" \
  >"$work/out" 2>&1
check "a checkpoint from before the first epoch's end resumes" \
  grep -q "resuming from .*step-000000003" "$work/out"
check "... to the run that never stopped" \
  test "$(sha "$work/early-resumed/summary.json")" = "$(sha "$work/whole/summary.json")"
"$train" "${mlp[@]}" --steps 20 --epochs 2 >"$work/out" 2>"$work/err"
check "--steps with --epochs exits 2" test $? -eq 2
"$train" "${mlp[@]}" --resume "$work/nothing" >"$work/out" 2>"$work/err"
check "resuming from nothing exits 2" test $? -eq 2
check "... saying so" grep -q "no such file or folder" "$work/err"
"$train" "$src/scenarios/models/mnist_cnn.yaml" --data synthetic:600 --resume "$work/first" \
  >"$work/out" 2>"$work/err"
check "a checkpoint of another model exits 2" test $? -eq 2


# A Keras model as it is (tests/data/keras): its layer table, then training.
"$train" "keras:$src/tests/data/keras/tfjs_mnist_cnn.json" --data synthetic:600 --steps 2 \
  --out "$work/keras" >"$work/out" 2>"$work/err"
check "a Keras export trains" test $? -eq 0
check "... after its layer table, with Keras' parameter count" \
  bash -c "grep -q 'Layer (type)' '$work/out' && grep -q 'Total params: 93322' '$work/out'"
sed 's/"Flatten"/"LSTM"/' "$src/tests/data/keras/tfjs_mnist_cnn.json" >"$work/lstm.json"
"$train" "$work/lstm.json" --data synthetic:600 --steps 2 >"$work/out" 2>"$work/err"
check "a Keras layer distlab does not have exits 2" test $? -eq 2
check "... naming the file, the layer, its class and its position" \
  bash -c "grep -q 'lstm.json: layer 6 .* (LSTM)' '$work/err'"

exit $((failures > 0))
