#!/usr/bin/env bash
# Failures under ./realnet --launch: a task killed by a scenario's fault or
# by a real kill -9 is recovered from, as a restart policy would. The run
# finishes with restarts >= 1 and at most one checkpoint interval of steps
# lost, and a synchronous run ends with the weights of the run that never
# failed. Parameter-server runs survive a worker's and a server's death,
# and a worker's that comes while the tasks connect. A task that dies once
# its goodbyes are done is not restarted: its report is named missing.
# Usage: failure_test.sh REALNET SOURCE_DIR
set -euo pipefail
realnet=$1 src=$2
work=$(mktemp -d)
trap 'pkill -9 -f "$work" 2>/dev/null || true; rm -rf "$work"' EXIT
py=/usr/bin/python3
source "$src/tests/support/check.sh"

field() {  # run directory, summary.json key
  "$py" -c 'import json, sys; print(json.load(open(sys.argv[1] + "/summary.json"))[sys.argv[2]])' \
    "$work/$1" "$2"
}
recovered() {  # run directory, checkpoint interval: restarts >= 1, lost <= interval
  [ "$(field "$1" restarts)" -ge 1 ] && [ "$(field "$1" lost_steps)" -le "$2" ]
}

cnn=$src/scenarios/mnist_cnn_sync.yaml
small=(--set training.train_examples=6000 --set training.eval_every=0
       --set training.eval_examples=500 --quiet)
"$realnet" --launch "$cnn" "${small[@]}" --out "$work/whole"
expected=$(field whole weights_sha256)

# A scenario's fault: worker:0 dies as it begins step 25.
"$realnet" --launch "$cnn" "${small[@]}" --checkpoint-every 10 \
  --set 'faults=[{task: worker:0, at_step: 25}]' --out "$work/fault"
check "sync, a fault: restarts >= 1, at most one interval lost" recovered fault 10
check "sync, a fault: the weights of the run that never failed" \
  [ "$(field fault weights_sha256)" = "$expected" ]

# A real kill -9 of the worker's process, once a checkpoint exists.
"$realnet" --launch "$cnn" "${small[@]}" --checkpoint-every 10 --out "$work/kill" &
launcher=$!
for _ in $(seq 600); do
  [ -n "$(ls "$work/kill/checkpoints" 2>/dev/null)" ] && break
  sleep 0.05
done
worker=$(pgrep -f -- "--report $work/kill/tasks/worker-0.json" | head -1 || true)
check "sync, kill -9: the worker's process was found" [ -n "$worker" ]
[ -n "$worker" ] && kill -9 "$worker"
wait "$launcher"
check "sync, kill -9: restarts >= 1, at most one interval lost" recovered kill 10
check "sync, kill -9: the weights of the run that never failed" \
  [ "$(field kill weights_sha256)" = "$expected" ]

# Parameter servers, async: a worker's death (it rejoins alone) and the
# server's (every task rolls back).
ps=$src/scenarios/ps_4workers.yaml
ps_small=(--set data=synthetic-taxi:19200 --set training.epochs=1 --set training.eval_every=0
          --set training.eval_examples=500 --checkpoint-every 5 --quiet)
"$realnet" --launch "$ps" "${ps_small[@]}" --out "$work/ps-whole"
steps=$(field ps-whole steps)
"$realnet" --launch "$ps" "${ps_small[@]}" --set 'faults=[{task: worker:2, at_step: 12}]' \
  --out "$work/ps-worker"
check "async PS, a worker dies: the job finishes, restarts >= 1" recovered ps-worker 5
check "async PS, a worker dies: every step is done" [ "$(field ps-worker steps)" = "$steps" ]
check "async PS, a worker dies: it rejoins alone, the others go on" "$py" - "$work/ps-worker" <<'PY'
import csv, json, sys
run = sys.argv[1]
summary = json.load(open(run + "/summary.json"))
assert [f["recovery"] for f in summary["failures"]] == ["rejoin"], summary["failures"]
rows = list(csv.DictReader(open(run + "/steps.csv")))
steps = {}
for r in rows:
    steps.setdefault(r["task"], []).append(int(r["step"]))
# Nobody went back: each worker's steps run on to the end (./realnet keeps
# a task's last life: worker:2's from the step it died at), and the server
# applied one push per step of every worker.
n = summary["steps"]
workers = [t for t in steps if not t.startswith("ps")]
for t in workers:
    first = 12 if t == "worker:2" else 0
    assert steps[t] == list(range(first, n)), (t, steps[t][:20])
assert len(steps["ps:0"]) == len(workers) * n, (len(steps["ps:0"]), n)
PY
"$realnet" --launch "$ps" "${ps_small[@]}" --set 'faults=[{task: ps:0, at_step: 60}]' \
  --out "$work/ps-server"
check "async PS, the server dies: rollback, at most one interval lost" recovered ps-server 5
check "async PS, the server dies: every step is done" [ "$(field ps-server steps)" = "$steps" ]

# A worker killed while the tasks are still connecting: the server's dial
# to its first life retries into the second, which dials the server too.
# The two connections cross; both ends keep the one the worker dialled.
"$realnet" --launch "$ps" "${ps_small[@]}" --set 'faults=[{task: worker:1, at_seconds: 0.2}]' \
  --timeout 60 --out "$work/ps-early"
check "async PS, a worker dies as the tasks connect: it rejoins, the run finishes" \
  recovered ps-early 5
check "async PS, a worker dies as the tasks connect: every step is done" \
  [ "$(field ps-early steps)" = "$steps" ]
# A late kill: a task that dies once its goodbyes are done (every server
# may have ended already) is not restarted, for it has nothing left to
# rejoin. The run directory is written with its report named missing, and
# the launcher exits with status 1. (A rejoining worker used to wait for
# servers that had ended and fail the run without a run directory; a sync
# run rolled back past its end and reported 0 steps.)
late() {  # run directory, scenario, task, arguments...
  local name=$1 scenario=$2 task=$3
  shift 3
  set +e
  "$realnet" --launch "$scenario" "$@" --crash-task-after-goodbye "$task" --out "$work/$name" \
    2>"$work/$name.err"
  echo $? >"$work/$name.status"
  set -e
}
report_missing() {  # run directory, task, the run's steps
  [ "$(cat "$work/$1.status")" = 1 ] &&
    grep -q "error: the report of $2 is missing" "$work/$1.err" &&
    "$py" - "$work/$1" "$2" "$3" <<'PY'
import csv, json, sys
run, task, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
summary = json.load(open(run + "/summary.json"))
assert [m["task"] for m in summary["missing_reports"]] == [task], summary["missing_reports"]
assert summary["restarts"] == 0 and summary["failures"] == [], summary["failures"]
assert summary["steps"] == steps, (summary["steps"], steps)
tasks = {r["task"] for r in csv.DictReader(open(run + "/steps.csv"))}
assert tasks and task not in tasks, tasks
PY
}
late late-ps "$ps" worker:1 "${ps_small[@]}"
check "async PS, a worker dies after its goodbyes: not restarted, its report missing, exit 1" \
  report_missing late-ps worker:1 "$steps"
late late-sync "$cnn" worker:0 "${small[@]}" --checkpoint-every 10
check "sync, a worker dies after its goodbyes: not restarted, its report missing, exit 1" \
  report_missing late-sync worker:0 "$(field whole steps)"
check "sync, a worker dies after its goodbyes: the weights of the run that never failed" \
  [ "$(field late-sync weights_sha256)" = "$expected" ]
exit $failures
