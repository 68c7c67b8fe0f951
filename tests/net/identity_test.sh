#!/usr/bin/env bash
# The product's strongest test: the same scenario and seed, simulated in
# full fidelity and run over real sockets, end with the same weights (bit
# for bit) and the same bytes per task per step, every process running the
# same ISA level of the NN kernels: the best this CPU runs, and the
# baseline x86-64 level when DISTLAB_ISA asks every process for it.
# Usage: identity_test.sh SIMULATE REALNET SOURCE_DIR
set -euo pipefail
simulate=$1 realnet=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
failures=0

real_flags=()  # ./realnet's own flags, beyond the overrides both take
in_place=0     # 1: every real task reads payloads in its senders' memory
compare() {  # name, DISTLAB_ISA ("" for the best level), then the overrides
  local name=$1 isa=$2
  shift 2
  DISTLAB_ISA=$isa "$simulate" "$src/scenarios/mnist_cnn_sync.yaml" "$@" --quiet \
    --out "$work/$name-sim"
  DISTLAB_ISA=$isa "$realnet" --launch "$src/scenarios/mnist_cnn_sync.yaml" "$@" --quiet \
    ${real_flags[@]+"${real_flags[@]}"} --out "$work/$name-real"
  if "$py" - "$work/$name-sim" "$work/$name-real" "$isa" "$in_place" <<'PY'
import csv, json, sys
sim, real = (json.load(open(d + "/summary.json")) for d in sys.argv[1:3])
problems = []
# One level in every task of both runs: DISTLAB_ISA's when it is set.
levels = {t["isa"] for run in (sim, real) for t in run["tasks"]} | {sim["isa"], real["isa"]}
wanted = sys.argv[3]
if len(levels) != 1 or (wanted and levels != {wanted}):
    problems.append(f"kernels' ISA levels: {sorted(levels)}, wanted {wanted or 'one level'}")
if sim["weights_sha256"] is None or sim["weights_sha256"] != real["weights_sha256"]:
    problems.append(f"weights: simulate {sim['weights_sha256']}, realnet {real['weights_sha256']}")
def bytes_per_step(d):
    with open(d + "/steps.csv") as f:
        return sorted((r["task"], int(r["step"]), int(r["bytes_sent"]), int(r["bytes_received"]))
                      for r in csv.DictReader(f))
a, b = bytes_per_step(sys.argv[1]), bytes_per_step(sys.argv[2])
dropped = [[t.get("gradients_dropped") for t in run["tasks"]] for run in (sim, real)]
if dropped[0] != dropped[1]:
    problems.append(f"gradients dropped per task: simulate {dropped[0]}, realnet {dropped[1]}")
if not a or a != b:
    problems.append(f"bytes per task per step differ ({len(a)} rows against {len(b)})")
in_place = [[t["payloads_read_in_place"] for t in run["tasks"]] for run in (sim, real)]
if any(in_place[0]) or (any(in_place[1]) if sys.argv[4] == "0" else not all(in_place[1])):
    problems.append(f"payloads read in place per task: simulate {in_place[0]}, realnet {in_place[1]}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"same weights {sim['weights_sha256'][:16]}..., same bytes in {len(a)} task-steps, "
      f"{sim['isa']} kernels in every task")
PY
  then
    echo "ok: $name"
  else
    echo "FAILED: $name"
    failures=$((failures + 1))
  fi
}

small=(--set training.train_examples=1536 --set training.eval_examples=500 --set training.eval_every=0)
compare "chief+1" "" "${small[@]}"
compare "chief+4" "" "${small[@]}" --set cluster.workers=4 --set training.batch_size=32
compare "chief+1-x86-64" x86-64 "${small[@]}"
# Half-precision gradients: rounded by the strategy, packed two to a word on
# the wire, read back the same on both backends.
compare "chief+2-float16" "" "${small[@]}" --set cluster.workers=2 \
  --set strategy.gradient_dtype=float16
compare "ps-sync-bfloat16" "" "${small[@]}" --set cluster.workers=2 --set cluster.ps=1 \
  --set strategy.name=parameter_server --set strategy.mode=sync \
  --set strategy.gradient_dtype=bfloat16
# Messages cut into many segments: the ring's (posted receives into the
# gradient, sends from it) and two servers' shards and float16 pushes.
compare "chief+2-segmented" "" "${small[@]}" --set cluster.workers=2 \
  --set strategy.segment_bytes=8192
compare "ps-sync-segmented-float16" "" "${small[@]}" --set cluster.workers=2 --set cluster.ps=2 \
  --set strategy.name=parameter_server --set strategy.mode=sync \
  --set strategy.gradient_dtype=float16 --set strategy.segment_bytes=16384
# Backup workers under a fixed arrival order: worker:1, slowed 30 times,
# ends its first step after the others' last, so that push is dropped and
# its later ones are applied alone (tests/sim/backup_workers_test.cc).
compare "ps-sync-backup" "" "${small[@]}" --set cluster.workers=2 --set cluster.ps=1 \
  --set strategy.name=parameter_server --set strategy.mode=sync \
  --set strategy.replicas_to_aggregate=2 --set 'slowdowns=[{task: worker:1, factor: 30}]'
# Gradients that travel while the backward pass goes on: buckets from the
# last layers' down (one worker slowed, its background thread holding a
# core for the extra), and each server's shard pushed once final.
compare "chief+2-overlap" "" "${small[@]}" --set cluster.workers=2 \
  --set strategy.overlap=true --set strategy.bucket_bytes=131072 \
  --set 'slowdowns=[{task: worker:1, factor: 2}]'
compare "ps-sync-overlap" "" "${small[@]}" --set cluster.workers=2 --set cluster.ps=2 \
  --set strategy.name=parameter_server --set strategy.mode=sync --set strategy.overlap=true
# A plateau schedule that halves the rate at every epoch after the first:
# the chief's decision reaches the other replicas (all-reduce) and the
# servers (parameter server) at the same step on both backends.
plateau=$work/mnist_cnn_plateau.yaml
{
  cat "$src/scenarios/models/mnist_cnn.yaml"
  echo "reduce_lr_on_plateau: {factor: 0.5, patience: 0, min_delta: 100}"
} >"$plateau"
compare "chief+1-plateau" "" "${small[@]}" --set model="$plateau" --set training.epochs=3
compare "ps-sync-plateau" "" "${small[@]}" --set model="$plateau" --set training.epochs=3 \
  --set cluster.workers=2 --set cluster.ps=1 --set strategy.name=parameter_server \
  --set strategy.mode=sync
# Payloads read in the sending process's memory rather than over loopback
# TCP: the ring's segments and the servers' shards arrive as they left.
real_flags=(--same-host-reads)
in_place=1
compare "chief+2-same-host" "" "${small[@]}" --set cluster.workers=2
compare "ps-sync-same-host" "" "${small[@]}" --set cluster.workers=2 --set cluster.ps=2 \
  --set strategy.name=parameter_server --set strategy.mode=sync
exit $failures
