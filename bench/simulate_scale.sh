#!/usr/bin/env bash
# How fast ./simulate simulates a large synchronous all-reduce, beside a bare
# SimGrid ring all-reduce of the same size and message count
# (bench/bare_ring.cc), the floor of a simulation that models every message.
#
# For each size P (16, 256 and 1024 workers unless given), each round runs,
# one after the other (alternating which goes first):
#   build/bench/bare_ring --workers P --bytes N --steps S
#   ./simulate SCENARIO --set cluster.workers=P-1 --set training.steps=S --quiet --out DIR
# (the timing scenario has a chief, so P replicas; the script runs
# build/bin/distlab-simulate itself, so that ./simulate's build check is not
# measured), and records each one's wall and CPU time per step (bare ring:
# its Engine::run; simulate: summary.json's simulation_wall_seconds and
# simulation_cpu_seconds, its own Engine::run, without loading the scenario
# or writing the run directory) and peak resident memory (/usr/bin/time
# -f %M). Prints every round, then a Markdown table of medians with three
# ratios simulate / bare ring: of the median wall times; the median of each
# round's own ratio (the two runs of a round follow one another, so the
# machine's drift over minutes cancels); and of the median CPU times (a
# shared machine that gives the core to another guest adds wall time but
# no CPU time). Then one JSON line with every figure (and a note if
# simulate sent other than the ring's bytes).
#
# N, the model buffer in bytes, is summary.json's model_bytes (the first
# round at each size runs simulate first to learn it); --bytes fixes it
# instead. The bare ring's link latency and bandwidth come from the
# scenario (its network section, else its machine's NIC in
# scenarios/machines.yaml); they change the simulated times, hardly the wall
# times.
#
# Usage: bench/simulate_scale.sh [options] [P ...]
#   --rounds R           rounds per size (default 3)
#   --steps S | P=S      steps at every size, or at size P (default 20 at
#                        P <= 16, 5 at P <= 256, 2 above); repeatable
#   --scenario FILE      default scenarios/timing_1024_workers.yaml
#   --bytes N            the bare ring's buffer (default: simulate's model_bytes)
#   --latency-us X, --bandwidth-gbps X   the bare ring's links
#   --bare-send MODE     how the bare ring sends: kept (default: sends to
#                        permanent receivers, kept until delivered, the
#                        primitives ./simulate uses in a run without faults,
#                        so that the ratio is distlab's own cost); eager
#                        (the same sends detached, as ./simulate sends in a
#                        run with faults: SimGrid scans every detached send
#                        in flight as each one ends); or wait (put_async
#                        waited for after the receive, a rendezvous)
#   --bare-adds yes|no   whether each reduce-scatter round of the bare ring
#                        also sleeps for its addition, as ./simulate times it
#                        (default yes: the median "ring reduce" span of
#                        simulate's timeline at that size, so that both
#                        simulate the same events; no: messages alone)
#   --add-us X           the bare ring's addition, microseconds (instead of
#                        simulate's)
#   --bare-only          run the bare ring alone (N from --bytes, default 373504)
#   --build-dir DIR      binaries from DIR, built there with cmake --build
#                        (default build/, built with tools/build)
#   --no-build           use the binaries as they are (with a warning when a
#                        source changed after them)
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=/usr/bin/python3

rounds=3
scenario=scenarios/timing_1024_workers.yaml
bytes=""
latency_us=""
bandwidth_gbps=""
bare_only=0
bare_send=kept
bare_adds=yes
add_us=""
build=1
build_dir=""
sizes=()
declare -A steps_at=()
steps_all=""

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "simulate_scale: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=${2:?--rounds needs a value}; shift 2 ;;
    --steps)
      v=${2:?--steps needs a value}
      if [[ "$v" == *=* ]]; then steps_at[${v%%=*}]=${v#*=}; else steps_all=$v; fi
      shift 2 ;;
    --scenario) scenario=${2:?}; shift 2 ;;
    --bytes) bytes=${2:?}; shift 2 ;;
    --latency-us) latency_us=${2:?}; shift 2 ;;
    --bare-send) bare_send=${2:?--bare-send needs kept, eager or wait}; shift 2 ;;
    --bandwidth-gbps) bandwidth_gbps=${2:?}; shift 2 ;;
    --bare-only) bare_only=1; shift ;;
    --bare-adds) bare_adds=${2:?--bare-adds needs yes or no}; shift 2 ;;
    --add-us) add_us=${2:?}; shift 2 ;;
    --build-dir) build_dir=${2:?}; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option $1 (--help lists them)" ;;
    *) sizes+=("$1"); shift ;;
  esac
done
[ ${#sizes[@]} -gt 0 ] || sizes=(16 256 1024)
is_int() { [[ "$1" =~ ^[0-9]+$ ]]; }
if ! is_int "$rounds" || [ "$rounds" -lt 1 ]; then die "--rounds: not a positive integer: $rounds"; fi
for p in "${sizes[@]}"; do
  if ! is_int "$p" || [ "$p" -lt 2 ]; then die "size must be an integer >= 2: $p"; fi
done
for k in "${!steps_at[@]}"; do
  if ! is_int "$k" || ! is_int "${steps_at[$k]}"; then
    die "--steps P=S: not integers: $k=${steps_at[$k]}"
  fi
done
[ -z "$steps_all" ] || is_int "$steps_all" || die "--steps: not an integer: $steps_all"
[ -z "$bytes" ] || is_int "$bytes" || die "--bytes: not an integer: $bytes"
case "$bare_adds" in yes | no) ;; *) die "--bare-adds: yes or no, not $bare_adds" ;; esac
[ -z "$add_us" ] || [[ "$add_us" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--add-us: not a number: $add_us"

steps_for() {
  local p=$1
  if [ -n "${steps_at[$p]:-}" ]; then echo "${steps_at[$p]}"
  elif [ -n "$steps_all" ]; then echo "$steps_all"
  elif [ "$p" -le 16 ]; then echo 20
  elif [ "$p" -le 256 ]; then echo 5
  else echo 2
  fi
}

# Peak RSS: GNU time's %M (KiB). Without it, a Python wrapper reads
# RUSAGE_CHILDREN's ru_maxrss (also KiB on Linux).
if [ -x /usr/bin/time ]; then
  timed() { /usr/bin/time -f %M -o "$1" "${@:2}"; }
else
  echo "simulate_scale: /usr/bin/time is missing: peak RSS via Python's resource module" >&2
  timed() {
    "$py" -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$@"
  }
fi

targets=(bare_ring)
[ "$bare_only" = 1 ] || targets+=(distlab-simulate)
if [ "$build" = 1 ]; then
  if [ -z "$build_dir" ]; then
    tools/build --target "${targets[@]}"
  else
    cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}" >"${TMPDIR:-/tmp}/simulate_scale_build.log" 2>&1 ||
      die "building in $build_dir failed (log: ${TMPDIR:-/tmp}/simulate_scale_build.log)"
  fi
fi
bare_bin=${build_dir:-build}/bench/bare_ring
sim_bin=${build_dir:-build}/bin/distlab-simulate
[ -x "$bare_bin" ] || die "$bare_bin is missing (run without --no-build)"
if [ "$bare_only" = 0 ]; then
  [ -x "$sim_bin" ] || die "$sim_bin is missing (run without --no-build)"
  [ -f "$scenario" ] || die "no scenario $scenario"
fi
# Binaries as they are may not be the code's: say so when a source changed
# after them (an edit, or a checkout that undid one), so that a figure is
# not taken for the committed code's.
warn_stale() {
  echo "simulate_scale: warning: $1 is older than $2(built before a change; run without --no-build)" >&2
}
# newer_sources BIN DIR...: the first sources under DIR... changed after BIN.
newer_sources() {
  local bin=$1
  shift
  find "$@" \( -name '*.cc' -o -name '*.h' \) -newer "$bin" 2>/dev/null | head -3 | tr '\n' ' '
}
if [ "$build" = 0 ]; then
  stale=$(newer_sources "$bare_bin" bench/bare_ring.cc)
  [ -z "$stale" ] || warn_stale "$bare_bin" "$stale"
  if [ "$bare_only" = 0 ]; then
    stale=$(newer_sources "$sim_bin" apps common net nn run sim strategy)
    [ -z "$stale" ] || warn_stale "$sim_bin" "$stale"
  fi
fi

# The bare ring's links: the options, else the scenario's network section
# (a bandwidth of 0 there: the NIC of cluster.machine in
# scenarios/machines.yaml), else 50 us and 10 Gbit/s.
if [ -z "$latency_us" ] || [ -z "$bandwidth_gbps" ]; then
  read -r s_lat s_bw < <("$py" - "$scenario" scenarios/machines.yaml <<'EOF'
import sys


def nic_gbps(catalog, name):
    machines = {m.get("name"): m for m in catalog.get("machines") or []}
    series = {s.get("name"): s for s in catalog.get("series") or []}
    m = machines.get(name)
    while m is not None and "base" in m and "nic_gbps" not in m:
        m = machines.get(m["base"])
    if m is None:
        return 0
    if "nic_gbps" in m:
        return m["nic_gbps"]
    s = series.get(m.get("series"), {})
    return min(m["vcpus"] * s["nic_gbps_per_vcpu"], s.get("nic_gbps_max", float("inf")))


try:
    import yaml
    scenario = yaml.safe_load(open(sys.argv[1])) or {}
    net = scenario.get("network") or {}
    bw = net.get("bandwidth_gbps", 0) or 0
    if not bw:
        bw = nic_gbps(yaml.safe_load(open(sys.argv[2])) or {},
                      (scenario.get("cluster") or {}).get("machine"))
    print(net.get("latency_us", 50), bw)
except Exception:
    print(50, 0)
EOF
  )
  [ -n "$latency_us" ] || latency_us=$s_lat
  if [ -z "$bandwidth_gbps" ]; then
    if "$py" -c "import sys; sys.exit(float(sys.argv[1]) <= 0)" "$s_bw"; then
      bandwidth_gbps=$s_bw
    else
      bandwidth_gbps=10
      if [ -f "$scenario" ]; then
        echo "simulate_scale: no link bandwidth found for $scenario: bare ring at 10 Gbit/s (--bandwidth-gbps)" >&2
      fi
    fi
  fi
fi

work=$(mktemp -d /tmp/simulate_scale.XXXXXX)
trap 'rm -rf "$work"' EXIT
records=$work/records.jsonl
: >"$records"

# One bare ring run: appends its record.
run_bare() {
  local p=$1 s=$2 n=$3 round=$4 add=${5:-0}
  local out=$work/bare.json rss=$work/bare.rss
  if ! timed "$rss" "$bare_bin" --workers "$p" --bytes "$n" --steps "$s" --send "$bare_send" \
      --latency-us "$latency_us" --bandwidth-gbps "$bandwidth_gbps" --add-us "$add" \
      >"$out" 2>"$work/bare.err"; then
    cat "$work/bare.err" >&2
    die "bare_ring failed at P=$p"
  fi
  "$py" - "$out" "$rss" "$round" >>"$records" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
rss = int(open(sys.argv[2]).read().split()[-1])
print(json.dumps({"kind": "bare", "workers": r["workers"], "round": int(sys.argv[3]),
                  "steps": r["steps"], "bytes": r["bytes"], "messages": r["messages"],
                  "wall_seconds": r["wall_seconds"], "cpu_seconds": r.get("cpu_seconds"),
                  "add_us": r.get("add_us", 0),
                  "simulated_seconds": r["simulated_seconds"],
                  "model_seconds": r["model_seconds"], "peak_rss_kib": rss}))
EOF
}

# One ./simulate run: appends its record and prints the model's bytes and
# the median time of its ring's additions in microseconds (0 if none).
run_sim() {
  local p=$1 s=$2 round=$3
  local dir=$work/run-$p-$round rss=$work/sim.rss
  if ! timed "$rss" "$sim_bin" "$scenario" --set "cluster.workers=$((p - 1))" \
      --set "training.steps=$s" --quiet --out "$dir" >"$work/sim.out" 2>"$work/sim.err"; then
    cat "$work/sim.out" "$work/sim.err" >&2
    die "simulate failed at P=$p"
  fi
  "$py" - "$dir/summary.json" "$rss" "$round" "$p" "$s" "$dir/timeline.json" >>"$records" <<'EOF'
import json, os, statistics, sys
r = json.load(open(sys.argv[1]))
adds = []
if os.path.exists(sys.argv[6]):
    adds = [e["dur"] for e in json.load(open(sys.argv[6])).get("traceEvents", [])
            if e.get("name") == "ring reduce" and e.get("ph") == "X"]
rss = int(open(sys.argv[2]).read().split()[-1])
p, s = int(sys.argv[4]), int(sys.argv[5])
if r.get("replicas") not in (None, p) or r.get("steps") not in (None, s):
    sys.exit(f"simulate_scale: summary.json has replicas {r.get('replicas')}, steps "
             f"{r.get('steps')}; expected {p} and {s}")
print(json.dumps({"kind": "simulate", "workers": p, "round": int(sys.argv[3]), "steps": s,
                  "bytes": r.get("model_bytes"),
                  "wall_seconds": r.get("simulation_wall_seconds") or r["wall_seconds"],
                  "process_wall_seconds": r["wall_seconds"],
                  "cpu_seconds": r.get("simulation_cpu_seconds"),
                  "simulated_seconds": r.get("simulated_seconds"),
                  "bytes_sent": sum(t.get("bytes_sent", 0) for t in r.get("tasks", [])),
                  "add_us": statistics.median(adds) if adds else 0,
                  "peak_rss_kib": rss}))
EOF
  rm -rf "$dir"
  tail -n 1 "$records" |
    "$py" -c 'import json, sys; r = json.load(sys.stdin); print(r["bytes"] or "", r["add_us"])'
}

show_round() {
  tail -n "$1" "$records" | "$py" -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print("P=%d round %d: %-8s %.4f s/step over %d steps, peak RSS %.0f MiB" % (
        r["workers"], r["round"], r["kind"], r["wall_seconds"] / r["steps"], r["steps"],
        r["peak_rss_kib"] / 1024), flush=True)'
}

echo "bare ring links: ${latency_us} us, ${bandwidth_gbps} Gbit/s, sends: ${bare_send}, additions: ${bare_adds}; $rounds rounds; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in "${sizes[@]}"; do
  s=$(steps_for "$p")
  n=$bytes
  add=$add_us  # the bare ring's addition: learned from the first simulate run
  [ "$bare_adds" = yes ] || add=0
  for ((round = 1; round <= rounds; round++)); do
    if [ "$bare_only" = 1 ]; then
      run_bare "$p" "$s" "${n:-373504}" "$round" "${add:-0}"
      show_round 1
    elif [ -z "$n" ] || [ -z "$add" ] || ((round % 2 == 1)); then
      read -r learned learned_add < <(run_sim "$p" "$s" "$round")
      if [ -z "$n" ]; then
        [ -n "$learned" ] || die "summary.json has no model_bytes: pass --bytes"
        n=$learned
      fi
      [ -n "$add" ] || add=$learned_add
      run_bare "$p" "$s" "$n" "$round" "$add"
      show_round 2
    else
      run_bare "$p" "$s" "$n" "$round" "$add"
      run_sim "$p" "$s" "$round" >/dev/null
      show_round 2
    fi
  done
done

"$py" - "$records" <<'EOF'
import json, statistics, sys

records = [json.loads(line) for line in open(sys.argv[1])]
sizes = sorted({r["workers"] for r in records})
rows = []
for p in sizes:
    row = {"workers": p}
    for kind in ("bare", "simulate"):
        rs = [r for r in records if r["workers"] == p and r["kind"] == kind]
        if not rs:
            continue
        steps = rs[0]["steps"]
        per_step = statistics.median(r["wall_seconds"] / r["steps"] for r in rs)
        row[kind] = {
            "steps": steps,
            "rounds": len(rs),
            "bytes": rs[0]["bytes"],
            "wall_seconds_per_step": per_step,
            "wall_seconds_per_step_all": [r["wall_seconds"] / r["steps"] for r in rs],
            "worker_steps_per_wall_second": p / per_step if per_step > 0 else None,
            "peak_rss_kib": statistics.median(r["peak_rss_kib"] for r in rs),
            "simulated_seconds_per_step": (rs[0]["simulated_seconds"] / steps
                                           if rs[0].get("simulated_seconds") is not None
                                           else None),
        }
        cpus = [r["cpu_seconds"] / r["steps"] for r in rs if r.get("cpu_seconds")]
        row[kind]["cpu_seconds_per_step"] = statistics.median(cpus) if cpus else None
        if kind == "bare":
            row[kind]["messages"] = rs[0]["messages"]
            row[kind]["add_us"] = rs[0].get("add_us", 0)
            row[kind]["model_seconds_per_step"] = rs[0]["model_seconds"] / steps
            row[kind]["ring_bytes"] = 2 * (p - 1) * rs[0]["bytes"] * steps
        else:
            row[kind]["bytes_sent"] = rs[0]["bytes_sent"]
    if "bare" in row and "simulate" in row:
        row["ratio"] = (row["simulate"]["wall_seconds_per_step"] /
                        row["bare"]["wall_seconds_per_step"])
        # Each round's two runs follow one another: their ratio leaves out
        # what the machine did over the minutes between rounds.
        by_round = {}
        for r in records:
            if r["workers"] == p:
                by_round.setdefault(r["round"], {})[r["kind"]] = r
        paired = [pair["simulate"]["wall_seconds"] / pair["bare"]["wall_seconds"]
                  for pair in by_round.values() if len(pair) == 2]
        row["round_ratios"] = paired
        row["median_round_ratio"] = statistics.median(paired)
        b_cpu = row["bare"]["cpu_seconds_per_step"]
        s_cpu = row["simulate"]["cpu_seconds_per_step"]
        row["cpu_ratio"] = s_cpu / b_cpu if b_cpu and s_cpu else None
        # Every byte the simulation sent over what the ring alone sends.
        ring = row["bare"]["ring_bytes"]
        row["bytes_sent_over_ring"] = row["simulate"]["bytes_sent"] / ring if ring else None
    rows.append(row)


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


print()
print("| P | steps | bare ring's addition us | bare ring s/step | simulate s/step "
      "| simulate / bare | median of rounds' ratios | CPU time ratio "
      "| bare worker-steps/s | simulate worker-steps/s | bare peak RSS MiB "
      "| simulate peak RSS MiB |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for row in rows:
    b, s = row.get("bare", {}), row.get("simulate", {})
    print(f"| {row['workers']} | {b.get('steps', s.get('steps'))} "
          f"| {fmt(b.get('add_us'), '.2f')} "
          f"| {fmt(b.get('wall_seconds_per_step'), '.4f')} "
          f"| {fmt(s.get('wall_seconds_per_step'), '.4f')} "
          f"| {fmt(row.get('ratio'), '.2f')} "
          f"| {fmt(row.get('median_round_ratio'), '.2f')} "
          f"| {fmt(row.get('cpu_ratio'), '.2f')} "
          f"| {fmt(b.get('worker_steps_per_wall_second'), '.1f')} "
          f"| {fmt(s.get('worker_steps_per_wall_second'), '.1f')} "
          f"| {fmt(b['peak_rss_kib'] / 1024 if b else None, '.0f')} "
          f"| {fmt(s['peak_rss_kib'] / 1024 if s else None, '.0f')} |")
for row in rows:
    over = row.get("bytes_sent_over_ring")
    if over is not None and abs(over - 1) > 0.01:
        print(f"note: at P={row['workers']} simulate sent {over:.3f}x the ring's bytes")
print(json.dumps({"benchmark": "simulate_scale", "sizes": rows}))
EOF
