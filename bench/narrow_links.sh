#!/usr/bin/env bash
# Real narrow links against the simulator's network model (issue 12, item 6).
#
# Runs one scenario as a real cluster on this machine whose tasks each live
# in their own Linux network namespace (chief-0, worker-0.., ps-0..), joined
# by veth pairs to a bridge in a "switch" namespace of its own, every veth
# rate-limited by tc tbf in both directions: each task's NIC carries RATE
# Mbit/s each way, as the simulator models a full-duplex NIC per host. Then
# it simulates the same scenario with network.bandwidth_gbps = RATE/1000 and
# network.latency_us = the measured one-way latency of a shaped link, and
# prints simulated against real figures.
#
# Usage: bench/narrow_links.sh SCENARIO --mbit RATE [options]   (as root)
#   --mbit RATE        each task's link rate in Mbit/s, each way (required)
#   --out DIR          where everything goes (default
#                      runs/narrow_links-<scenario>-<RATE>mbit-<time>); DIR
#                      must not hold sim/ or real/ yet
#   --set KEY=VALUE    scenario override for both runs (repeatable)
#   --unset KEY        scenario key removed in both runs (repeatable), e.g.
#                      --unset training.epochs --set training.steps=60
#   --sim-set KEY=VALUE  override for the simulator only, after every other
#                      (repeatable): e.g. --sim-set cluster.placement=one_host,
#                      or --sim-set network.latency_us=US to simulate another
#                      latency than the measured one (the real links get no
#                      added delay: tbf cannot delay and netem is missing here)
#   --baseline         also run both unshaped (no tbf; the simulator gets the
#                      measured unshaped throughput and latency), into
#                      DIR/sim-unshaped and DIR/real-unshaped, and compare
#                      what the narrow link costs: run seconds shaped minus
#                      unshaped, which leaves out compute that the simulator
#                      models apart (and, on one shared host, less well)
#   --threads N        compute threads per task, both runs (default 1; every
#                      real task shares this machine's CPUs)
#   --burst BYTES      tbf bucket size (default: 1 ms of RATE, at least 32 KiB)
#   --probe-seconds S  length of the throughput probe (default 2; 0 skips it)
#   --build-dir DIR    where the binaries are (default build/; nothing is
#                      built: run ./realnet --help and ./simulate --help once)
#
# Steps: (1) a switch namespace with a bridge and two probe namespaces on
# shaped links: the median TCP round trip of 1-byte messages (halved: the
# one-way latency the simulator gets) and the throughput of one TCP stream
# for S seconds (measured_mbit: TCP payload, so about 95.6% of RATE at an
# MTU of 1500, as 1448 of every 1514 bytes tbf counts are payload; the
# simulator's links carry payload at the full rate). (2) ./simulate
# SCENARIO --set cluster.machine=local --set network.bandwidth_gbps=RATE/1000
# --set network.latency_us=L [--set ...] [--sim-set ...] --out DIR/sim; the
# tasks of the real run are those of DIR/sim/scenario.yaml (the scenario as
# run). (3) one namespace per task, addresses 10.231.0.2.. (inside this
# run's namespaces only), a cluster file DIR/cluster-real.yaml, and every
# task started as
#   ip netns exec NS build/bin/distlab-realnet --role R --index I
#     --cluster DIR/cluster-real.yaml --scenario SCENARIO --threads N
#     --timeout 600 --quiet [--set ...]     (the chief with --out DIR/real)
# with DISTLAB_SECRET set to a fresh random secret (in the environment, so
# that no command line or summary.json shows it) and TMPDIR under DIR/tmp/
# (removed after a good run); their output goes to DIR/logs/real-TASK.log
# (real-unshaped-TASK.log with --baseline). (4) a table of figures of both
# summary.json files, error = simulated / real - 1, and DIR/comparison.json:
#   {"scenario", "mbit", "measured_mbit", "round_trip_us", "latency_us",
#    "tbf_burst_bytes", "tasks", "command", "sim_dir", "real_dir",
#    "figures": {"examples_per_second": {"simulated", "real", "error"},
#                "run_seconds", "communication_fraction", "bytes_sent",
#                "compute_seconds", "communication_seconds",
#                "waiting_seconds", "step_seconds_median",
#                "step_communication_seconds_median"},
#    "baseline": null or {"measured_mbit", "round_trip_us", "figures",
#      "narrowing": {"run_seconds": {"simulated", "real", "error"}, ...}}}
# The step medians are over the chief's and workers' steps in steps.csv; a
# step's communication is its communication plus waiting seconds: the
# network's share of a step, apart from compute, which the simulator models
# apart and, with every real task on one shared host, less well. With
# --baseline, "narrowing" holds shaped minus unshaped run seconds and step
# medians, simulated and real.
#
# Shaping: tbf on the task side of each veth (the task's egress) and on the
# switch side (its ingress), rate RATE, burst B, latency 50 ms (the queue:
# deep enough that many senders into one task lose nothing). tbf times its
# bucket with high-resolution timers, so B need not cover a jiffy (RATE/HZ,
# 500 KB at 1 Gbit/s with HZ=250): a bucket that large would let a whole
# small message (a 90 KB push) through at memory speed. 1 ms of RATE keeps
# bursts short and still reaches the rate (measured_mbit says so).
#
# Every namespace is named with a prefix unique to this run (dl<pid>-) and
# deleted on exit, on failure and on Ctrl-C; nothing is added to the root
# namespace (the veths are created inside the switch namespace).
# Exit status: 0 done, 1 a failed run or set-up, 2 bad input.
set -eEuo pipefail
shopt -s inherit_errexit
invoked=$(printf '%q ' "$0" "$@"); invoked=${invoked% }
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=/usr/bin/python3
subnet=10.231.0

usage() { sed -n '2,/^set -eE/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "narrow_links: $*" >&2; exit 2; }
fail() { echo "narrow_links: $*" >&2; exit 1; }

scenario=""
mbit=""
out=""
both_args=()  # --set/--unset for both runs, in order
sim_sets=()   # --sim-set: the simulator only
threads=1
burst=""
probe_seconds=2
build_dir=build
baseline=0
while [ $# -gt 0 ]; do
  case "$1" in
    --mbit) mbit=${2:?--mbit needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    --set) both_args+=(--set "${2:?--set needs KEY=VALUE}"); shift 2 ;;
    --unset) both_args+=(--unset "${2:?--unset needs KEY}"); shift 2 ;;
    --sim-set) sim_sets+=(--set "${2:?--sim-set needs KEY=VALUE}"); shift 2 ;;
    --baseline) baseline=1; shift ;;
    --threads) threads=${2:?--threads needs a value}; shift 2 ;;
    --burst) burst=${2:?--burst needs a value}; shift 2 ;;
    --probe-seconds) probe_seconds=${2:?--probe-seconds needs a value}; shift 2 ;;
    --build-dir) build_dir=${2:?--build-dir needs a value}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option $1 (--help lists them)" ;;
    *) [ -z "$scenario" ] || die "one scenario only ($scenario, $1)"; scenario=$1; shift ;;
  esac
done
[ -n "$scenario" ] || die "no scenario (usage: bench/narrow_links.sh SCENARIO --mbit RATE; --help)"
[ -f "$scenario" ] || die "$scenario: no such file"
[ -n "$mbit" ] || die "--mbit RATE is required (Mbit/s per link, each way)"
[[ "$mbit" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--mbit: a number of Mbit/s, e.g. 100"
[[ "$threads" =~ ^[1-9][0-9]*$ ]] || die "--threads: a positive integer"
[[ "$probe_seconds" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--probe-seconds: a number of seconds"
probe_on=$("$py" -c 'import sys; print(int(float(sys.argv[1]) > 0))' "$probe_seconds")
[ "$baseline" = 0 ] || [ "$probe_on" = 1 ] ||
  die "--baseline needs the throughput probe (--probe-seconds > 0)"
for kv in "${both_args[@]}" "${sim_sets[@]}"; do
  case "$kv" in --set|--unset) continue ;; esac
  [[ "$kv" != -* ]] || die "a --set, --unset or --sim-set value may not start with '-': $kv"
done
rate_bps=$("$py" -c 'import sys; print(round(float(sys.argv[1]) * 1e6))' "$mbit")
"$py" -c 'import sys; r = int(sys.argv[1]); sys.exit(0 if 1e6 <= r <= 1e11 else 1)' "$rate_bps" ||
  die "--mbit: between 1 and 100000"
if [ -z "$burst" ]; then
  burst=$((rate_bps / 8 / 1000))
  [ "$burst" -ge 32768 ] || burst=32768
fi
[[ "$burst" =~ ^[1-9][0-9]*$ ]] && [ "$burst" -ge 1600 ] || die "--burst: bytes, at least 1600 (a frame)"
realnet=$build_dir/bin/distlab-realnet
simulate=$build_dir/bin/distlab-simulate
[ -x "$realnet" ] || die "$realnet is missing (./realnet --help builds it)"
[ -x "$simulate" ] || die "$simulate is missing (./simulate --help builds it)"
[ "$(id -u)" = 0 ] || die "network namespaces need root"
command -v ip >/dev/null && command -v tc >/dev/null || die "needs ip and tc (iproute2)"
"$py" -c 'import yaml' 2>/dev/null || die "$py lacks PyYAML (apt-get install python3-yaml)"

name=$(basename "$scenario" .yaml)
[ -n "$out" ] || out=runs/narrow_links-$name-${mbit}mbit-$(date +%Y%m%d-%H%M%S)
for d in sim real sim-unshaped real-unshaped; do
  [ ! -e "$out/$d" ] || die "$out already holds $d/: pick another --out"
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
scenario_abs=$(realpath "$scenario")

# --- namespaces, links, clean-up ---------------------------------------------
prefix=dl$$-
sw=${prefix}switch
namespaces=()  # every namespace this run made, for clean-up
pids=()        # every process this run started inside them
veths=()       # "NS DEV" of every shaped device
links=0        # veths made so far: v1, v2, ... on the switch side

cleanup() {
  local rc=$? pid ns
  trap - ERR INT TERM
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# A command that failed fails the run (exit 1); one killed by a signal
# (Ctrl-C reaches this whole process group) passes its status on quietly.
trap 'rc=$?; [ "$rc" -gt 128 ] && exit "$rc"; echo "narrow_links: line $LINENO: a command failed" >&2; exit 1' ERR

shape() {  # shape NS DEV: tbf at RATE on DEV's egress in namespace NS
  tc -n "$1" qdisc replace dev "$2" root tbf rate "${rate_bps}bit" burst "$burst" latency 50ms
  veths+=("$1 $2")
}
unshape_all() {  # every shaped device back to its default qdisc
  local v
  for v in "${veths[@]}"; do
    read -r ns dev <<<"$v"
    tc -n "$ns" qdisc del dev "$dev" root
  done
  veths=()
}
add_ns() {  # add_ns NS ADDRESS: a namespace on a shaped link to the switch
  local ns=$1 address=$2 v
  links=$((links + 1))
  v=v$links
  ip netns add "$ns"
  namespaces+=("$ns")
  ip -n "$ns" link set lo up
  ip -n "$sw" link add "$v" type veth peer name eth0 netns "$ns"
  ip -n "$sw" link set "$v" master br0 up
  ip -n "$ns" addr add "$address/24" dev eth0
  ip -n "$ns" link set eth0 up
  shape "$ns" eth0
  shape "$sw" "$v"
}

ip netns add "$sw"
namespaces+=("$sw")
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
mkdir -p "$out/tmp" "$out/logs"

# --- (1) probes: latency and throughput of a link ----------------------------
cat >"$out/tmp/probe.py" <<'EOF'
# probe.py serve ADDR PORT | probe.py client ADDR PORT SECONDS: prints the
# median round trip of 1-byte TCP messages (microseconds) and the payload
# throughput of one TCP stream for SECONDS (Mbit/s; 0 skips it).
import socket, statistics, sys, time
mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "serve":
  s = socket.socket()
  s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
  s.bind((addr, port))
  s.listen(2)
  s.settimeout(60)
  while True:
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    kind = c.recv(1)
    if kind == b"Q":
      break
    n = 0
    while True:
      b = c.recv(1 << 20)
      if not b:
        break
      if kind == b"P":
        c.sendall(b)
      n += len(b)
    if kind == b"T":
      c.sendall(str(n).encode())
    c.close()
else:
  seconds = float(sys.argv[4])
  def connect(kind):
    for attempt in range(100):
      try:
        c = socket.create_connection((addr, port), timeout=30)
        break
      except OSError:
        if attempt == 99:
          raise
        time.sleep(0.05)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.sendall(kind)
    return c
  c = connect(b"P")
  rtts = []
  for _ in range(300):
    t = time.perf_counter()
    c.sendall(b"x")
    c.recv(64)
    rtts.append(time.perf_counter() - t)
  c.close()
  mbit = 0.0
  if seconds > 0:
    c = connect(b"T")
    buf = bytes(1 << 16)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
      c.sendall(buf)
    c.shutdown(socket.SHUT_WR)
    n = int(c.recv(64))
    mbit = n * 8 / (time.perf_counter() - t0) / 1e6
    c.close()
  connect(b"Q").close()
  print(f"{statistics.median(rtts[20:]) * 1e6:.1f} {mbit:.2f}")
EOF
add_ns "${prefix}probe-0" "$subnet.250"
add_ns "${prefix}probe-1" "$subnet.251"
probe_port=5000
# probe: sets rtt_us, latency_us (one way) and tput_mbit from probe-0 to probe-1.
probe() {
  probe_port=$((probe_port + 1))
  ip netns exec "${prefix}probe-1" "$py" "$out/tmp/probe.py" serve "$subnet.251" "$probe_port" &
  pids+=($!)
  read -r rtt_us tput_mbit < <(ip netns exec "${prefix}probe-0" timeout 120 \
    "$py" "$out/tmp/probe.py" client "$subnet.251" "$probe_port" "$probe_seconds")
  latency_us=$("$py" -c 'import sys; print(f"{float(sys.argv[1]) / 2:.1f}")' "$rtt_us")
}

# run_sim DIR GBPS LATENCY_US: the simulation into DIR.
run_sim() {
  local cmd rc=0
  cmd=("$simulate" "$scenario" --set cluster.machine=local --set "network.bandwidth_gbps=$2"
    --set "network.latency_us=$3" "${both_args[@]}" "${sim_sets[@]}"
    --threads "$threads" --out "$1" --quiet)
  echo "simulate    ${cmd[*]}"
  "${cmd[@]}" || rc=$?
  case $rc in
    0) ;;
    2) echo "narrow_links: the simulator refused the scenario or an option (above)" >&2; exit 2 ;;
    *) fail "the simulation failed (exit $rc)" ;;
  esac
}

# run_real DIR PORT: the real cluster, the chief writing DIR; sets real_wall.
run_real() {
  local dir=$1 port=$2 t role index k=2 started rc chief_out tag
  tag=$(basename "$dir")
  declare -A addr=([chief]="" [worker]="" [ps]="")
  for t in "${tasks[@]}"; do
    read -r role index <<<"$t"
    addr[$role]+="${addr[$role]:+, }\"$subnet.$k:$port\""
    k=$((k + 1))
  done
  {
    echo "cluster:"
    [ -z "${addr[chief]}" ] || echo "  chief: [${addr[chief]}]"
    [ -z "${addr[worker]}" ] || echo "  worker: [${addr[worker]}]"
    [ -z "${addr[ps]}" ] || echo "  ps: [${addr[ps]}]"
  } >"$out/cluster-$tag.yaml"
  echo "realnet     ${#tasks[@]} tasks (chief $chiefs, workers $workers, ps $ps), one namespace each; logs in $out/logs/"
  started=$(date +%s.%N)
  declare -A running=()
  for t in "${tasks[@]}"; do
    read -r role index <<<"$t"
    chief_out=()
    [ "$role" != chief ] || chief_out=(--out "$dir")
    mkdir -p "$out/tmp/$tag-$role-$index"
    # Every task shares this machine's cores: OpenMP threads that sleep
    # when idle, as ./realnet --launch gives its tasks (spinning ones
    # steal the cores the other tasks compute on).
    ip netns exec "$prefix$role-$index" env DISTLAB_SECRET="$secret" \
      TMPDIR="$out/tmp/$tag-$role-$index" OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}" \
      "$realnet" --role "$role" --index "$index" --cluster "$out/cluster-$tag.yaml" \
      --scenario "$scenario_abs" --threads "$threads" --timeout 600 --quiet \
      "${both_args[@]}" "${chief_out[@]}" >"$out/logs/$tag-$role-$index.log" 2>&1 &
    pids+=($!)
    running[$!]=$t
  done
  # The first task to fail fails the run (clean-up stops the rest).
  while [ "${#running[@]}" -gt 0 ]; do
    rc=0
    wait -n -p done_pid "${!running[@]}" || rc=$?
    t=${running[$done_pid]}
    unset "running[$done_pid]"
    [ "$rc" = 0 ] || {
      read -r role index <<<"$t"
      tail -n 5 "$out/logs/$tag-$role-$index.log" | sed 's/^/    /' >&2
      fail "task $role:$index failed (exit $rc; $out/logs/$tag-$role-$index.log)"
    }
  done
  real_wall=$("$py" -c 'import sys, time; print(f"{time.time() - float(sys.argv[1]):.1f}")' "$started")
  [ -f "$dir/summary.json" ] || fail "the chief wrote no $dir/summary.json"
  echo "realnet     done in $real_wall s"
}

probe
measured_mbit=$tput_mbit
shaped_rtt_us=$rtt_us
shaped_latency_us=$latency_us
if [ "$probe_on" = 0 ]; then
  measured_mbit=null
  echo "link        ${mbit} Mbit/s each way, tbf burst $burst B; round trip $rtt_us us (latency $latency_us us one way)"
else
  echo "link        ${mbit} Mbit/s each way, tbf burst $burst B; measured $measured_mbit Mbit/s of TCP payload, round trip $rtt_us us (latency $latency_us us one way)"
fi

# --- (2) the simulation ------------------------------------------------------
gbps=$("$py" -c 'import sys; print(repr(int(sys.argv[1]) / 1e9))' "$rate_bps")
run_sim "$out/sim" "$gbps" "$shaped_latency_us"

# The tasks, from the scenario as run.
read -r strategy chiefs workers ps < <("$py" -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
c = d.get("cluster") or {}
print((d.get("strategy") or {}).get("name", "?"), c.get("chief", 1), c.get("workers", 0), c.get("ps", 0))
' "$out/sim/scenario.yaml")
case $strategy in
  local|mirrored) die "strategy $strategy runs on one machine: no link to narrow" ;;
esac
tasks=()
for ((i = 0; i < chiefs; i++)); do tasks+=("chief $i"); done
for ((i = 0; i < workers; i++)); do tasks+=("worker $i"); done
for ((i = 0; i < ps; i++)); do tasks+=("ps $i"); done
[ "${#tasks[@]}" -ge 2 ] || die "the scenario has ${#tasks[@]} task(s): nothing crosses a link"
[ "${#tasks[@]}" -le 240 ] || die "at most 240 tasks (${#tasks[@]})"

# --- (3) the real run ----------------------------------------------------------
k=2
for t in "${tasks[@]}"; do
  read -r role index <<<"$t"
  add_ns "$prefix$role-$index" "$subnet.$k"
  k=$((k + 1))
done
secret=$(openssl rand -hex 16)
run_real "$out/real" 7000
shaped_wall=$real_wall

base_args=(null null null null)
if [ "$baseline" = 1 ]; then
  unshape_all
  probe
  echo "unshaped    measured $tput_mbit Mbit/s of TCP payload, round trip $rtt_us us (latency $latency_us us one way)"
  run_sim "$out/sim-unshaped" "$("$py" -c 'import sys; print(float(sys.argv[1]) / 1000)' "$tput_mbit")" \
    "$latency_us"
  run_real "$out/real-unshaped" 7001
  base_args=("$tput_mbit" "$rtt_us" "$real_wall" "$latency_us")
fi
rm -rf "$out/tmp"

# --- (4) the comparison ----------------------------------------------------------
"$py" - "$out" "$scenario" "$mbit" "$burst" "$measured_mbit" "$shaped_rtt_us" "$invoked" \
  "$shaped_wall" "${base_args[@]}" <<'EOF'
import csv, json, statistics, sys, yaml
(out, scenario, mbit, burst, measured, rtt, command, real_wall,
 base_mbit, base_rtt, base_wall, base_latency) = sys.argv[1:]
FIGURES = ["examples_per_second", "run_seconds", "communication_fraction", "bytes_sent",
           "compute_seconds", "communication_seconds", "waiting_seconds",
           "step_seconds_median", "step_communication_seconds_median"]

def load(d):
  # summary.json, with the medians over the chief's and workers' steps
  # (steps.csv; a ps logs updates, not steps) of a step's length and of its
  # time in communication and waiting: the network's share, apart from
  # compute, which the simulator models apart.
  doc = json.load(open(f"{out}/{d}/summary.json"))
  steps = [r for r in csv.DictReader(open(f"{out}/{d}/steps.csv"))
           if not r["task"].startswith("ps:")]
  if steps:
    doc["step_seconds_median"] = statistics.median(
      float(r["end"]) - float(r["start"]) for r in steps)
    doc["step_communication_seconds_median"] = statistics.median(
      float(r["communication_seconds"]) + float(r["waiting_seconds"]) for r in steps)
  return doc

def error(s, r):
  ok = all(isinstance(v, (int, float)) for v in (s, r)) and r
  return s / r - 1 if ok else None

def compare(sim, real):
  return {f: {"simulated": sim.get(f), "real": real.get(f), "error": error(sim.get(f), real.get(f))}
          for f in FIGURES}

def num(v):
  if v is None:
    return "-"
  if isinstance(v, int) or abs(v) >= 1e5:
    return f"{v:,.0f}"
  return f"{v:.4g}"

def table(title, rows):
  print()
  print(f"{title:<34}{'simulated':>14}{'real':>14}{'error':>10}")
  print("-" * 72)
  for f, row in rows.items():
    err = "-" if row["error"] is None else f"{row['error'] * 100:+.1f}%"
    print(f"{f:<34}{num(row['simulated']):>14}{num(row['real']):>14}{err:>10}")

def opt(v):
  return None if v == "null" else float(v)

sim, real = load("sim"), load("real")
run = yaml.safe_load(open(f"{out}/sim/scenario.yaml"))
net = run.get("network") or {}
cluster = run.get("cluster") or {}
rows = compare(sim, real)
table(f"{mbit} Mbit/s links", rows)
doc = {
  "scenario": sim.get("scenario"),
  "scenario_file": scenario,
  "strategy": sim.get("strategy"),
  "mbit": float(mbit),
  "measured_mbit": opt(measured),
  "round_trip_us": float(rtt),
  "latency_us": net.get("latency_us"),
  "bandwidth_gbps": net.get("bandwidth_gbps"),
  "tbf_burst_bytes": int(burst),
  "machine": cluster.get("machine"),
  "tasks": {"chief": cluster.get("chief", 1), "workers": cluster.get("workers", 0),
            "ps": cluster.get("ps", 0)},
  "figures": rows,
  "real_wall_seconds": float(real_wall),
  "sim_dir": f"{out}/sim",
  "real_dir": f"{out}/real",
  "command": command,
  "sim_command": sim.get("command"),
  "version": real.get("version"),
  "baseline": None,
}
if base_mbit != "null":
  bsim, breal = load("sim-unshaped"), load("real-unshaped")
  brows = compare(bsim, breal)
  table("unshaped links", brows)
  link = {}
  for f in ["run_seconds", "step_seconds_median", "step_communication_seconds_median"]:
    if f in sim and f in real:
      ls, lr = sim[f] - bsim[f], real[f] - breal[f]
      link[f] = {"simulated": ls, "real": lr, "error": error(ls, lr)}
  table("shaped - unshaped", link)
  doc["baseline"] = {
    "measured_mbit": float(base_mbit), "round_trip_us": float(base_rtt),
    "latency_us": float(base_latency), "figures": brows, "narrowing": link,
    "real_wall_seconds": float(base_wall),
    "sim_dir": f"{out}/sim-unshaped", "real_dir": f"{out}/real-unshaped",
  }
print("error = simulated / real - 1")
with open(f"{out}/comparison.json", "w") as fh:
  json.dump(doc, fh, indent=2)
  fh.write("\n")
print(f"wrote {out}/comparison.json")
EOF
