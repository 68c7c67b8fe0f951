#!/usr/bin/env bash
# A run's final weights, model.safetensors: written beside summary.json by
# ./simulate, readable by other tools (safetensors, with the spec inside),
# and evaluated by ./train --evaluate to the accuracy the run reported.
# Usage: model_file_test.sh PATH/TO/distlab-simulate PATH/TO/distlab-train SOURCE_DIR
set -u
simulate=$1
train=$2
src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"
python=/usr/bin/python3

# An asynchronous parameter server: the chief is worker 0, and its replica's
# weights are what it evaluated at the end. The whole test split, so that
# ./train --evaluate sees the same examples.
"$simulate" "$src/scenarios/ps_4workers.yaml" --set data=synthetic-taxi:3000 \
  --set training.epochs=1 --set training.eval_examples=0 --quiet --out "$work/run" \
  >"$work/out" 2>"$work/err"
check "a full-fidelity run exits 0" test $? -eq 0
check "... and writes model.safetensors" test -s "$work/run/model.safetensors"

# The safetensors layout, read as any tool would: an 8-byte length, a JSON
# header, the tensors.
check "... whose tensors are the weights alone, with the spec in its metadata" "$python" -c '
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    (n,) = struct.unpack("<Q", f.read(8))
    header = json.loads(f.read(n))
meta = header.pop("__metadata__")
names = list(header)
info = json.loads(meta["distlab"])
ok = (meta["format"] == "distlab-model-1"
      and names and all(k.startswith(("params/", "state/")) for k in names)
      and "params/dense_1/kernel" in names
      and "name: taxi_wide_deep" in info["model_spec"]
      and info["run"]["scenario"] == "ps_4workers")
sys.exit(0 if ok else 1)' "$work/run/model.safetensors"

"$train" --evaluate "$work/run" >"$work/out" 2>"$work/err"
check "./train --evaluate of the run directory exits 0" test $? -eq 0
want=$("$python" -c 'import json, sys; print("%.4f" % json.load(open(sys.argv[1]))["final_accuracy"])' \
  "$work/run/summary.json")
check "... on the run's own data, with the spec from the file" \
  grep -q "on the 500 test examples of synthetic-taxi:3000" "$work/out"
check "... and finds the accuracy the run reported ($want)" grep -q "test accuracy $want " "$work/out"

"$train" --evaluate "$work/run" "$src/scenarios/models/mnist_cnn.yaml" >"$work/out" 2>"$work/err"
check "another model's spec exits 2" test $? -eq 2
check "... saying the layers differ" grep -q "a model of other layers" "$work/err"
"$simulate" "$src/scenarios/ps_4workers.yaml" --resume "$work/run/model.safetensors" \
  >"$work/out" 2>"$work/err"
check "resuming from a model file exits 2" test $? -eq 2
check "... saying it is no checkpoint" grep -q "not a checkpoint" "$work/err"

exit $((failures > 0))
