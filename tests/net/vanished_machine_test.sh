#!/usr/bin/env bash
# A machine that vanishes mid-run, without closing its connections (no FIN,
# no RST: its packets just stop), is noticed within about 5 s
# (TcpOptions::dead_peer_timeout), not at --timeout: a chief and a worker
# of a synchronous run, started with --role in a network namespace of the
# test's own, on that namespace's loopback; once training is under way,
# 127.0.0.1 becomes a blackhole route there, and each task must stop
# naming the other within 10 s.
#
# Why a route and not tc: a packet that tc drops (a queue that holds none)
# is refused to the sender's own TCP, which takes it for local congestion
# and retries its keepalive probe without counting it, so an idle
# connection never times out (seen: an all-reduce stuck 30 s). A blackhole
# route takes the packet and discards it: the sender's stack sees it leave
# and never answered, as when the machine at the other end has vanished.
# Skipped (exit 77) where no namespace can be made (not root).
# Usage: vanished_machine_test.sh REALNET SOURCE_DIR
set -euo pipefail
realnet=$(realpath "$1") src=$2
work=$(mktemp -d)
py=/usr/bin/python3
ns=distlab-vanish-$$
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"

if ! ip netns add "$ns" 2>"$work/netns.err"; then
  echo "skipped: cannot make a network namespace ($(head -1 "$work/netns.err"))"
  exit 77
fi
in_ns() { ip netns exec "$ns" "$@"; }
in_ns ip link set lo up

# The namespace is fresh: any ports are free in it.
cat >"$work/cluster.yaml" <<'YAML'
cluster:
  chief: ["127.0.0.1:47001"]
  worker: ["127.0.0.1:47002"]
YAML
# Far more steps than the test lasts.
for task in chief:0 worker:0; do
  role=${task%:*}
  in_ns "$realnet" --role "$role" --index 0 --cluster "$work/cluster.yaml" \
    --scenario "$src/scenarios/mnist_cnn_sync.yaml" --timeout 60 --progress-lines --quiet \
    --set cluster.workers=1 --set data=synthetic:600 --set training.epochs=10000 \
    --set training.eval_every=0 --out "$work/run" \
    >"$work/$role.out" 2>"$work/$role.err" &
  pids+=($!)
done

# Training is under way once the chief reports its steps.
for _ in $(seq 600); do
  grep -q '^@progress' "$work/chief.out" 2>/dev/null && break
  sleep 0.1
done
check "the two tasks connect and train in the namespace" grep -q '^@progress' "$work/chief.out"

# The machine vanishes: what either task sends now goes nowhere.
in_ns ip route replace blackhole 127.0.0.1 table local
dropped=$(date +%s.%N)

# Each task's exit, and when, waiting at most 30 s.
declare -A ended=() status=()
for _ in $(seq 300); do
  for i in 0 1; do
    pid=${pids[$i]}
    [ -n "${ended[$i]:-}" ] && continue
    if ! kill -0 "$pid" 2>/dev/null; then
      ended[$i]=$(date +%s.%N)
      set +e
      wait "$pid"
      status[$i]=$?
      set -e
    fi
  done
  [ "${#ended[@]}" = 2 ] && break
  sleep 0.1
done
after() { "$py" -c "print(f'{$1 - $dropped:.1f}')"; }

names_peer_within() {  # index, peer name, log
  local i=$1 peer=$2 log=$3
  if [ -z "${ended[$i]:-}" ]; then
    echo "still running 30 s after the drop; it said:"
    sed 's/^/  /' "$log"
    return 1
  fi
  local seconds
  seconds=$(after "${ended[$i]}")
  echo "stopped ${seconds} s after the drop, status ${status[$i]}: $(grep -m1 error "$log" || true)"
  [ "${status[$i]}" != 0 ] && grep -q "connection with $peer" "$log" &&
    "$py" -c "import sys; sys.exit(0 if $seconds <= 10 else 1)"
}
check "the chief stops within 10 s, naming the lost worker" \
  names_peer_within 0 worker:0 "$work/chief.err"
check "the worker stops within 10 s, naming the lost chief" \
  names_peer_within 1 chief:0 "$work/worker.err"
exit $failures
