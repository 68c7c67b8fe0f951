#!/usr/bin/env bash
# The ./simulate program as a user meets it: help, bad input (exit 2 naming
# the file and key), a short full-fidelity run and the files it leaves, the
# same run again giving the same weights, and a timing-fidelity run.
# Usage: simulate_cli_test.sh PATH/TO/distlab-simulate SOURCE_DIR
set -euo pipefail
simulate=$(realpath "$1")
src=$(realpath "$2")
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"
cd "$work"  # so that nothing lands in the caller's folder (runs/ by default)

# sim ARGS...: runs ./simulate with stdout in $work/out, stderr in $work/err,
# and its exit status in $rc.
sim() {
  rc=0
  "$simulate" "$@" >"$work/out" 2>"$work/err" || rc=$?
}

has() { grep -qF -- "$1" "$2"; }         # has TEXT FILE
has_re() { grep -qE -- "$1" "$2"; }      # has_re REGEX FILE
# py FILE EXPRESSION: EXPRESSION, in Python, is true of the JSON document d
# read from FILE (false too when FILE is missing or does not parse).
py() {
  "$python" -c 'import json, math, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" 2>/dev/null
}
# field FILE KEY: the summary's value for KEY, exactly (repr), or a line
# saying it is missing.
field() {
  "$python" -c 'import json, sys; print(repr(json.load(open(sys.argv[1]))[sys.argv[2]]))' \
    "$1" "$2" 2>/dev/null || echo "no $2 in $1"
}
show_err() { sed 's/^/    stderr: /' "$work/err"; }

ps=$src/scenarios/ps_4workers.yaml
small=(--set data=synthetic-taxi:3000 --set training.epochs=1)

# --- help -------------------------------------------------------------------
sim --help
check "--help exits 0" test "$rc" -eq 0
check "... mentions --set" has "--set" "$work/out"
check "... mentions --fidelity" has "--fidelity" "$work/out"
check "... mentions --out" has "--out" "$work/out"
check "... shows an example" has "./simulate scenarios/" "$work/out"
check "... explains DISTLAB_ISA" has "DISTLAB_ISA=" "$work/out"

# --- bad input: exit 2, saying where -------------------------------------------
sim
check "no scenario exits 2" test "$rc" -eq 2
check "... saying the scenario is required" has "scenario is required" "$work/err"

sim "$work/missing.yaml"
check "a missing scenario file exits 2" test "$rc" -eq 2
check "... naming the file" has "missing.yaml: cannot open the file" "$work/err"

sim "$ps" --set foo
check "--set without '=' exits 2" test "$rc" -eq 2
check "... quoting it and saying KEY=VALUE" has_re "--set foo.*KEY=VALUE" "$work/err"

sim "$ps" --set training.epochs=abc
check "--set training.epochs=abc exits 2" test "$rc" -eq 2
check "... naming the file and the key" has "ps_4workers.yaml: training.epochs" "$work/err"
check "... and the bad value" has "abc" "$work/err"

sim "$ps" --fidelity fast
check "--fidelity fast exits 2" test "$rc" -eq 2
check "... naming the option, the value and the choices" \
  has_re "--fidelity.*fast.*full.*timing" "$work/err"

before=$failures
sim "$ps" --set cluster.machine=n1-standard-5
check "an unknown machine type exits 2" test "$rc" -eq 2
check "... naming the file and the machine type" \
  has_re "ps_4workers\.yaml.*n1-standard-5|n1-standard-5.*ps_4workers\.yaml" "$work/err"
# The user set cluster.machine; the message should name that key, not one the
# scenario does not have (cluster.chief_machine), and offer the close name.
check "... naming the key that was set, cluster.machine" \
  has_re "cluster\.machine([^_]|$)" "$work/err"
check "... suggesting n1-standard-4" has "n1-standard-4" "$work/err"
[ "$failures" -eq "$before" ] || show_err

before=$failures
rc=0
DISTLAB_ISA=x86-64-v9 "$simulate" "$ps" >"$work/out" 2>"$work/err" || rc=$?
check "an unknown DISTLAB_ISA exits 2" test "$rc" -eq 2
check "... naming it and the levels built" \
  has "DISTLAB_ISA=x86-64-v9 is not a level of this build (built: " "$work/err"
[ "$failures" -eq "$before" ] || show_err

# --- a short full-fidelity run ------------------------------------------------
run1=$work/run1
sim "$ps" "${small[@]}" --quiet --out "$run1"
check "a short full-fidelity run exits 0" test "$rc" -eq 0
[ "$rc" -eq 0 ] || show_err
check "... prints nothing on stdout with --quiet" test ! -s "$work/out"
for f in summary.json steps.csv curve.csv timeline.json; do
  check "... writes $f" test -s "$run1/$f"
done
s=$run1/summary.json
check "... summary.json parses" py "$s" "isinstance(d, dict)"
check "... scenario is ps_4workers" py "$s" "d['scenario'] == 'ps_4workers'"
check "... strategy is the parameter server" py "$s" "'parameter_server' in d['strategy']"
check "... fidelity is full" py "$s" "d['fidelity'] == 'full'"
check "... weights_sha256 is 64 hex digits" \
  py "$s" "len(d['weights_sha256']) == 64 and all(c in '0123456789abcdef' for c in d['weights_sha256'])"
check "... final_accuracy is between 0 and 1" py "$s" "0 <= d['final_accuracy'] <= 1"
check "... simulated_seconds is positive" py "$s" "d['simulated_seconds'] > 0"
check "... 6 tasks (chief, 4 workers, ps)" py "$s" "len(d['tasks']) == 6"
check "... isa names the kernels' level, the same in every task" \
  py "$s" "d['isa'] in ('x86-64', 'x86-64-v3', 'x86-64-v4', 'native') and all(t['isa'] == d['isa'] for t in d['tasks'])"
check "... steps.csv has its header" grep -qs "^task,step," "$run1/steps.csv"
check "... steps.csv has rows for ps:0 with a staleness" "$python" -c 'import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["task"] == "ps:0"]
sys.exit(0 if rows and any(r["staleness"] != "" for r in rows) else 1)' "$run1/steps.csv" 2>/dev/null
check "... curve.csv has a header and a row" test "$(cat "$run1/curve.csv" 2>/dev/null | wc -l)" -ge 2
check "... timeline.json has traceEvents" \
  py "$run1/timeline.json" "isinstance(d['traceEvents'], list) and len(d['traceEvents']) > 0"

# --- the same run again, without --quiet --------------------------------------
run2=$work/run2
sim "$ps" "${small[@]}" --out "$run2"
check "the same run again exits 0" test "$rc" -eq 0
check "... gives the same weights_sha256" test \
  "$(field "$run1/summary.json" weights_sha256)" = "$(field "$run2/summary.json" weights_sha256)"
check "... and the same simulated_seconds" test \
  "$(field "$run1/summary.json" simulated_seconds)" = "$(field "$run2/summary.json" simulated_seconds)"
check "... without --quiet shows the summary table's header" has_re "^task +host" "$work/out"
check "... with a row for chief:0" has_re "^chief:0 " "$work/out"
check "... and the kernels' level" has_re "^backend .*, kernels [a-z0-9-]+$" "$work/out"
check "... and says where it wrote" has "wrote $run2/{summary.json" "$work/out"

# --- a timing-fidelity run ----------------------------------------------------
run3=$work/run3
sim "$src/scenarios/timing_1024_workers.yaml" --set cluster.workers=15 --quiet --out "$run3"
check "a timing-fidelity run exits 0" test "$rc" -eq 0
[ "$rc" -eq 0 ] || show_err
check "... prints nothing on stdout with --quiet" test ! -s "$work/out"
s=$run3/summary.json
check "... fidelity is timing" py "$s" "d['fidelity'] == 'timing'"
check "... weights_sha256 is null" py "$s" "'weights_sha256' in d and d['weights_sha256'] is None"
check "... final_accuracy is null" py "$s" "'final_accuracy' in d and d['final_accuracy'] is None"
check "... 16 tasks (chief + 15 workers)" py "$s" "len(d['tasks']) == 16"

echo "$failures failed"
exit $((failures > 0))
