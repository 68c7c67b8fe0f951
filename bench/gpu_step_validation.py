#!/usr/bin/python3
"""The simulator's GPU step times against measured ones (issues 13 and 26).

Reads JSON-lines files of measured training steps (bench/torch_gpu_steps.py
and bench/torch_gpu_heldout.py write them on a GPU machine: a header line
naming the GPU, then one line per model, batch and precision), simulates
each of those steps with ./simulate on a machine type of that GPU (a
local-strategy scenario of the model, timing fidelity, the same batch and
precision), and prints, per row, the measured and simulated step time and
the error simulated / measured - 1, then the median and worst |error|, per
model and over every row.

--held-out DIR times each model with DIR/<model>.yaml laid over the
catalog: the GPU's figures fitted without that model's steps
(bench/fit_gpu_model.py --overlays DIR), so every row is held out.

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

from gpu_steps import DEFAULT_MEASURED, read_measured

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRECISIONS = {"fp32": "float32", "bf16": "mixed_bfloat16", "fp16": "mixed_float16"}
STEPS = 20


def simulated_step(model, batch, precision, machine, overlays, folder):
    out = os.path.join(folder, f"{model}-{batch}-{precision}")
    catalogs = []
    for path in [os.path.join(ROOT, "scenarios/machines.yaml")] + overlays:
        catalogs += ["--machines", path]
    command = [os.path.join(ROOT, "simulate"), os.path.join(ROOT, "scenarios/local_baseline.yaml"),
               *catalogs,
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
    parser.add_argument("--measured", nargs="+", default=DEFAULT_MEASURED,
                        help="measured steps (default: the H200's, bench/data/gpu_steps_h200*.jsonl)")
    parser.add_argument("--machine", default="lent-h200",
                        help="the machine type to simulate on (default lent-h200)")
    parser.add_argument("--overlay", default=os.path.join(ROOT, "bench/data/device_h200.yaml"),
                        help="a catalog overlay that defines it (default bench/data/device_h200.yaml)")
    parser.add_argument("--held-out", metavar="DIR",
                        help="time each model with DIR/<model>.yaml over the catalog: figures "
                             "fitted without it (bench/fit_gpu_model.py --overlays DIR)")
    o = parser.parse_args()
    header, rows = read_measured(o.measured)
    errors = []
    held = " (every model held out: DIR/<model>.yaml)".replace("DIR", o.held_out or "")
    print(f"Measured: {header.get('gpu')}, PyTorch {header.get('torch')}; "
          f"simulated: {o.machine}{held if o.held_out else ''}\n")
    print("| model | batch | precision | measured ms | simulated ms | error |")
    print("|---|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for r in rows:
            overlays = [o.overlay]
            if o.held_out:
                overlays.append(os.path.join(o.held_out, f"{r['model']}.yaml"))
                if not os.path.exists(overlays[-1]):
                    sys.exit(f"{overlays[-1]} is missing: bench/fit_gpu_model.py --overlays "
                             f"{o.held_out} writes it")
            sim = simulated_step(r["model"], r["batch"], r["precision"], o.machine, overlays,
                                 folder)
            e = sim / r["step_s"] - 1
            errors.append((r["precision"], abs(e), r["model"]))
            print(f"| {r['model']} | {r['batch']} | {r['precision']} | {1000 * r['step_s']:.2f} "
                  f"| {1000 * sim:.2f} | {100 * e:+.1f}% |")
    groups = [(m, [e for _, e, model in errors if model == m])
              for m in sorted({m for _, _, m in errors})]
    for label, chosen in groups + [("float32", [e for p, e, _ in errors if p == "fp32"]),
                                   ("every row", [e for _, e, _ in errors])]:
        if chosen:
            print(f"\n{label}: median |error| {100 * statistics.median(chosen):.1f}%, "
                  f"worst {100 * max(chosen):.1f}% over {len(chosen)} rows", end="")
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
