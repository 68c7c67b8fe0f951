#!/usr/bin/env bash
# ./realnet as a user meets it: a launch to the end, the PS's updates equal
# to the workers' pushes, a task that dies, a peer that never comes, a
# stranger that sends garbage, bad input, and job descriptions (--emit).
# Usage: realnet_cli_test.sh REALNET SOURCE_DIR
set -euo pipefail
realnet=$1 src=$2
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
py=/usr/bin/python3
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"
contains() { grep -q -- "$2" "$1"; }

# --help and bad input.
"$realnet" --help >"$work/help" 2>&1
check "--help names --launch, --role, --cluster and TF_CONFIG" \
  bash -c "grep -q -- --launch '$work/help' && grep -q -- --role '$work/help' && grep -q -- --cluster '$work/help' && grep -q TF_CONFIG '$work/help'"
set +e
"$realnet" --launch "$work/missing.yaml" >/dev/null 2>"$work/err"; status=$?
set -e
check "a missing scenario exits 2" test "$status" -eq 2
check "... naming the file" contains "$work/err" "missing.yaml"
set +e
"$realnet" --scenario "$src/scenarios/ps_4workers.yaml" >/dev/null 2>"$work/err"; status=$?
set -e
check "a task without --cluster or TF_CONFIG exits 2" test "$status" -eq 2
check "... saying what to give" contains "$work/err" "TF_CONFIG"

# The taxi-tips lab to its end: every push applied.
"$realnet" --launch "$src/scenarios/ps_4workers.yaml" --set data=synthetic-taxi:3000 \
  --set training.epochs=1 --quiet --out "$work/ps"
check "ps_4workers runs to the end and the PS applies every push" "$py" - "$work/ps/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["backend"] == "realnet", s["backend"]
pushes = sum(t["updates"] for t in s["tasks"] if t["role"] != "ps")
applied = sum(t["updates"] for t in s["tasks"] if t["role"] == "ps")
assert pushes == applied and pushes > 0, (pushes, applied)
assert len(s["weights_sha256"]) == 64
for name in ("steps.csv", "curve.csv", "timeline.json"):
    open(sys.argv[1].replace("summary.json", name)).read()
PY
check "... and its chief leaves the final weights, model.safetensors" test -s "$work/ps/model.safetensors"
check "... and its steps split by phase, the phases adding up to each step, with CPU times" \
  "$py" - "$work/ps/steps.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
phases = [k for k in rows[0] if k.startswith("phase_") and not k.endswith("_cpu_seconds")]
assert len(phases) == 10, phases
cpu = [k.replace("_seconds", "_cpu_seconds") for k in phases]
for row in rows:
    seconds = [float(row[k]) for k in phases]
    length = float(row["end"]) - float(row["start"])
    assert abs(sum(seconds) - length) < 1e-6, (row["task"], row["step"], sum(seconds), length)
    assert min(seconds) >= -1e-9, (row["task"], row["step"], seconds)
    assert min(float(row[k]) for k in cpu) >= 0, (row["task"], row["step"])
workers = [r for r in rows if r["task"].startswith("worker")]
for phase in ("forward", "backward"):
    assert sum(float(r[f"phase_{phase}_seconds"]) for r in workers) > 0, phase
    # The process's CPU time while it computed: some, on any machine.
    assert sum(float(r[f"phase_{phase}_cpu_seconds"]) for r in workers) > 0, phase
servers = [r for r in rows if r["task"].startswith("ps")]
assert all(float(r["phase_optimizer_seconds"]) > 0 for r in servers)
PY

# The tasks start with glibc's settings that keep the memory they free
# (common/kept_memory.h): ./realnet restarts itself with them.
# (/proc shows the variable up to its first ':', where glibc's parsing cut
# it.)
"$realnet" --launch "$src/scenarios/ps_4workers.yaml" --set training.epochs=4 --quiet \
  --out "$work/tunables" &
launcher=$!
seen=no
for _ in $(seq 200); do
  for task in $(pgrep -P "$launcher" || true); do
    if tr '\0' '\n' < "/proc/$task/environ" 2>/dev/null |
      grep -q '^GLIBC_TUNABLES=glibc\.malloc\.mmap_max=0'; then
      seen=yes
    fi
  done
  [ "$seen" = yes ] && break
  sleep 0.02
done
wait "$launcher" || true
check "its tasks run with GLIBC_TUNABLES keeping freed memory" test "$seen" = yes

# One task alone (the local baseline): no peers, nothing to wait for.
"$realnet" --launch "$src/scenarios/local_baseline.yaml" --set training.train_examples=600 \
  --set training.eval_examples=200 --quiet --out "$work/local"
check "a one-task scenario runs under the launcher" test -s "$work/local/summary.json"

# More tasks than one machine should start are refused.
set +e
"$realnet" --launch "$src/scenarios/timing_1024_workers.yaml" >/dev/null 2>"$work/err"; status=$?
set -e
check "a 1,024-task launch is refused with exit 2" test "$status" -eq 2
check "... pointing to ./simulate" contains "$work/err" "./simulate"

# A task that dies: the launcher stops the others and names it.
mkdir -p "$work/nan"
sed 's/learning_rate: 0.01/learning_rate: 900/' "$src/scenarios/models/mnist_cnn.yaml" >"$work/nan/cnn.yaml"
cat >"$work/nan/diverges.yaml" <<'YAML'
model: cnn.yaml
data: synthetic:600
cluster: {machine: n1-standard-4, chief: 1, workers: 2}
strategy: {name: allreduce}
training: {batch_size: 16, steps: 30}
YAML
set +e
"$realnet" --launch "$work/nan/diverges.yaml" --quiet --out "$work/nan/run" >/dev/null 2>"$work/err"
status=$?
set -e
check "a failing task makes the launcher exit 1" test "$status" -eq 1
check "... naming the task and its last lines" \
  bash -c "grep -qE '(chief|worker):[0-9] failed' '$work/err' && grep -q 'training loss became' '$work/err'"

# A peer that never comes: the task names it after the connect deadline.
port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
p0=$(port) p1=$(port)
cat >"$work/cluster.yaml" <<YAML
cluster:
  chief: ["127.0.0.1:$p0"]
  worker: ["127.0.0.1:$p1"]
YAML
set +e
"$realnet" --role chief --cluster "$work/cluster.yaml" --scenario "$src/scenarios/mnist_cnn_sync.yaml" \
  --connect-timeout 1 --quiet >/dev/null 2>"$work/err"
status=$?
set -e
check "a peer that never comes fails the task" test "$status" -eq 1
check "... naming it and its address" contains "$work/err" "worker:0 at 127.0.0.1:$p1"

# A stranger sending garbage is turned away with a log line; the task goes on
# waiting for its real peer.
"$realnet" --role chief --cluster "$work/cluster.yaml" --scenario "$src/scenarios/mnist_cnn_sync.yaml" \
  --connect-timeout 4 --quiet >/dev/null 2>"$work/err" &
chief=$!
"$py" - "$p0" <<'PY'
import socket, sys, time
# The task listens once its data are loaded: keep trying for a while.
for attempt in range(300):
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        break
    except OSError:
        time.sleep(0.1)
s.sendall(b"GET / HTTP/1.1\r\n" + b"x" * 100)
s.settimeout(5)
try:
    s.recv(1)
except Exception:
    pass
PY
set +e
wait "$chief"
set -e
check "garbage is refused with a log line naming the problem" contains "$work/err" "magic"
check "... and the task still waits for its peer" contains "$work/err" "worker:0 at 127.0.0.1:$p1"

# A peer that disappears mid-run: its partner says who, doing what.
"$realnet" --role chief --cluster "$work/cluster.yaml" --scenario "$src/scenarios/mnist_cnn_sync.yaml" \
  --progress-lines --quiet >"$work/chief.out" 2>"$work/chief.err" &
chief=$!
"$realnet" --role worker --index 0 --cluster "$work/cluster.yaml" \
  --scenario "$src/scenarios/mnist_cnn_sync.yaml" --quiet >/dev/null 2>&1 &
worker=$!
# Once training has begun (the chief's first step), the worker vanishes.
for _ in $(seq 600); do
  grep -q "@progress" "$work/chief.out" && break
  sleep 0.1
done
kill -9 "$worker"
set +e
wait "$chief"
status=$?
set -e
check "a peer that disappears fails its partner" test "$status" -eq 1
check "... with the task, the peer, the operation and the tag" \
  bash -c "grep -q 'chief:0: while waiting for a ring message' '$work/chief.err' && grep -q 'worker:0' '$work/chief.err'"

# --emit: job descriptions for real nodes (their content: tests/realnet).
"$realnet" --emit compose "$src/scenarios/ps_4workers.yaml" --quiet >"$work/compose.yaml"
check "--emit compose writes a compose file of every task" "$py" - "$work/compose.yaml" <<'PY'
import sys, yaml
services = yaml.safe_load(open(sys.argv[1]))["services"]
assert sorted(services) == ["ps-4workers-chief-0", "ps-4workers-ps-0"] + [
    f"ps-4workers-worker-{i}" for i in range(4)], sorted(services)
PY
set +e
"$realnet" --emit k8s "$src/scenarios/ps_4workers.yaml" >/dev/null 2>"$work/err"; status=$?
set -e
check "--emit k8s without --image exits 2" test "$status" -eq 2
check "... saying what to give" contains "$work/err" "needs --image"
mkdir -p "$work/elsewhere"
cp "$src/scenarios/ps_4workers.yaml" "$work/elsewhere/"
cp -r "$src/scenarios/models" "$work/elsewhere/"
set +e
"$realnet" --emit compose "$work/elsewhere/ps_4workers.yaml" >/dev/null 2>"$work/err"; status=$?
set -e
check "--emit of a scenario outside the project (not in the image) exits 2" test "$status" -eq 2
check "... saying to copy it under scenarios/" contains "$work/err" "copy it under scenarios/"

exit $failures
