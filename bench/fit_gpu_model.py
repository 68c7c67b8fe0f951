#!/usr/bin/python3
"""Fits a GPU type's whole-step figures to measured training steps (issue 26).

The simulator times a GPU step as sim/compute_model.h says: the host
dispatches every kernel (launch_us + op_us each) and pays step_us once a
step, while the device runs each operation's longer of arithmetic and
traffic (at efficiency x peak, and memory_efficiency x memory_gb_per_s)
plus kernel_device_us a kernel; a pass takes the longer of the two sides.
Mixed precision halves mixed_halved_share of the traffic. This script
fits op_us, step_us, kernel_device_us, memory_efficiency and
mixed_halved_share to steps measured on the GPU (bench/torch_gpu_steps.py
and bench/torch_gpu_heldout.py write them), with the peaks, launch_us and
efficiency as the catalog has them.

It fits on every measured row (or all but the models of --hold-out, whose
error it then reports apart), and prints the figures as catalog lines. The
held-out error: it fits once per model on all the others (leave one model
out) and reports each model's error under the figures that never saw it.
--overlays DIR writes those figures, one catalog overlay per model, so that
the simulator itself can time each model with them:
bench/gpu_step_validation.sh --held-out DIR.

The operations of each step are the simulator's own (build/bench/gpu_step_work
prints them), so the fit sees what ./simulate will time.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

import numpy
import yaml
from gpu_steps import DEFAULT_MEASURED, read_measured
from scipy.optimize import least_squares

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRECISIONS = {"fp32": "float32", "bf16": "mixed_bfloat16", "fp16": "mixed_float16"}
FITTED = ["op_us", "step_us", "kernel_device_us", "memory_efficiency", "mixed_halved_share"]
# Where the searches start. A figure of the side that does not bind a row
# has no pull on it, so one start can stall where the device never binds:
# the fit starts from a grid of device figures and keeps the best end.
START = {"op_us": 36, "step_us": 500, "mixed_halved_share": 0.7}
DEVICE_STARTS = [{"kernel_device_us": k, "memory_efficiency": m}
                 for k in (1, 10) for m in (0.05, 0.2, 0.6)]
# The shares are fractions; the search runs on their logits, the rest on logs.
FRACTIONS = {"memory_efficiency", "mixed_halved_share"}


def step_operations(model, batch, precision):
    tool = os.path.join(ROOT, "build/bench/gpu_step_work")
    out = subprocess.run([tool, "--model", os.path.join(ROOT, f"scenarios/models/{model}.yaml"),
                          "--batch", str(batch), "--precision", PRECISIONS[precision]],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{tool} failed for {model} at batch {batch}: {out.stderr.strip()}")
    return [json.loads(line) for line in out.stdout.splitlines()]


def catalog_gpu(name):
    with open(os.path.join(ROOT, "scenarios/machines.yaml")) as f:
        for gpu in yaml.safe_load(f)["gpus"]:
            if gpu["name"] == name:
                return gpu
    sys.exit(f"scenarios/machines.yaml has no GPU named '{name}'")


def flop_rate(gpu, kind, precision):
    """FLOP/s of one operation, as sim/machine.cc derives it from the catalog."""
    peak = gpu["peak_tflops"] * 1e12
    if kind in ("dense", "convolution"):
        if precision == "float32":
            peak = gpu.get("tf32_tflops", 0) * 1e12 or peak
        elif precision == "mixed_float16":
            peak = gpu.get("fp16_tflops", 0) * 1e12 or peak
        else:
            peak = gpu.get("bf16_tflops", 0) * 1e12 or peak
    return peak * gpu["efficiency"]


def step_seconds(operations, gpu, figures):
    """One step as the simulator times it: the forward and backward passes
    as one (the host runs ahead of the device, the longer side counts), then
    the update the same way."""
    host_per_kernel = (gpu["launch_us"] + figures["op_us"]) * 1e-6
    bandwidth = gpu["memory_gb_per_s"] * 1e9 * figures["memory_efficiency"]
    sides = {"step": [figures["step_us"] * 1e-6, 0.0], "update": [0.0, 0.0]}
    for op in operations:
        side = sides["update" if op["pass"] == "update" else "step"]
        rate = bandwidth
        if op["precision"] != "float32":
            rate /= 1 - figures["mixed_halved_share"] / 2
        device = max(op["flops"] / flop_rate(gpu, op["kind"], op["precision"]), op["bytes"] / rate)
        side[0] += op["kernels"] * host_per_kernel
        side[1] += device + op["kernels"] * figures["kernel_device_us"] * 1e-6
    return sum(max(host, device) for host, device in sides.values())


def to_figures(x):
    return {name: 1 / (1 + math.exp(-v)) if name in FRACTIONS else math.exp(v)
            for name, v in zip(FITTED, x)}


def fit(rows, gpu):
    def residuals(x):
        figures = to_figures(x)
        return [math.log(step_seconds(r["operations"], gpu, figures) / r["step_s"]) for r in rows]

    best = None
    for device in DEVICE_STARTS:
        start = {**START, **device}
        x0 = [math.log(start[n] / (1 - start[n])) if n in FRACTIONS else math.log(start[n])
              for n in FITTED]
        # A robust loss: a few noisy small steps (their blocks spread by up
        # to 50%) do not pull the figures.
        result = least_squares(residuals, numpy.array(x0), loss="soft_l1", f_scale=0.1)
        if best is None or result.cost < best.cost:
            best = result
    return to_figures(best.x)


def write_overlay(path, gpu, figures, model):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    entry = dict(gpu)
    for name in FITTED:
        entry[name] = float(f"{figures[name]:.3g}")
    with open(path, "w") as f:
        f.write(f"# The catalog's {gpu['name']} with the figures bench/fit_gpu_model.py fitted\n"
                f"# without {model}'s steps: that model, timed with them, is held out.\n")
        yaml.safe_dump({"gpus": [entry]}, f, sort_keys=False)


def errors(rows, gpu, figures):
    return [step_seconds(r["operations"], gpu, figures) / r["step_s"] - 1 for r in rows]


def summary(label, errs):
    a = [abs(e) for e in errs]
    return (f"{label}: median |error| {100 * statistics.median(a):.1f}%, "
            f"worst {100 * max(a):.1f}% over {len(a)} rows")


def main():
    parser = argparse.ArgumentParser(prog="bench/fit_gpu_model.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--measured", nargs="+", default=DEFAULT_MEASURED,
                        help="measured steps, JSON lines (default: the H200's two files)")
    parser.add_argument("--gpu", default="h200", help="the catalog's GPU type (default h200)")
    parser.add_argument("--hold-out", default="",
                        help="models left out of the fit, comma-separated: their error is "
                             "reported apart (default: none, fit on every row)")
    parser.add_argument("--overlays", metavar="DIR",
                        help="write DIR/<model>.yaml: a catalog overlay whose GPU has the figures "
                             "fitted without that model (for gpu_step_validation.sh --held-out)")
    o = parser.parse_args()
    gpu = catalog_gpu(o.gpu)
    _, rows = read_measured(o.measured)
    for r in rows:
        r["operations"] = step_operations(r["model"], r["batch"], r["precision"])
    held_models = {m for m in o.hold_out.split(",") if m}
    train = [r for r in rows if r["model"] not in held_models]
    held = [r for r in rows if r["model"] in held_models]
    fitted_models = {r["model"] for r in train}
    if not train:
        sys.exit("every measured row is held out: nothing to fit")
    figures = fit(train, gpu)
    print(f"Fitted on {len(train)} rows of {', '.join(sorted(fitted_models))}; "
          f"GPU {o.gpu} of scenarios/machines.yaml\n")
    for name in FITTED:
        print(f"    {name}: {figures[name]:.3g}")
    print()
    print("| model | batch | precision | measured ms | simulated ms | error | |")
    print("|---|---:|---|---:|---:|---:|---|")
    for r in rows:
        sim = step_seconds(r["operations"], gpu, figures)
        role = "fitted" if r["model"] in fitted_models else "held out"
        print(f"| {r['model']} | {r['batch']} | {r['precision']} | {1000 * r['step_s']:.2f} "
              f"| {1000 * sim:.2f} | {100 * (sim / r['step_s'] - 1):+.1f}% | {role} |")
    print()
    print(summary("fitted models", errors(train, gpu, figures)))
    if held:
        print(summary("held-out models", errors(held, gpu, figures)))
    print(summary("every row", errors(rows, gpu, figures)))
    models = sorted({r["model"] for r in rows})
    if len(models) > 2:
        print("\nLeave one model out (fitted on the others, the error on it):")
        every = []
        for m in models:
            out = [r for r in rows if r["model"] == m]
            without = fit([r for r in rows if r["model"] != m], gpu)
            e = errors(out, gpu, without)
            every += e
            print("  " + summary(m, e))
            if o.overlays:
                write_overlay(os.path.join(o.overlays, f"{m}.yaml"), gpu, without, m)
        print("  " + summary("together", every))
    return 0


if __name__ == "__main__":
    sys.exit(main())
