#!/usr/bin/python3
"""The simulator's GPU step times against measured ones (issue 13).

Reads a JSON-lines file of measured training steps (bench/torch_gpu_steps.py
writes them on a GPU machine: a header line naming the GPU, then one line
per model, batch and precision), simulates each of those steps with
./simulate on a machine type of that GPU (a local-strategy scenario of the
model, timing fidelity, the same batch and precision), and prints, per
row, the measured and simulated step time and the error simulated /
measured - 1, then the median and worst |error|.

Precisions map as: fp32 -> float32, bf16 -> mixed_bfloat16,
fp16 -> mixed_float16.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRECISIONS = {"fp32": "float32", "bf16": "mixed_bfloat16", "fp16": "mixed_float16"}
STEPS = 20


def simulated_step(model, batch, precision, machine, overlay, folder):
    out = os.path.join(folder, f"{model}-{batch}-{precision}")
    command = [os.path.join(ROOT, "simulate"), os.path.join(ROOT, "scenarios/local_baseline.yaml"),
               "--machines", os.path.join(ROOT, "scenarios/machines.yaml"), "--machines", overlay,
               "--set", f"model=models/{model}.yaml", "--set", "data=synthetic:20000",
               "--set", f"cluster.machine={machine}", "--set", f"training.batch_size={batch}",
               "--unset", "training.epochs", "--set", f"training.steps={STEPS}",
               "--set", f"training.precision={PRECISIONS[precision]}",
               "--fidelity", "timing", "--quiet", "--out", out]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"./simulate failed: {' '.join(command)}\n{result.stderr}")
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)["median_step_seconds"]


def main():
    parser = argparse.ArgumentParser(prog="bench/gpu_step_validation.sh",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--measured", default=os.path.join(ROOT, "bench/data/gpu_steps_h200.jsonl"),
                        help="measured steps (default: the H200's, bench/data/gpu_steps_h200.jsonl)")
    parser.add_argument("--machine", default="lent-h200",
                        help="the machine type to simulate on (default lent-h200)")
    parser.add_argument("--overlay", default=os.path.join(ROOT, "bench/data/device_h200.yaml"),
                        help="a catalog overlay that defines it (default bench/data/device_h200.yaml)")
    o = parser.parse_args()
    with open(o.measured) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    # Rows a measurement skipped (its time budget spent) say so and have no step.
    header, rows = lines[0], [r for r in lines[1:] if "step_s" in r]
    errors = []
    print(f"Measured: {header.get('gpu')}, PyTorch {header.get('torch')}; "
          f"simulated: {o.machine}\n")
    print("| model | batch | precision | measured ms | simulated ms | error |")
    print("|---|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for r in rows:
            sim = simulated_step(r["model"], r["batch"], r["precision"], o.machine, o.overlay,
                                 folder)
            e = sim / r["step_s"] - 1
            errors.append((r["precision"], abs(e)))
            print(f"| {r['model']} | {r['batch']} | {r['precision']} | {1000 * r['step_s']:.2f} "
                  f"| {1000 * sim:.2f} | {100 * e:+.1f}% |")
    for label, chosen in (("float32", [e for p, e in errors if p == "fp32"]),
                          ("every row", [e for _, e in errors])):
        if chosen:
            print(f"\n{label}: median |error| {100 * statistics.median(chosen):.1f}%, "
                  f"worst {100 * max(chosen):.1f}% over {len(chosen)} rows", end="")
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
