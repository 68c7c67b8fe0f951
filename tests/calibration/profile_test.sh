#!/usr/bin/env bash
# ./calibrate --scenario as a user meets it: it runs the scenario's model
# for real in three small shapes (a ring of two, a ring of four, the chief
# with one parameter server), keeps the runs beside the overlay under the model's
# name and fingerprint, and ./simulate then charges that model's phases
# what they cost there, on machine local with one_host placement only, and
# not for a changed model or with --no-profile.
# Usage: profile_test.sh PATH/TO/distlab-calibrate PATH/TO/distlab-simulate SOURCE_DIR
set -euo pipefail
calibrate=$(realpath "$1")
simulate=$(realpath "$2")
src=$(realpath "$3")
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"
cd "$work"
# The profiles go beside the overlay: here, not in the source tree.
export DISTLAB_MACHINES_OVERLAY=$work/machines.local.yaml

run() {
  rc=0
  "$@" >"$work/out" 2>"$work/err" || rc=$?
}
has() { grep -qF -- "$1" "$2"; }
show_err() { sed 's/^/    stderr: /' "$work/err"; }
# py FILE EXPRESSION: EXPRESSION is true of the JSON document d in FILE.
py() {
  "$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" 2>/dev/null
}

ps=$src/scenarios/ps_4workers.yaml
local_one_host=(--set cluster.machine=local --set cluster.placement=one_host --fidelity timing
  --set training.epochs=1)

run "$calibrate" --scenario "$ps" --threads 1
check "./calibrate --scenario exits 0" test "$rc" -eq 0 || show_err
check "... profiling a ring of two" has "profiling ring-2 on this machine: 200 steps of taxi_wide_deep.yaml, 1 thread a task" "$work/err"
check "... and the chief with a parameter server" has "profiling ps-2 on this machine" "$work/err"
profile=$(ls -d "$work"/profiles/taxi_wide_deep-*)
check "... into profiles/<model>-<fingerprint> beside the overlay" test -d "$profile"
check "... saying where" has "wrote the profile to $profile" "$work/err"
check "the ring of two is a real run of 2 tasks" \
  py "$profile/ring-2/summary.json" 'd["backend"] == "realnet" and len(d["tasks"]) == 2 and d["steps"] == 200'
check "the other is the chief and one server" \
  py "$profile/ps-2/summary.json" 'sorted(t["role"] for t in d["tasks"]) == ["chief", "ps"]'
check "the ring of four is 4 tasks" py "$profile/ring-4/summary.json" 'len(d["tasks"]) == 4'
check "profile.json says how each run was made" \
  py "$profile/profile.json" '[r["run"] for r in d["runs"]] == ["ring-2", "ring-4", "ps-2"] and d["threads"] == 1 and all(r["command"].startswith("./realnet --launch ") for r in d["runs"])'
check "nothing partial is left" test -z "$(ls -d "$profile"/*.partial "$profile"/*.log 2>/dev/null)"

run "$simulate" "$ps" "${local_one_host[@]}" --out sim
check "./simulate on local, one_host, exits 0" test "$rc" -eq 0 || show_err
check "... saying the profile is used" has "each phase costs what the profile of taxi_wide_deep.yaml measured here ($profile" "$work/err"
check "... which summary.json keeps" \
  py sim/summary.json "sorted(d['calibrated_from']['runs']) == ['$profile/ps-2', '$profile/ring-2', '$profile/ring-4'] and 'server' in d['calibrated_from']"
check "... with scales that grow or shrink with the tasks computing at once" \
  py sim/summary.json "any('scale_per_neighbour' in v for v in d['calibrated_from']['replica'].values())"

check "... and the fit is kept in the profile" \
  py "$profile/fitted.json" '"key" in d and "replica" in d["costs"]'
run "$simulate" "$ps" "${local_one_host[@]}" --out again
check "a second simulation gives the same steps" cmp -s sim/steps.csv again/steps.csv
# The kept fit is what a simulation uses while the profile is unchanged...
"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["costs"]["replica"]["forward"]["scale"] = 99
json.dump(d, open(sys.argv[1], "w"))' "$profile/fitted.json"
run "$simulate" "$ps" "${local_one_host[@]}" --out kept
check "... the kept fit is used" py kept/summary.json 'd["calibrated_from"]["replica"]["forward"]["scale"] == 99'
# ... and is fitted again once a run of the profile changes.
echo " " >>"$profile/ring-2/summary.json"
run "$simulate" "$ps" "${local_one_host[@]}" --out refitted
check "... until a run of the profile changes" cmp -s sim/steps.csv refitted/steps.csv

run "$simulate" "$ps" "${local_one_host[@]}" --no-profile --out plain
check "--no-profile: the model's costs" py plain/summary.json '"calibrated_from" not in d'
check "... and no note" test -z "$(grep -F "profile of" "$work/err" || true)"
check "the profile changed the simulated time" \
  "$python" -c 'import json, sys
a, b = (json.load(open(f + "/summary.json"))["simulated_seconds"] for f in sys.argv[1:])
sys.exit(0 if a != b else 1)' sim plain

run "$simulate" "$ps" --fidelity timing --set training.epochs=1 --out elsewhere
check "on another machine type, no profile" py elsewhere/summary.json '"calibrated_from" not in d'

# The same model with one more comment is another model file: not profiled.
mkdir -p changed/models
cp "$ps" changed/
cp "$src/scenarios/models/taxi_wide_deep.yaml" changed/models/
echo "# changed" >>changed/models/taxi_wide_deep.yaml
run "$simulate" changed/ps_4workers.yaml "${local_one_host[@]}" --out changed-run
check "a changed model is not the profiled one" py changed-run/summary.json '"calibrated_from" not in d'

# --- what it refuses ----------------------------------------------------------
run "$calibrate" --scenario "$work/missing.yaml"
check "a missing scenario exits 2" test "$rc" -eq 2
run "$calibrate" --scenario "$src/scenarios/mirrored_4gpu.yaml"
check "a GPU scenario exits 2" test "$rc" -eq 2
check "... saying a profile is of the CPU" has "trains on GPUs; a profile measures training on this machine's CPU" "$work/err"

echo "$failures failed"
exit $((failures > 0))
