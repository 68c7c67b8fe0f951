#!/usr/bin/env bash
# The many-core figures, from a build packed by bench/device_pack.sh, on a
# machine without build tools (the lent 16-core machine), in one command:
#   torch  bench/compare_torch.py --threads 2 16: the NN core against
#          PyTorch at 2 and 16 threads
#   gloo   bench/realnet_vs_gloo.sh --procs "2 4 8 16" --same-host-reads
#          --no-ps: the ring all-reduce, over TCP and read in place,
#          against Gloo
# Both sides run on that machine side by side, as the two scripts run
# them anywhere. Fashion-MNIST goes to /usr/share/datasets/fashion-mnist
# from the pack first if it is not there (as root). Each part's table goes
# to OUTDIR/<part>.md and its rounds to OUTDIR/<part>.log, and the machine
# (lscpu, the peer's PyTorch) to OUTDIR/machine.txt.
#
# Usage: bench/sixteen_cores.sh [options] [torch|gloo ...]   (default both)
#   --pack DIR      the packed build (default build-device)
#   --out OUTDIR    default $OUT where set, else sixteen-cores/ here
#   --python PATH   the peer's interpreter (default python3: the one with
#                   PyTorch on that machine)
#   --rounds R      rounds of each part (default 2)
#   --threads "T ..."  compare_torch's thread counts (default "2 16")
#   --procs "P ..."    realnet_vs_gloo's process counts (default "2 4 8 16")
# On 16 cores both parts take about 8 minutes at 2 rounds; run them one
# call each where a call has less time.
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "sixteen_cores: $*" >&2; exit 2; }

pack=build-device
out=${OUT:-sixteen-cores}
py=python3
rounds=2
threads="2 16"
procs="2 4 8 16"
parts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --pack) pack=${2:?--pack needs a folder}; shift 2 ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --python) py=${2:?--python needs a path}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a value}; shift 2 ;;
    --threads) threads=${2:?--threads needs a value}; shift 2 ;;
    --procs) procs=${2:?--procs needs a value}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    torch | gloo) parts+=("$1"); shift ;;
    *) die "unknown argument $1 (--help lists them)" ;;
  esac
done
[ ${#parts[@]} -gt 0 ] || parts=(torch gloo)
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds: a positive integer"
[ -x "$pack/bench/train_throughput" ] && [ -x "$pack/bench/realnet_allreduce" ] ||
  die "$pack/ is not a packed build (bench/device_pack.sh $pack)"
"$py" -c 'import torch' 2>/dev/null || die "$py has no PyTorch (--python names the one that has)"
mkdir -p "$out"

data=/usr/share/datasets/fashion-mnist
if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
  mkdir -p "$data" && cp "$pack"/fashion-mnist/*.gz "$data/" ||
    die "cannot install Fashion-MNIST in $data (run as root)"
fi

{
  lscpu
  echo "nproc: $(nproc)"
  "$py" -c 'import torch; print("PyTorch", torch.__version__, "threads", torch.get_num_threads())'
} >"$out/machine.txt" 2>&1

for part in "${parts[@]}"; do
  echo "sixteen_cores: $part, $rounds rounds, from $(date -u +%H:%M:%S) UTC" >&2
  case "$part" in
    torch)
      # shellcheck disable=SC2086  # the thread counts are separate words
      bench/compare_torch.py --build-dir "$pack" --peers "$pack/peers" --python "$py" \
        --rounds "$rounds" --threads $threads >"$out/torch.log" 2>&1 ||
        die "compare_torch failed: $(tail -5 "$out/torch.log")"
      sed -n '/^Machine:/,$p' "$out/torch.log" >"$out/torch.md"
      ;;
    gloo)
      bench/realnet_vs_gloo.sh --no-build --build-dir "$pack" --peers "$pack/peers" \
        --python "$py" --rounds "$rounds" --procs "$procs" --same-host-reads --no-ps \
        >"$out/gloo.md" 2>"$out/gloo.log" ||
        die "realnet_vs_gloo failed: $(tail -5 "$out/gloo.log")"
      ;;
  esac
  cat "$out/$part.md"
done
