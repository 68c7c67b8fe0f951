#!/usr/bin/env bash
# A run directory is never overwritten, and a run resumed in place ends
# with the records of the run that never stopped. For ./simulate,
# ./realnet --launch and ./train:
#   - an --out that holds a run is refused (exit 2) and left as it was;
#   - --resume DIR --out DIR continues DIR: the steps (task, step, loss) and
#     the final weights are those of the uninterrupted run, every
#     evaluation of it is in curve.csv, summary.json lists both segments,
#     and segments/1/ keeps the first one's summary;
#   - a third segment joins the first two.
# Usage: resume_in_place_test.sh SIMULATE REALNET TRAIN SOURCE_DIR
set -euo pipefail
simulate=$1 realnet=$2 train=$3 src=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
source "$src/tests/support/check.sh"

scenario=$src/scenarios/mnist_cnn_sync.yaml
# 10 steps of a global batch of 128, a checkpoint every 2 and an evaluation
# every 4: the first segment stops at step 5, between both.
small=(--set training.train_examples=2560 --set training.eval_every=4
  --set training.eval_examples=200 --set checkpoint.every_steps=2 --quiet)
run() {  # backend, steps, then options
  local backend=$1 steps=$2
  shift 2
  if [ "$backend" = simulate ]; then
    "$simulate" "$scenario" "${small[@]}" --set training.steps="$steps" "$@"
  else
    "$realnet" --launch "$scenario" "${small[@]}" --set training.steps="$steps" "$@"
  fi
}
field() {  # run directory, summary.json key
  "$py" -c 'import json, sys; print(json.load(open(sys.argv[1] + "/summary.json"))[sys.argv[2]])' \
    "$1" "$2"
}
rows() {  # the steps' task, step and loss
  cut -d, -f1,2,12 "$1/steps.csv"
}
# Every evaluation of the uninterrupted run (step, losses, accuracy) is in
# the continued run's curve (which also holds the first segment's last).
curve_holds() {  # continued, whole
  "$py" - "$1/curve.csv" "$2/curve.csv" <<'PY'
import csv, sys
key = lambda r: (r["step"], r["train_loss"], r["test_loss"], r["test_accuracy"])
continued = {key(r) for r in csv.DictReader(open(sys.argv[1]))}
whole = [key(r) for r in csv.DictReader(open(sys.argv[2]))]
sys.exit(0 if whole and all(r in continued for r in whole) else 1)
PY
}

for backend in simulate realnet; do
  whole=$work/$backend-whole part=$work/$backend-part
  run $backend 10 --out "$whole"
  run $backend 5 --out "$part"
  first_summary=$(cat "$part/summary.json")

  status=0
  run $backend 10 --out "$part" 2>"$work/refused.err" || status=$?
  check "$backend: an --out holding a run is refused with exit 2" [ "$status" = 2 ]
  check "$backend: saying why" grep -q "never overwritten" "$work/refused.err"
  check "$backend: and the run is left as it was" \
    [ "$(cat "$part/summary.json")" = "$first_summary" ]

  run $backend 10 --resume "$part" --out "$part"
  check "$backend: the continued run has the uninterrupted run's steps and losses" \
    diff <(rows "$part") <(rows "$whole")
  check "$backend: and its weights" \
    [ "$(field "$part" weights_sha256)" = "$(field "$whole" weights_sha256)" ]
  check "$backend: and every evaluation" curve_holds "$part" "$whole"
  check "$backend: summary.json describes both segments" \
    [ "$("$py" -c 'import json, sys; s = json.load(open(sys.argv[1]))
print(len(s["segments"]), s["segments"][1]["start_step"], s["start_step"], s["steps"])' \
      "$part/summary.json")" = "2 5 0 10" ]
  check "$backend: segments/1 keeps the first segment's summary" \
    [ "$(cat "$part/segments/1/summary.json")" = "$first_summary" ]
  check "$backend: the timeline holds both" "$py" -c '
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
assert any(e["ph"] == "i" and e["name"].startswith("segment 2") for e in events)' \
    "$part/timeline.json"
done

# realnet's task folder of the first segment is kept.
check "realnet: the first segment's task reports are kept" \
  test -s "$work/realnet-part/segments/1/tasks/chief-0.json"

# A third segment, by ./simulate.
run simulate 12 --resume "$work/simulate-part" --out "$work/simulate-part"
check "a third segment joins the first two" [ "$(field "$work/simulate-part" steps)" = 12 ]
check "and keeps its own summary" test -s "$work/simulate-part/segments/3/summary.json"
check "with every step once and the steps redone nowhere" \
  [ "$(awk -F, '$1 == "chief:0"' "$work/simulate-part/steps.csv" | wc -l)" = 12 ]

# ./train: epochs instead of steps.
data=(--data synthetic:2000 --quiet)
"$train" "${data[@]}" --epochs 3 --out "$work/train-whole"
"$train" "${data[@]}" --epochs 1 --checkpoint-every 1 --out "$work/train-part"
status=0
"$train" "${data[@]}" --epochs 3 --out "$work/train-part" 2>"$work/refused.err" || status=$?
check "train: an --out holding a run is refused with exit 2" [ "$status" = 2 ]
"$train" "${data[@]}" --epochs 3 --resume "$work/train-part" --out "$work/train-part"
check "train: the continued run has every epoch of the uninterrupted one" \
  diff <(cut -d, -f1,2,4,5,6,7 "$work/train-part/curve.csv") \
  <(cut -d, -f1,2,4,5,6,7 "$work/train-whole/curve.csv")
check "train: and its weights" \
  [ "$(field "$work/train-part" weights_sha256)" = "$(field "$work/train-whole" weights_sha256)" ]
check "train: summary.json lists every epoch and both segments" \
  [ "$("$py" -c 'import json, sys; s = json.load(open(sys.argv[1]))
print(len(s["epochs"]), len(s["segments"]))' "$work/train-part/summary.json")" = "3 2" ]
check "train: segments/1 keeps the first segment's summary" \
  test -s "$work/train-part/segments/1/summary.json"
exit $failures
