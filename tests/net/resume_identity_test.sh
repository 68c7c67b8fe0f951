#!/usr/bin/env bash
# Resume continuity, bit for bit: a synchronous run of two epochs and a run
# of one epoch resumed to two end with the same weights, in ./simulate, in
# ./realnet, and across them (a checkpoint written by one backend resumed
# by the other). The model is the CIFAR-10 MLP lab's: Adam's moments and
# step count, BatchNorm's moving statistics and dropout's masks must all
# come back. Also: a corrupt newest checkpoint is skipped and named, a
# named corrupt file is refused (exit 2), and the checkpoint is on the
# timeline.
# Usage: resume_identity_test.sh SIMULATE REALNET SOURCE_DIR
set -euo pipefail
simulate=$1 realnet=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
source "$src/tests/support/check.sh"

scenario=$src/scenarios/cifar10_mlp_sync.yaml
# A global batch of 384, 128 a replica: 7 steps an epoch of the 2,500
# training examples.
small=(--set data=synthetic:3000 --set training.batch_size=384 --set training.eval_every=0 --quiet)
run() {  # backend, run directory, then options
  local backend=$1 out=$2
  shift 2
  if [ "$backend" = sim ]; then
    "$simulate" "$scenario" "${small[@]}" --out "$work/$out" "$@"
  else
    "$realnet" --launch "$scenario" "${small[@]}" --out "$work/$out" "$@"
  fi
}
field() {  # run directory, summary.json key
  "$py" -c 'import json, sys; print(json.load(open(sys.argv[1] + "/summary.json"))[sys.argv[2]])' \
    "$work/$1" "$2"
}

run sim whole --set training.epochs=2
expected=$(field whole weights_sha256)
run sim first-sim --set training.epochs=1 --checkpoint-every 3
run real first-real --set training.epochs=1 --checkpoint-every 3
run sim sim-sim --set training.epochs=2 --resume "$work/first-sim"
run real real-real --set training.epochs=2 --resume "$work/first-real"
run real sim-real --set training.epochs=2 --resume "$work/first-sim"
run sim real-sim --set training.epochs=2 --resume "$work/first-real"

for resumed in sim-sim real-real sim-real real-sim; do
  check "$resumed: the resumed run ends with the uninterrupted run's weights" \
    [ "$(field $resumed weights_sha256)" = "$expected" ]
  check "$resumed: it starts at the checkpoint's step" [ "$(field $resumed start_step)" = 7 ]
  check "$resumed: steps.csv goes on from step 7" \
    [ "$(awk -F, 'NR == 2 { print $2 }' "$work/$resumed/steps.csv")" = 7 ]
done
check "both backends wrote the same checkpoint files" \
  cmp -s <(cd "$work/first-sim/checkpoints" && ls) <(cd "$work/first-real/checkpoints" && ls)
check "the timeline shows the chief's checkpoints" \
  grep -q '"cat":"checkpoint"' "$work/first-real/timeline.json"

# The NumPy lines of docs/checkpoints.md read a checkpoint's weights.
snippet=$(sed -n '/^```python$/,/^```$/p' "$src/docs/checkpoints.md" | sed '1d;$d' |
  sed "s|runs/a/checkpoints/step-000000100.safetensors|$work/first-sim/checkpoints/step-000000007.safetensors|")
check "docs/checkpoints.md's NumPy lines load every weight of a checkpoint" "$py" -c "$snippet
import numpy as np
assert weights['params/dense_1/kernel'].shape == (3072, 300), weights['params/dense_1/kernel'].shape
assert len(weights) == 18 and all(np.isfinite(w).all() for w in weights.values())"

# A corrupt newest checkpoint: resuming from the run directory takes the
# previous one (step 6), names the corrupt file, and still ends the same.
cp -r "$work/first-real" "$work/damaged"
newest=$work/damaged/checkpoints/step-000000007.safetensors
# One byte of a weight near the end: only the checksum can tell.
printf 'X' | dd of="$newest" bs=1 seek=$(($(stat -c %s "$newest") - 1000)) conv=notrunc status=none
"$simulate" "$scenario" --set data=synthetic:3000 --set training.batch_size=384 \
  --set training.eval_every=0 --set training.epochs=2 --resume "$work/damaged" \
  --out "$work/after-damage" 2>"$work/damage.err" >/dev/null
check "a corrupt newest checkpoint is named" grep -q "skipped $newest: corrupt" "$work/damage.err"
check "the previous checkpoint is used" [ "$(field after-damage start_step)" = 6 ]
check "and the run still ends with the same weights" \
  [ "$(field after-damage weights_sha256)" = "$expected" ]

status=0
"$realnet" --launch "$scenario" "${small[@]}" --resume "$newest" --out "$work/refused" \
  2>"$work/refused.err" || status=$?
check "a named corrupt checkpoint is refused with exit 2" [ "$status" = 2 ]
check "and its name" grep -q "step-000000007.safetensors: corrupt" "$work/refused.err"
exit $failures
