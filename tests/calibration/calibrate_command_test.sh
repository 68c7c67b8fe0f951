#!/usr/bin/env bash
# ./calibrate as a user meets it: a short calibration (the smallest budget)
# prints its fit tables and writes an overlay, a samples CSV and nothing in
# the disk folder; ./simulate then runs on `machine: local` with the
# overlay's figures (given with --machines, or by $DISTLAB_MACHINES_OVERLAY),
# and notes that local is uncalibrated without it; bad input is exit 2
# before anything is measured.
# Usage: calibrate_command_test.sh PATH/TO/distlab-calibrate PATH/TO/distlab-simulate SOURCE_DIR
set -euo pipefail
calibrate=$(realpath "$1")
simulate=$(realpath "$2")
src=$(realpath "$3")
# A sanitized build runs the probes' minimum steps many times slower: the
# time limit holds for a release build only.
build_kind=${4:-release}
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"
cd "$work"  # so that nothing lands in the caller's folder

# run PROGRAM ARGS...: stdout in $work/out, stderr in $work/err, the exit
# status in $rc and the wall time in milliseconds in $ms.
run() {
  local start
  start=$(date +%s%N)
  rc=0
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
}
has() { grep -qF -- "$1" "$2"; }  # has TEXT FILE
show() { sed 's/^/    stdout: /' "$work/out"; sed 's/^/    stderr: /' "$work/err"; }
# check_shown DESCRIPTION COMMAND...: check, showing the last run's output
# when it fails.
check_shown() {
  local before=$failures
  check "$@"
  [ "$failures" -eq "$before" ] || show
}

# --- A calibration at the smallest budget --------------------------------
overlay=$work/m.yaml
run "$calibrate" --budget 10 --threads 1 --out "$overlay" --disk-folder "$work/disk" \
  --samples "$work/samples.csv"
echo "    (./calibrate --budget 10 took $((ms / 1000)) s)"
check_shown "./calibrate --budget 10 --threads 1 exits 0" test "$rc" -eq 0
if [ "$build_kind" = release ]; then
  check "... in under a minute (it took ${ms} ms)" test "$ms" -lt 60000
fi
for word in "NN layer passes at 1 threads" dense convolution "Whole training steps" \
  Memory: "Loopback through TcpRuntime" "Loopback CPU per message" \
  "Disk (write, fsync, rename)" \
  "wrote $overlay"; do
  check "... and prints \"$word\"" has "$word" "$work/out"
done
check "... and notes its progress on stderr" has "measuring disk writes with fsync" "$work/err"
for text in "name: local" "name: local-calibrated" "compute:" "- threads: 1" "loopback:" \
  "dense:" "region_us:" "cpu_gb_per_s:"; do
  check "the overlay has \"$text\"" has "$text" "$overlay"
done
check "... and no draft is left beside it" \
  bash -c "[ \$(ls -A '$work' | grep -c draft) -eq 0 ]"
check "the samples CSV has its header and > 50 layer passes, each timed and predicted" \
  "$python" - "$work/samples.csv" <<'PY'
import csv, sys
with open(sys.argv[1]) as f:
    rows = list(csv.reader(f))
header = ["threads", "model", "layer", "kind", "flops", "bytes", "regions", "measured_seconds",
          "predicted_seconds"]
assert rows[0] == header, rows[0]
body = [dict(zip(header, r)) for r in rows[1:]]
assert len(body) > 50, len(body)
assert all(len(r) == len(header) for r in rows[1:])
kinds = {r["kind"] for r in body}
assert "dense" in kinds and kinds <= {"dense", "convolution", "embedding", "elementwise"}, kinds
assert all(float(r["measured_seconds"]) > 0 and float(r["predicted_seconds"]) >= 0 for r in body)
PY
check "the disk probe leaves its folder there, empty" \
  bash -c "[ -d '$work/disk' ] && [ -z \"\$(ls -A '$work/disk')\" ]"

# --- ./simulate on machine local, with and without the overlay -----------
sim_args=("$src/scenarios/mnist_cnn_sync.yaml" --set cluster.machine=local
  --set cluster.placement=one_host --fidelity timing --unset training.epochs
  --set training.steps=5)
# uses_overlay RUN_DIR: the run's summary shows the overlay's local machine.
uses_overlay() {
  "$python" - "$1/summary.json" "$overlay" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1]))
overlay = open(sys.argv[2]).read()
assert s["placement"]["kind"] == "one_host", s["placement"]
assert s["placement"]["threads_per_task"] == 1, s["placement"]  # the overlay's compute threads
assert s["steps"] == 5, s["steps"]
local = s["machines"]["local"]
assert "calibrated" in local["description"] and "uncalibrated" not in local["description"], local
nic = float(re.search(r"nic_gbps: ([0-9.]+)", overlay).group(1))
assert abs(local["nic_gbps"] - nic) < 1e-9, (local["nic_gbps"], nic)
assert s["simulated_seconds"] > 0, s["simulated_seconds"]
PY
}

run "$simulate" "${sim_args[@]}" --machines "$src/scenarios/machines.yaml" "$overlay" --quiet \
  --out "$work/run"
check_shown "./simulate --machines machines.yaml OVERLAY on local exits 0" test "$rc" -eq 0
if [ "$build_kind" = release ]; then
  check_shown "... quietly" bash -c "[ ! -s '$work/out' ] && [ ! -s '$work/err' ]"
else
  # AddressSanitizer warns on stderr about SimGrid's context switches.
  check_shown "... quietly" bash -c "[ ! -s '$work/out' ]"
fi
check "... with the overlay's local machine, placed one_host" uses_overlay "$work/run"

run "$simulate" "${sim_args[@]}" --machines "$src/scenarios/machines.yaml" "$overlay" \
  --out "$work/run-loud"
check_shown "... and, not --quiet, no note that local is uncalibrated" \
  bash -c "[ $rc -eq 0 ] && ! grep -q 'run ./calibrate' '$work/err'"

run env DISTLAB_MACHINES_OVERLAY="$overlay" "$simulate" "${sim_args[@]}" --quiet \
  --out "$work/run-env"
check_shown "\$DISTLAB_MACHINES_OVERLAY=OVERLAY, no --machines: exits 0" test "$rc" -eq 0
check "... with the overlay's local machine" uses_overlay "$work/run-env"

run "$simulate" "${sim_args[@]}" --machines "$src/scenarios/machines.yaml" --out "$work/run-base"
check_shown "without the overlay, ./simulate on local exits 0" test "$rc" -eq 0
check_shown "... noting on stderr that local's figures are rough: run ./calibrate" \
  bash -c "grep -q 'machine type local has rough figures.*run ./calibrate' '$work/err'"
check "... and its summary says local is uncalibrated" "$python" - "$work/run-base/summary.json" <<'PY'
import json, sys
local = json.load(open(sys.argv[1]))["machines"]["local"]
assert "uncalibrated" in local["description"], local
PY

# --- Bad input: exit 2, before measuring ---------------------------------
run "$calibrate" --budget 10 --threads 1 --out /nonexistent-dir/x.yaml --disk-folder "$work/disk2"
check_shown "--out in a folder that does not exist: exit 2" test "$rc" -eq 2
check_shown "... saying so" has "/nonexistent-dir does not exist" "$work/err"
check "... before measuring anything (${ms} ms, nothing measured, no disk folder made)" \
  bash -c "[ $ms -lt 5000 ] && ! grep -q measuring '$work/err' && [ ! -e '$work/disk2' ]"

run "$calibrate" --budget 1 --out "$work/b.yaml" --disk-folder "$work/disk3"
check_shown "--budget 1: exit 2, naming --budget" bash -c "[ $rc -eq 2 ] && grep -q -- --budget '$work/err'"
run "$calibrate" --threads 0 --out "$work/t.yaml" --disk-folder "$work/disk3"
check_shown "--threads 0: exit 2, naming --threads" bash -c "[ $rc -eq 2 ] && grep -q -- --threads '$work/err'"
check "... and neither writes an overlay or a disk folder" \
  bash -c "[ ! -e '$work/b.yaml' ] && [ ! -e '$work/t.yaml' ] && [ ! -e '$work/disk3' ]"

exit $failures
