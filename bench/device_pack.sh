#!/usr/bin/env bash
# Packs what bench/sixteen_cores.sh needs into a folder, for a machine
# without build tools that runs another distribution (the lent 16-core
# machine: Ubuntu, its PyTorch in its own python3), small enough for a
# remote run to carry (about 40 MB):
#   DIR/bench/train_throughput, DIR/bench/realnet_allreduce
#                  wrappers that run DIR/bin/'s copies of build/bench/'s
#                  binaries with DIR/lib/ on their library path, so that
#                  the peer's processes keep the machine's own libraries
#   DIR/lib/       the shared libraries those binaries link beyond glibc
#                  and the compiler's runtime (yaml-cpp, fmt, OpenSSL's
#                  libcrypto, libgomp, zlib), as ldd finds them here
#   DIR/peers/     the peer scripts (../shared/peers)
#   DIR/fashion-mnist/  the data set the lab CNN trains on, which both
#                  sides read from /usr/share/datasets/fashion-mnist
# DIR is then what compare_torch.py and realnet_vs_gloo.sh take as
# --build-dir. The binaries are portable builds: they choose their
# kernels for the CPU they start on.
#
# Usage: bench/device_pack.sh [DIR]   (default build-device/, which git
#        ignores; built first with tools/build)
set -euo pipefail
shopt -s inherit_errexit
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
die() { echo "device_pack: $*" >&2; exit 2; }
case "${1:-}" in -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac

dir=${1:-build-device}
peers=$(cd "$root/.." && pwd)/shared/peers
data=/usr/share/datasets/fashion-mnist
binaries=(train_throughput realnet_allreduce)
[ -d "$peers" ] || die "the peer scripts ($peers) are missing"
[ -f "$data/train-images-idx3-ubyte.gz" ] || die "Fashion-MNIST is missing in $data (./setup installs it)"

tools/build --target "${binaries[@]}"
rm -rf "$dir"
mkdir -p "$dir/bench" "$dir/bin" "$dir/lib" "$dir/peers" "$dir/fashion-mnist"
for b in "${binaries[@]}"; do
  cp "build/bench/$b" "$dir/bin/"
  cat >"$dir/bench/$b" <<WRAPPER
#!/bin/sh
# build/bench/$b with the libraries packed beside it (bench/device_pack.sh).
here=\$(cd "\$(dirname "\$0")/.." && pwd)
LD_LIBRARY_PATH="\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$here/bin/$b" "\$@"
WRAPPER
  chmod +x "$dir/bench/$b"
done
# Every library ldd resolves but glibc's own and the compiler's runtime,
# which a newer distribution has in a newer, compatible version.
ldd "${binaries[@]/#/build/bench/}" |
  awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so' |
  while read -r lib; do cp -L "$lib" "$dir/lib/"; done
cp "$peers"/*.py "$dir/peers/"
cp "$data"/*.gz "$dir/fashion-mnist/"
echo "device_pack: $dir/ ($(du -sh "$dir" | cut -f1)): $(ls "$dir/lib" | tr '\n' ' ')" >&2
