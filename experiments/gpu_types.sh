#!/usr/bin/env bash
# Lab question (lab 003, then today's cloud): which GPU machine type, and
# does mixed precision pay? The cats-vs-dogs CNN mirrored over the 4 GPUs of
# complex_model_m_gpu (K80), complex_model_m_v100 (V100), a2-highgpu-4g
# (A100) and g2-standard-48 (L4), in float32 and in mixed_float16 (figures
# from scenarios/machines.yaml). Timing fidelity. Seconds on 2 cores.
#   experiments/gpu_types.sh [OUT]          (default: runs/gpu-types)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/gpu-types}
./sweep scenarios/mirrored_4v100_mixed.yaml \
  --vary cluster.machine=complex_model_m_gpu,complex_model_m_v100,a2-highgpu-4g,g2-standard-48 \
  --vary training.precision=float32,mixed_float16 \
  --unset training.epochs --set training.steps=100 --out "$out"
./report "$out"
