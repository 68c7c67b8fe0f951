#!/usr/bin/env bash
# ./simulate --calibrate-from as a user meets it: a real run's CPU time by
# phase, set against the simulation of its own scenario, scales the
# simulated work of another shape of the same model; and the runs it must
# refuse. The "real" run here is a simulated one relabelled, with its CPU
# times changed by known factors, so that the factors the fit must find are
# known exactly.
# Usage: calibrate_from_test.sh PATH/TO/distlab-simulate SOURCE_DIR
set -euo pipefail
simulate=$(realpath "$1")
src=$(realpath "$2")
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"
cd "$work"

sim() {
  rc=0
  "$simulate" "$@" >"$work/out" 2>"$work/err" || rc=$?
}
has() { grep -qF -- "$1" "$2"; }
# py EXPRESSION: true in Python, with s(DIR) a run's summary.json and
# cpu(DIR, ROLE, PHASE) its tasks' CPU seconds of PHASE added up.
py() {
  "$python" -c 'import json, math, sys
def s(d): return json.load(open(d + "/summary.json"))
def cpu(d, role, phase):
    return sum(t["phase_cpu_seconds"][phase] for t in s(d)["tasks"]
               if (t["role"] == "ps") == (role == "ps"))
def steps(d, role):
    return sum(t["steps"] for t in s(d)["tasks"] if (t["role"] == "ps") == (role == "ps"))
sys.exit(0 if eval(sys.argv[1]) else 1)' "$1"
}
show_err() { sed 's/^/    stderr: /' "$work/err"; }

ps=$src/scenarios/ps_4workers.yaml
# 12,800 examples: whole batches of 128 for 2 replicas and for 5, so that
# no partial batch at the end spreads the simulated steps.
small=(--set data=synthetic-taxi:12800 --set training.epochs=1 --fidelity timing)

# The reference: the scenario with one worker, simulated, then made into a
# "real" run whose replicas' forward passes took twice the simulated CPU,
# and 50 ms more at each replica's first step, whose server's updates took
# three times, whose backward passes took 1.3 and 0.7 times the simulated
# CPU in turn (a spread of 0.31 in the logarithm, the same mean), and whose
# batches took 0.1 ms of CPU each to gather (which the model does not
# time); summary.json and steps.csv alike.
sim "$ps" "${small[@]}" --set cluster.workers=1 --quiet --out ref
check "the reference simulates" test "$rc" -eq 0
cp -r ref real
"$python" - real <<'PY'
import csv, json, sys
folder = sys.argv[1]
d = json.load(open(folder + "/summary.json"))
d["backend"] = "realnet"
for t in d["tasks"]:
    cpu = t["phase_cpu_seconds"]
    if t["role"] == "ps":
        cpu["optimizer"] *= 3
    else:
        cpu["forward"] = 2 * cpu["forward"] + 0.05
        cpu["input"] = 1e-4 * t["steps"]
rows = list(csv.DictReader(open(folder + "/steps.csv")))
first = set()
backward_rows = {}
for r in rows:
    if r["task"].startswith("ps:"):
        continue
    n = backward_rows.get(r["task"], 0)
    if n > 0:
        multiplier = 1.3 if n % 2 else 0.7
        r["phase_backward_cpu_seconds"] = repr(multiplier * float(r["phase_backward_cpu_seconds"]))
    backward_rows[r["task"]] = n + 1
for t in d["tasks"]:
    if t["role"] != "ps":
        t["phase_cpu_seconds"]["backward"] = sum(
            float(r["phase_backward_cpu_seconds"]) for r in rows if r["task"] == t["task"])
json.dump(d, open(folder + "/summary.json", "w"))
for r in rows:
    if r["task"].startswith("ps:"):
        r["phase_optimizer_cpu_seconds"] = repr(3 * float(r["phase_optimizer_cpu_seconds"]))
    else:
        forward = 2 * float(r["phase_forward_cpu_seconds"])
        if r["task"] not in first and forward > 0:
            first.add(r["task"])
            forward += 0.05
        r["phase_forward_cpu_seconds"] = repr(forward)
        r["phase_input_cpu_seconds"] = "0.0001"
with open(folder + "/steps.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
PY

# The target: another shape of the same model (four workers).
sim "$ps" "${small[@]}" --quiet --out plain
check "the target simulates without measured costs" test "$rc" -eq 0
sim "$ps" "${small[@]}" --calibrate-from real --out calibrated
check "--calibrate-from a real run exits 0" test "$rc" -eq 0 || show_err
check "... and says what it measured" has "measured costs: replicas: input 0.100 ms of CPU, forward x2.00" "$work/err"
check "... the servers' too" has "parameter servers: optimizer x3.00" "$work/err"
check "summary.json keeps the factors and the run" \
  py 's("calibrated")["calibrated_from"]["runs"] == ["real"] and abs(s("calibrated")["calibrated_from"]["replica"]["forward"]["scale"] - 2) < 1e-9'
check "... the servers' update x3" \
  py 'abs(s("calibrated")["calibrated_from"]["server"]["optimizer"]["scale"] - 3) < 1e-9'
check "the replicas' forward passes cost twice the CPU, and 50 ms more the first time" \
  py 'abs(cpu("calibrated", "replica", "forward") - (2 * cpu("plain", "replica", "forward") + 5 * 0.05)) < 1e-6'
check "... which summary.json keeps" \
  py 'abs(s("calibrated")["calibrated_from"]["replica"]["forward"]["first_cpu_seconds"] - 0.05) < 1e-9'
check "the server's updates three times" \
  py 'abs(cpu("calibrated", "ps", "optimizer") / cpu("plain", "ps", "optimizer") - 3) < 1e-6'
check "the backward passes spread as the real ones, 0.31 in the logarithm" \
  py 'abs(s("calibrated")["calibrated_from"]["replica"]["backward"]["spread"] - 0.31) < 0.03'
check "... about the model's mean" \
  py 'abs(s("calibrated")["calibrated_from"]["replica"]["backward"]["scale"] - 1) < 0.03'
check "... and so do the simulated ones" "$python" - calibrated/steps.csv <<'PY'
import csv, math, statistics, sys
logs = {}
for r in csv.DictReader(open(sys.argv[1])):
    if not r["task"].startswith("ps:"):
        logs.setdefault(r["task"], []).append(math.log(float(r["phase_backward_cpu_seconds"])))
spreads = [statistics.pstdev(v[1:]) for v in logs.values()]
sys.exit(0 if abs(statistics.mean(spreads) - 0.31) < 0.06 else 1)
PY
check "... their mean the model's" \
  py 'abs(cpu("calibrated", "replica", "backward") / cpu("plain", "replica", "backward") - 1) < 0.1'
check "the forward passes do not spread" \
  py '"spread" not in s("calibrated")["calibrated_from"]["replica"]["forward"]'
sim "$ps" "${small[@]}" --calibrate-from real --quiet --out again
check "the same seed gives the same steps" cmp -s calibrated/steps.csv again/steps.csv
sim "$ps" "${small[@]}" --calibrate-from real --quiet --seed 7 --out other-seed
check "another seed, other steps" \
  py 'cpu("other-seed", "replica", "backward") != cpu("calibrated", "replica", "backward")'
check "each batch now costs 0.1 ms of CPU to gather" \
  py 'abs(cpu("calibrated", "replica", "input") - 1e-4 * steps("calibrated", "replica")) < 1e-9 and cpu("plain", "replica", "input") == 0'
check "and the run takes longer" \
  py 's("calibrated")["simulated_seconds"] > s("plain")["simulated_seconds"]'
check "a run without --calibrate-from has no calibrated_from" py '"calibrated_from" not in s("plain")'

# --- what it refuses ----------------------------------------------------------
sim "$ps" "${small[@]}" --calibrate-from ref --quiet --out x1
check "a simulated run is refused (exit 2)" test "$rc" -eq 2
check "... saying it takes a real one" has "ref: --calibrate-from takes a real run (./realnet); this one is from ./simulate" "$work/err"

sim "$src/scenarios/mnist_cnn_sync.yaml" --fidelity timing --calibrate-from real --quiet --out x2
check "a run of another model is refused (exit 2)" test "$rc" -eq 2
check "... naming both models" has "real trained models/taxi_wide_deep.yaml, the scenario trains mnist_cnn.yaml" "$work/err"

mkdir empty
sim "$ps" "${small[@]}" --calibrate-from empty --quiet --out x3
check "a folder that is not a run is refused (exit 2)" test "$rc" -eq 2
check "... saying so" has "empty: not a run directory (no summary.json)" "$work/err"

cp -r real old
"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
for t in d["tasks"]: del t["phase_cpu_seconds"]
json.dump(d, open(sys.argv[1], "w"))' old/summary.json
sim "$ps" "${small[@]}" --calibrate-from old --quiet --out x4
check "a run made before CPU time by phase is refused (exit 2)" test "$rc" -eq 2
check "... saying to run it again" has "has no phase_cpu_seconds" "$work/err"

sim "$ps" "${small[@]}" --calibrate-from "$work/missing" --quiet --out x5
check "a missing folder is refused (exit 2)" test "$rc" -eq 2

echo "$failures failed"
exit $((failures > 0))
