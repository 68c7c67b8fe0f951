#!/usr/bin/env bash
# The stack a simulated ring member uses per message, in ./simulate and in
# the bare SimGrid ring (bench/bare_ring.cc), side by side: gdb stops at
# every SimGrid context switch of a small ring and measures the stack from
# the ring walk's frame to the switch (bench/stack_depth.py). A member
# among a thousand finds each line of it out of the caches when it resumes,
# three times a message, so the difference is a floor of what distlab adds
# to each message's cost at scale (bench/simulate_scale.sh measures that
# cost in wall time).
#
# Prints a Markdown table per program: the blocking point (the outermost
# SimGrid call), the switches seen there, and the bytes of stack, the
# program's own and SimGrid's (each distinct pair, most common first);
# then, for each point, the program's frames from the walk inwards with
# the bytes each adds.
#
# Usage: bench/stack_depth.sh [options]
#   --workers P       replicas (default 8: every kind of message, quickly)
#   --build-dir DIR   binaries from DIR, built there with cmake --build
#                     (default build/, built with tools/build); not a
#                     sanitizer build (refused). gdb names
#                     inlined frames only in a build with -g; without, the
#                     function a frame is inlined into stands for it, and
#                     the bytes are the same.
#   --no-build        use the binaries as they are
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "stack_depth: $*" >&2; exit 2; }

py=/usr/bin/python3  # Debian's, whatever python3 is first on the PATH
workers=8
build_dir=""
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) workers=${2:?--workers needs a value}; shift 2 ;;
    --build-dir) build_dir=${2:?--build-dir needs a value}; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (--help lists them)" ;;
  esac
done
[[ "$workers" =~ ^[0-9]+$ ]] && [ "$workers" -ge 2 ] || die "--workers: an integer >= 2, not $workers"
command -v gdb >/dev/null || die "gdb is missing (apt-get install gdb)"

if [ "$build" = 1 ]; then
  if [ -z "$build_dir" ]; then
    tools/build --target distlab-simulate bare_ring
  else
    log=${TMPDIR:-/tmp}/stack_depth_build.log
    cmake --build "$build_dir" -j "$(nproc)" --target distlab-simulate bare_ring >"$log" 2>&1 ||
      die "building in $build_dir failed (log: $log)"
  fi
fi
build_dir=${build_dir:-build}
sim_bin=$build_dir/bin/distlab-simulate
bare_bin=$build_dir/bench/bare_ring
[ -x "$sim_bin" ] && [ -x "$bare_bin" ] || die "binaries missing in $build_dir (run without --no-build)"
# A sanitizer build's frames carry redzones and inline otherwise: its bytes
# say nothing of the Release build's, which is what runs at scale.
if grep -q '^DISTLAB_SANITIZE:BOOL=ON' "$build_dir/CMakeCache.txt" 2>/dev/null; then
  die "$build_dir is a sanitizer build; its frames are not the Release build's (use build/)"
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
scenario=scenarios/timing_1024_workers.yaml

# measure NAME WALK_FRAMES PROGRAM ARGS...: the script's JSON line. The
# walk's frame is the first from the switch outwards whose name holds one
# of WALK_FRAMES ('|' between): the walk's own where gdb names inlined
# frames (-g), else the function it is inlined into.
measure() {
  local name=$1 walk=$2
  shift 2
  gdb -q -batch -ex "python walk_frame = '$walk'" -x bench/stack_depth.py -ex run --args "$@" \
    >"$scratch/$name.gdb" 2>&1 || die "gdb on $name failed: $(tail -5 "$scratch/$name.gdb")"
  sed -n 's/^STACK_DEPTH //p' "$scratch/$name.gdb" >"$scratch/$name.json"
  if [ ! -s "$scratch/$name.json" ]; then
    die "no measure from $name: $(grep -m1 STACK_DEPTH_NONE "$scratch/$name.gdb" || tail -5 "$scratch/$name.gdb")"
  fi
}

echo "stack_depth: ./simulate, $workers replicas, one step, under gdb" >&2
measure simulate 'walk_ring|distlab::strategy::ring_allreduce' "$sim_bin" "$scenario" --set "cluster.workers=$((workers - 1))" \
  --set training.steps=1 --quiet --out "$scratch/run"
# The bare ring moves the same buffer with the same addition per round.
model_bytes=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["model_bytes"])' \
  "$scratch/run/summary.json")
echo "stack_depth: bare ring, $workers members, $model_bytes bytes, under gdb" >&2
measure bare 'ring_member|start_ring' "$bare_bin" --workers "$workers" --bytes "$model_bytes" --steps 1 \
  --send kept --add-us 3

"$py" - "$scratch/simulate.json" "$scratch/bare.json" <<'EOF'
import json
import sys

for title, path in (("./simulate", sys.argv[1]), ("bare SimGrid ring", sys.argv[2])):
    points = json.load(open(path))
    print(f"\n{title}\n")
    print("| blocks in | switches | own bytes | SimGrid bytes | total (count) |")
    print("|---|---|---|---|---|")
    for point, seen in points.items():
        pairs = sorted(seen["own_simgrid_bytes"], key=lambda p: -p[2])
        own = "/".join(str(p[0]) for p in pairs[:3])
        sg = "/".join(str(p[1]) for p in pairs[:3])
        total = ", ".join(f"{p[0] + p[1]} ({p[2]})" for p in pairs[:3])
        print(f"| `{point}` | {seen['switches']} | {own} | {sg} | {total} |")
    print("\nThe program's frames (bytes each) at the most common depth of each:\n")
    for point, seen in points.items():
        own, sg, _ = max(seen["own_simgrid_bytes"], key=lambda p: p[2])
        frames = seen["own_frames"][f"{own}+{sg}"]
        chain = " > ".join(f"{name} {size}" for name, size in frames) or "(none)"
        print(f"- `{point}`: {chain}")
EOF
