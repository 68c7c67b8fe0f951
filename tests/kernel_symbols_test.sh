#!/usr/bin/env bash
# Each ISA level's kernel object (cmake/IsaKernels.cmake) may define global
# symbols of its own namespace only: an Eigen template left global would be
# merged with another level's copy by the linker, and a CPU without AVX-512
# could then run AVX-512 code (or an AVX-512 CPU SSE2 code).
# Usage: kernel_symbols_test.sh BUILD_DIR
shopt -s nullglob
objects=("$1"/nn/distlab_nn_kernels_*.o)
if [ ${#objects[@]} -eq 0 ]; then
  echo "no kernel objects under $1/nn"
  exit 1
fi
status=0
for object in "${objects[@]}"; do
  ns=${object##*/distlab_nn_kernels_}
  ns=${ns%.o}
  own="_ZN7distlab2nn7kernels${#ns}${ns}"
  foreign=$(nm -g --defined-only "$object" | awk '{print $3}' | grep -v "^$own" || true)
  count=$(nm -g --defined-only "$object" | grep -c "$own")
  if [ -n "$foreign" ] || [ "$count" -eq 0 ]; then
    echo "$object: $count symbols of its own, and global symbols of others:"
    echo "$foreign" | head -20
    status=1
  else
    echo "ok: $object defines $count global symbols, all in namespace $ns"
  fi
done
exit $status
