#!/usr/bin/env bash
# The portable binaries start on any x86-64 CPU and pick the kernels that
# CPU runs: the kernel tests and a short ./train run (the small wide & deep
# model: emulation trains a few hundred examples a second) under QEMU's
# user-mode emulation of older CPUs (qemu64: the x86-64 baseline, SSE2
# only; Nehalem: x86-64-v2; Haswell: x86-64-v3, AVX2 and FMA). QEMU
# emulates no AVX-512, so x86-64-v4 is left to the machine itself.
# Skipped (77) without qemu-x86_64 (./setup installs qemu-user) or in a
# build for one -march.
# Usage: emulated_cpu_test.sh TEST_NN DISTLAB_TRAIN
set -uo pipefail
test_nn=$1 train=$2
command -v qemu-x86_64 >/dev/null || { echo "skipped: no qemu-x86_64"; exit 77; }
if ! "$train" --help | grep -q 'DISTLAB_ISA=x86-64-v4|x86-64-v3|x86-64 '; then
  echo "skipped: not a portable build"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"

for pair in qemu64:x86-64 Nehalem:x86-64 Haswell:x86-64-v3; do
  cpu=${pair%%:*} level=${pair#*:}
  # The CPU models name features TCG lacks (pcid, x2apic): QEMU warns and
  # goes on, so its warnings are dropped.
  qemu-x86_64 -cpu "$cpu" "$test_nn" "[kernels]" >"$work/kernels-$cpu" 2>&1
  check "$cpu: the kernel tests pass" grep -q "All tests passed" "$work/kernels-$cpu"
  grep -q "All tests passed" "$work/kernels-$cpu" || tail -30 "$work/kernels-$cpu"

  env -u DISTLAB_ISA qemu-x86_64 -cpu "$cpu" "$train" scenarios/models/taxi_wide_deep.yaml \
    --data synthetic-taxi:1024 --epochs 1 --threads 1 --out "$work/train-$cpu" \
    >"$work/train-$cpu.out" 2>/dev/null
  check "$cpu: ./train starts, trains and names $level kernels" \
    grep -q ", $level kernels$" "$work/train-$cpu.out"
  check "$cpu: ... and summary.json's isa is $level" \
    grep -q "\"isa\": \"$level\"" "$work/train-$cpu/summary.json"
done
exit $failures
