#!/usr/bin/env bash
# A cluster started task by task, as cloud nodes start it (./realnet --role
# with a cluster file), leaves the run directory at its chief: every other
# task sends its report to the chief over the run's connections, and keeps
# it in a temporary folder too. The chief's directory is --launch's: the
# same files, and the same weights for the same scenario.
# Usage: role_run_directory_test.sh REALNET SOURCE_DIR
set -euo pipefail
realnet=$(realpath "$1") src=$2
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
# The tasks' temporary folders go under the test's own.
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
py=/usr/bin/python3
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"
port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# run_cluster DIR SCENARIO "ROLE:INDEX ..." CHIEF_ARGS -- OVERRIDES...: writes
# DIR/cluster.yaml with a free loopback port per task, starts every task in
# the background (stdout to DIR/ROLE-INDEX.out, stderr to .err; the chief
# also gets CHIEF_ARGS and runs in DIR; a task named in task_args gets its
# words too) and waits for them all; the statuses go to DIR/status, one
# "ROLE:INDEX STATUS" line each.
declare -A task_args=()
run_cluster() {
  local dir=$1 scenario=$2 tasks=$3 chief_args=$4
  shift 5
  mkdir -p "$dir"
  local chief="" worker="" ps=""
  for task in $tasks; do
    local address="\"127.0.0.1:$(port)\""
    case $task in
      chief:*) chief+="${chief:+, }$address" ;;
      worker:*) worker+="${worker:+, }$address" ;;
      ps:*) ps+="${ps:+, }$address" ;;
    esac
  done
  {
    echo "cluster:"
    [ -n "$chief" ] && echo "  chief: [$chief]"
    [ -n "$worker" ] && echo "  worker: [$worker]"
    [ -n "$ps" ] && echo "  ps: [$ps]"
  } >"$dir/cluster.yaml"
  local pids=()
  for task in $tasks; do
    local role=${task%:*} index=${task#*:} extra=${task_args[$task]:-}
    [ "$role" = chief ] && extra+=" $chief_args"
    # shellcheck disable=SC2086  # CHIEF_ARGS are words
    (cd "$dir" && exec "$realnet" --role "$role" --index "$index" --cluster "$dir/cluster.yaml" \
      --scenario "$scenario" --timeout 60 "$@" $extra \
      >"$dir/$role-$index.out" 2>"$dir/$role-$index.err") &
    pids+=($!)
  done
  : >"$dir/status"
  local i=0
  for task in $tasks; do
    set +e
    wait "${pids[$i]}"
    echo "$task $?" >>"$dir/status"
    set -e
    i=$((i + 1))
  done
}
all_zero() { ! grep -qv ' 0$' "$1"; }
status_of() { sed -n "s/^$2 //p" "$1"; }

# Chief + 2 workers, synchronous all-reduce: deterministic, so its weights
# are --launch's, bit for bit. A global batch of 48, 16 a replica: 8 steps.
sync_set=(--set cluster.workers=2 --set data=synthetic:600 --set training.train_examples=384
  --set training.batch_size=48 --set training.eval_every=4 --set training.eval_examples=100)
sync=$work/sync
run_cluster "$sync" "$src/scenarios/mnist_cnn_sync.yaml" "chief:0 worker:0 worker:1" \
  "--out $sync/run" -- "${sync_set[@]}"
check "a 3-task --role cluster ends with status 0 on every task" all_zero "$sync/status"
check "the chief leaves a complete run directory" "$py" - "$sync/run" <<'PY'
import csv, json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
assert s["backend"] == "realnet", s["backend"]
assert s["fidelity"] == "full", s["fidelity"]
assert len(s["tasks"]) == 3, len(s["tasks"])
assert s["steps"] == 8, s["steps"]
assert len(s["weights_sha256"]) == 64 and all(c in "0123456789abcdef" for c in s["weights_sha256"])
assert "--role chief" in s["command"], s["command"]
with open(d + "/steps.csv") as f:
    tasks = {r["task"] for r in csv.DictReader(f)}
assert tasks == {"chief:0", "worker:0", "worker:1"}, tasks
with open(d + "/curve.csv") as f:
    assert len(list(csv.DictReader(f))) > 0
json.load(open(d + "/timeline.json"))
PY
check "... and says so, with the summary table" \
  bash -c "grep -q 'wrote $sync/run/{summary.json' '$sync/chief-0.out' && grep -q 'worker:1' '$sync/chief-0.out'"
for i in 0 1; do
  kept=$(sed -n 's/.*report kept in \(.*\)$/\1/p' "$sync/worker-$i.out")
  check "worker:$i prints where it keeps its report, a temporary folder" \
    bash -c "[ -n '$kept' ] && [[ '$kept' == '$TMPDIR'/distlab-mnist_cnn_sync-worker-$i-*/report.json ]]"
  check "... and the report is there, its own" "$py" - "$kept" "$i" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["role"] == "worker" and r["index"] == int(sys.argv[2]), (r["role"], r["index"])
assert len(r["steps"]) == 8, len(r["steps"])
PY
done
check "the chief keeps no temporary report" \
  bash -c "! ls '$TMPDIR' | grep -q chief"

status=0
"$realnet" --role chief --cluster "$sync/cluster.yaml" --scenario "$src/scenarios/mnist_cnn_sync.yaml" \
  --timeout 5 --out "$sync/run" "${sync_set[@]}" >/dev/null 2>"$sync/again.err" || status=$?
check "a chief given the --out of an earlier run refuses it (exit 2) before connecting" \
  bash -c "[ $status = 2 ] && grep -q 'never overwritten' '$sync/again.err'"

"$realnet" --launch "$src/scenarios/mnist_cnn_sync.yaml" "${sync_set[@]}" --quiet \
  --out "$work/launched"
check "... with --launch's weights and the same rows" "$py" - "$sync/run" "$work/launched" <<'PY'
import csv, json, sys
a, b = (json.load(open(d + "/summary.json")) for d in sys.argv[1:3])
assert a["weights_sha256"] == b["weights_sha256"], (a["weights_sha256"], b["weights_sha256"])
assert a["steps"] == b["steps"] and a["replicas"] == b["replicas"], (a["steps"], b["steps"])
def rows(d):
    with open(d + "/steps.csv") as f:
        return sorted((r["task"], int(r["step"]), int(r["bytes_sent"])) for r in csv.DictReader(f))
assert rows(sys.argv[1]) == rows(sys.argv[2])
PY
check "--launch's tasks keep no temporary reports (the launcher gathers them)" \
  bash -c "[ \$(ls '$TMPDIR' | wc -l) -eq 2 ]"

# Chief + worker + PS (asynchronous): the PS, which serves until the chief
# is done, sends its report too. No --out: runs/<scenario>-<time>/ where
# the chief runs.
ps=$work/ps
run_cluster "$ps" "$src/scenarios/ps_4workers.yaml" "chief:0 worker:0 ps:0" "" -- \
  --set cluster.workers=1 --set data=synthetic-taxi:3000 --set training.train_examples=1536 \
  --set training.epochs=2 --set training.eval_every=0
check "a chief + worker + ps cluster ends with status 0 on every task" all_zero "$ps/status"
check "the chief gathers the PS's report too, under runs/" "$py" - "$ps" <<'PY'
import glob, json, sys
found = glob.glob(sys.argv[1] + "/runs/ps_4workers-*/summary.json")
assert len(found) == 1, found
s = json.load(open(found[0]))
roles = [(t["role"], t["index"]) for t in s["tasks"]]
assert roles == [("chief", 0), ("worker", 0), ("ps", 0)], roles
pushes = sum(t["updates"] for t in s["tasks"] if t["role"] != "ps")
applied = sum(t["updates"] for t in s["tasks"] if t["role"] == "ps")
assert pushes == applied == 24, (pushes, applied)
assert len(s["weights_sha256"]) == 64
PY
check "... and the PS kept its report in a temporary folder" \
  bash -c "grep -q 'report kept in $TMPDIR/distlab-ps_4workers-ps-0-' '$ps/ps-0.out'"

# A worker killed once it has trained, before it sends its report (kill -9,
# as a failing machine has it) and never restarted: the chief, done
# training, waits --rejoin-wait (2 s) for it to come back, then writes the
# run directory without its report and exits with status 1, long before
# --timeout (60 s here, 600 by default). 240 steps a worker: long enough
# that every task has connected before worker:1 is gone (a task lost while
# its peers still connect is waited for until --connect-timeout).
# run_losing_worker1 DIR HOOK: chief + 2 workers + PS, asynchronous, 240
# steps a worker, worker:1 killed by HOOK; --rejoin-wait 2 everywhere. Sets
# `elapsed` to the seconds the whole cluster took.
run_losing_worker1() {
  local dir=$1 hook=$2 started=$SECONDS
  task_args=([worker:1]="$hook")
  run_cluster "$dir" "$src/scenarios/ps_4workers.yaml" "chief:0 worker:0 worker:1 ps:0" \
    "--out $dir/run" -- --rejoin-wait 2 \
    --set cluster.workers=2 --set data=synthetic-taxi:3072 --set training.epochs=30 \
    --set training.eval_every=0
  elapsed=$((SECONDS - started))
  task_args=()
}
missing=$work/missing
run_losing_worker1 "$missing" --crash-before-report
check "the chief of a run that lost a worker's report exits with status 1" \
  test "$(status_of "$missing/status" chief:0)" = 1
check "... within seconds of its training, not at --timeout (took ${elapsed}s)" test "$elapsed" -lt 45
check "... the killed worker died by its signal, the others ended well" bash -c \
  "[ \"\$(sed -n 's/^worker:1 //p' '$missing/status')\" = 137 ] &&
   [ \"\$(grep -c ' 0\$' '$missing/status')\" = 2 ]"
check "... and names the missing report" grep -q "the report of worker:1 is missing" \
  "$missing/chief-0.err"
check "... in the run directory it writes with every other report" "$py" - "$missing/run" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
missing = s["missing_reports"]
assert [m["task"] for m in missing] == ["worker:1"], missing
assert "left the run" in missing[0]["reason"], missing[0]
roles = [(t["role"], t["index"]) for t in s["tasks"]]
assert roles == [("chief", 0), ("worker", 0), ("worker", 1), ("ps", 0)], roles
assert s["tasks"][2]["steps"] == 0, s["tasks"][2]  # its report is its name alone
assert s["tasks"][1]["steps"] > 0 and s["tasks"][0]["steps"] > 0
PY

# A worker killed mid-run (at its step 120 of 240) and never restarted:
# the asynchronous run goes on without it; the PS, once --rejoin-wait has
# passed, counts it as stopped and gives the chief the final shard, rather
# than waiting for it until --timeout.
midrun=$work/midrun
run_losing_worker1 "$midrun" "--crash-at-step 120"
check "a worker killed mid-run and never back: the run ends in seconds (took ${elapsed}s)" \
  test "$elapsed" -lt 45
check "... the chief exits with status 1, naming its report missing" bash -c \
  "[ \"\$(sed -n 's/^chief:0 //p' '$midrun/status')\" = 1 ] &&
   grep -q 'the report of worker:1 is missing' '$midrun/chief-0.err'"
check "... the PS and the other worker end well" bash -c \
  "[ \"\$(sed -n 's/^ps:0 //p' '$midrun/status')\" = 0 ] &&
   [ \"\$(sed -n 's/^worker:0 //p' '$midrun/status')\" = 0 ]"
check "... and the chief's run has the final weights" "$py" - "$midrun/run" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
assert [m["task"] for m in s["missing_reports"]] == ["worker:1"], s["missing_reports"]
assert len(s["weights_sha256"]) == 64, s["weights_sha256"]
PY

exit $failures
