#!/usr/bin/env bash
# Ring all-reduce over ./realnet's TCP runtime against PyTorch's Gloo
# backend, side by side on 127.0.0.1, and the parameter server's push/pull
# throughput (issue 4's benchmarks).
#
# Each round runs, for each P (2 and 4 unless given), one after the other
# (alternating which goes first from round to round and from P to P):
#   build/bench/realnet_allreduce --procs P           (bench/realnet_allreduce.cc)
#   /usr/bin/python3 ../shared/peers/torch_allreduce.py --procs P
# both at 1 KB, 1 MB, 25 MB and 100 MB of float32 with the peer's iteration
# counts: each prints per size the median over iterations of the slowest
# rank's time. Then it runs
#   build/bench/realnet_allreduce --procs P --ps      (1 ps + P-1 workers)
# for push/pull throughput (no peer: Gloo has no parameter server).
#
# Prints every round, then the machine (CPU model, distlab's kernel ISA
# level, the peer's PyTorch version), then Markdown tables of the medians
# over rounds:
# all-reduce time and bus bandwidth (2(P-1)/P * bytes / time) of both, the
# ratio Gloo time / distlab time (> 1: distlab is faster), the machine's
# memcpy of the buffer and distlab's bus bandwidth as a share of it, and PS pushes per
# second and GB/s through the PS (pulls and pushes); then one JSON line with
# every figure.
#
# Usage: bench/realnet_vs_gloo.sh [options]
#   --rounds R        rounds (default 3)
#   --procs "P ..."   process counts (default "2 4")
#   --iter-scale X    scale both sides' iteration counts (default 1)
#   --no-ps           skip the parameter-server runs
#   --same-host-reads also run distlab's ring with --same-host-reads (payloads
#                     read in the sending process's memory, one copy, rather
#                     than over loopback TCP), in the rotation, and report it
#                     beside the other two
#   --segment-bytes N pass --segment-bytes N to distlab's ring and PS (bytes
#                     per message; default: the scenarios' 1 MiB)
#   --build-dir DIR   binaries from DIR, built there with cmake --build
#                     (default build/, built with tools/build)
#   --no-build        use the binary as it is (a build copied to a machine
#                     without build tools)
#   --peers DIR       the peer scripts' folder (default ../shared/peers), for
#                     a machine where they were copied elsewhere
#   --python PATH     the peer's interpreter (default /usr/bin/python3, where
#                     ../shared/peers/setup installs PyTorch), for a machine
#                     whose PyTorch is another interpreter's
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
py=/usr/bin/python3
peer=$(cd "$root/.." && pwd)/shared/peers/torch_allreduce.py

rounds=3
procs=(2 4)
iter_scale=1
ps=1
segment_args=()
same_host=0
build=1
build_dir=""

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "realnet_vs_gloo: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=${2:?--rounds needs a value}; shift 2 ;;
    --procs) read -r -a procs <<<"${2:?--procs needs a value}"; shift 2 ;;
    --iter-scale) iter_scale=${2:?--iter-scale needs a value}; shift 2 ;;
    --no-ps) ps=0; shift ;;
    --same-host-reads) same_host=1; shift ;;
    --segment-bytes) segment_args=(--segment-bytes "${2:?--segment-bytes needs a value}"); shift 2 ;;
    --build-dir) build_dir=${2:?}; shift 2 ;;
    --no-build) build=0; shift ;;
    --peers) peer=${2:?--peers needs a folder}/torch_allreduce.py; shift 2 ;;
    --python) py=${2:?--python needs a path}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (--help lists them)" ;;
  esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds: a positive integer"
for p in "${procs[@]}"; do [[ "$p" =~ ^[0-9]+$ ]] && [ "$p" -ge 2 ] || die "--procs: integers >= 2"; done
[ -f "$peer" ] || die "the peer $peer is missing"
"$py" -c 'import torch' 2>/dev/null ||
  die "PyTorch is missing for $py: run ../shared/peers/setup (as root)"

if [ -z "$build_dir" ]; then
  dir=build
  [ "$build" = 1 ] && tools/build --target realnet_allreduce
else
  dir=$build_dir
  [ "$build" = 1 ] && cmake --build "$dir" -j "$(nproc)" --target realnet_allreduce >/dev/null
fi
bin=$dir/bench/realnet_allreduce
[ -x "$bin" ] || die "$bin is missing (build it, or drop --no-build)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# distlab's benchmark; its rows go to NAME-P-ROUND.jsonl and, labelled, to stderr.
run_distlab() {  # NAME P ROUND [FLAGS ...]
  local name=$1 p=$2 round=$3
  shift 3
  "$bin" --procs "$p" --iter-scale "$iter_scale" "${segment_args[@]}" "$@" \
    >"$work/$name-$p-$round.jsonl"
  sed "s/^/  $(printf '%-9s' "$name") /" "$work/$name-$p-$round.jsonl" >&2
}
run_ours() { run_distlab ours "$@"; }  # P ROUND
run_same_host() { run_distlab same-host "$@" --same-host-reads; }
run_ps() { run_distlab ps "$@" --ps; }
run_gloo() {  # P ROUND
  "$py" "$peer" --procs "$1" --iter-scale "$iter_scale" 2>/dev/null >"$work/gloo-$1-$2.txt"
  grep -v '^RESULT' "$work/gloo-$1-$2.txt" | sed 's/^/  gloo      /' >&2
}

for ((r = 1; r <= rounds; r++)); do
  i=0
  for p in "${procs[@]}"; do
    echo "round $r/$rounds, P=$p" >&2
    # Each program goes first in turn, from round to round and P to P.
    programs=(run_ours run_gloo)
    [ "$same_host" = 1 ] && programs+=(run_same_host)
    first=$(((r + i + 1) % ${#programs[@]}))
    for ((k = 0; k < ${#programs[@]}; k++)); do
      "${programs[(first + k) % ${#programs[@]}]}" "$p" "$r"
    done
    [ "$ps" = 1 ] && run_ps "$p" "$r"
    i=$((i + 1))
  done
done

PYTHONPATH="$root/bench" "$py" - "$work" "$rounds" "${segment_args[1]:-default}" "${procs[@]}" <<'EOF'
import glob, json, os, statistics, sys
from machine_info import cpu_model

work, rounds, segment, procs = sys.argv[1], int(sys.argv[2]), sys.argv[3], [int(p) for p in sys.argv[4:]]
med = statistics.median

ours, gloo, ps, same_host = {}, {}, {}, {}  # (p, size) -> list of per-round rows
order = []
for p in procs:
    for r in range(1, rounds + 1):
        for line in open(os.path.join(work, f"ours-{p}-{r}.jsonl")):
            row = json.loads(line)
            key = (p, row["size"])
            if key not in order: order.append(key)
            ours.setdefault(key, []).append(row)
        result = [l for l in open(os.path.join(work, f"gloo-{p}-{r}.txt")) if l.startswith("RESULT ")]
        for row in json.loads(result[-1][len("RESULT "):])["rows"]:
            gloo.setdefault((p, row["size"]), []).append(row)
        path = os.path.join(work, f"same-host-{p}-{r}.jsonl")
        if os.path.exists(path):
            for line in open(path):
                row = json.loads(line)
                same_host.setdefault((p, row["size"]), []).append(row)
        path = os.path.join(work, f"ps-{p}-{r}.jsonl")
        if os.path.exists(path):
            for line in open(path):
                row = json.loads(line)
                ps.setdefault((p, row["size"]), []).append(row)

def busbw(p, nbytes, seconds):
    return 2 * (p - 1) / p * nbytes / seconds / 1e9


# Where the figures hold: the CPU, the kernels' ISA level distlab ran (its
# sums), the process counts and the peer's version.
levels = sorted({row.get("isa", "?") for runs in ours.values() for row in runs})
torch_versions = set()
for p in procs:
    for r in range(1, rounds + 1):
        result = [l for l in open(os.path.join(work, f"gloo-{p}-{r}.txt")) if l.startswith("RESULT ")]
        torch_versions.add(json.loads(result[-1][len("RESULT "):]).get("torch", "?"))
machine = (f"{cpu_model()}, {os.cpu_count()} CPUs; distlab kernels {', '.join(levels)}; "
           f"PyTorch {', '.join(sorted(torch_versions))} (Gloo); P = {', '.join(map(str, procs))}")
print()
print(f"Machine: {machine}")

rows = []
print()
print(f"All-reduce, median over {rounds} round(s) of each round's median (slowest rank per iteration)"
      + (f", distlab with --segment-bytes {segment}" if segment != "default" else "") + ":")
print()
print("| P | size | distlab median ms | Gloo median ms | ratio (Gloo / distlab) | distlab busbw GB/s | Gloo busbw GB/s | memcpy GB/s | distlab busbw / memcpy |")
print("|---|---|---|---|---|---|---|---|---|")
for key in order:
    p, size = key
    nbytes = ours[key][0]["bytes"]
    ours_s = med([row["median_s"] for row in ours[key]])
    gloo_s = med([row["median_s"] for row in gloo.get(key, [])]) if key in gloo else float("nan")
    ratio = gloo_s / ours_s
    memcpy = med([row.get("memcpy_GBps", float("nan")) for row in ours[key]])
    print(f"| {p} | {size} | {ours_s * 1e3:.3f} | {gloo_s * 1e3:.3f} | **{ratio:.2f}x** | "
          f"{busbw(p, nbytes, ours_s):.3f} | {busbw(p, nbytes, gloo_s):.3f} | {memcpy:.2f} | "
          f"{busbw(p, nbytes, ours_s) / memcpy:.0%} |")
    rows.append({"p": p, "size": size, "bytes": nbytes, "iters": ours[key][0]["iters"],
                 "distlab_median_s": ours_s, "gloo_median_s": gloo_s, "ratio": ratio,
                 "distlab_busbw_GBps": busbw(p, nbytes, ours_s), "gloo_busbw_GBps": busbw(p, nbytes, gloo_s),
                 "memcpy_GBps": memcpy,
                 "distlab_rounds_s": [row["median_s"] for row in ours[key]],
                 "gloo_rounds_s": [row["median_s"] for row in gloo.get(key, [])]})

if same_host:
    print()
    print(f"All-reduce with --same-host-reads (payloads of 64 KiB and more read in the sender's memory), "
          f"median over {rounds} round(s):")
    print()
    print("| P | size | distlab same-host median ms | Gloo median ms | ratio (Gloo / same-host) | "
          "same-host busbw GB/s | same-host / distlab over TCP |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        key = (row["p"], row["size"])
        if key not in same_host: continue
        s = med([r["median_s"] for r in same_host[key]])
        print(f"| {row['p']} | {row['size']} | {s * 1e3:.3f} | {row['gloo_median_s'] * 1e3:.3f} | "
              f"**{row['gloo_median_s'] / s:.2f}x** | {busbw(row['p'], row['bytes'], s):.3f} | "
              f"{row['distlab_median_s'] / s:.2f}x |")
        row.update({"same_host_median_s": s, "same_host_ratio": row["gloo_median_s"] / s,
                    "same_host_rounds_s": [r["median_s"] for r in same_host[key]]})

ps_rows = []
if ps:
    print()
    print(f"Parameter server (1 ps + P-1 workers, pull then push of the whole buffer), median over {rounds} round(s):")
    print()
    print("| P | workers | size | pushes per round | pushes/s | GB/s through the PS |")
    print("|---|---|---|---|---|---|")
    for key, runs in ps.items():
        p, size = key
        rate = med([row["pushes_per_s"] for row in runs])
        gbps = med([row["GBps"] for row in runs])
        print(f"| {p} | {runs[0]['workers']} | {size} | {runs[0]['pushes']} | {rate:,.1f} | {gbps:.3f} |")
        ps_rows.append({"p": p, "workers": runs[0]["workers"], "size": size, "bytes": runs[0]["bytes"],
                        "pushes": runs[0]["pushes"], "pushes_per_s": rate, "GBps": gbps,
                        "rounds_pushes_per_s": [row["pushes_per_s"] for row in runs]})
print()
print(json.dumps({"machine": machine, "rounds": rounds, "cores": os.cpu_count(), "segment_bytes": segment,
                  "allreduce": rows, "ps": ps_rows}))
EOF
