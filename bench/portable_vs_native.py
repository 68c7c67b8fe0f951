#!/usr/bin/python3
"""Training throughput of the portable build beside a native build, in the same run.

The portable build (build/, DISTLAB_ARCH=portable: the NN core's kernels for
x86-64, x86-64-v3 and x86-64-v4, chosen at start) and a build of everything
for this CPU (build-native/, DISTLAB_ARCH=native) run bench/train_throughput
on the lab CNN (Fashion-MNIST) and the CIFAR-10 MLP, batch 128, alternating
who goes first, `--rounds` times. Also runs the portable build with
DISTLAB_ISA=x86-64 (its baseline SSE2 kernels: what a portable binary ran
before run-time dispatch). Prints the medians and the ratios as a Markdown
table for bench/RESULTS.md. Builds what is missing first.

Usage: bench/portable_vs_native.py [--rounds 5] [--threads 2] [--steps 200]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {"cnn": "scenarios/models/mnist_cnn.yaml", "mlp": "scenarios/models/cifar10_mlp.yaml"}
NAMES = {"mnist_cnn": "cnn", "cifar10_mlp": "mlp"}


def build(arch, directory):
    subprocess.run(["cmake", "-S", ROOT, "-B", os.path.join(ROOT, directory),
                    "-DCMAKE_BUILD_TYPE=Release", f"-DDISTLAB_ARCH={arch}"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", os.path.join(ROOT, directory), "-j",
                    str(os.cpu_count() or 2), "--target", "train_throughput"],
                   check=True, stdout=subprocess.DEVNULL)


def throughput(directory, args, isa=None):
    env = dict(os.environ)
    env.pop("DISTLAB_ISA", None)
    if isa:
        env["DISTLAB_ISA"] = isa
    done = subprocess.run([os.path.join(ROOT, directory, "bench/train_throughput"), MODELS["cnn"],
                           MODELS["mlp"], "--threads", str(args.threads), "--steps",
                           str(args.steps), "--warmup", "20"],
                          cwd=ROOT, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"{directory} failed:\n{done.stderr[-2000:]}")
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
            return {NAMES[m["model"]]: m["steady_ex_per_s"] for m in result["models"]}, \
                result.get("isa", "?")
    sys.exit(f"no RESULT line from {directory}:\n{done.stdout[-2000:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    build("portable", "build")
    build("native", "build-native")
    sides = {"portable": ("build", None), "native": ("build-native", None),
             "baseline": ("build", "x86-64")}
    runs = {side: {"cnn": [], "mlp": []} for side in sides}
    levels = {}
    order = list(sides)
    for i in range(args.rounds):
        # Rotate who goes first, so that drift in the machine's speed falls
        # on every side.
        for side in order[i % len(order):] + order[:i % len(order)]:
            directory, isa = sides[side]
            result, levels[side] = throughput(directory, args, isa)
            for model, value in result.items():
                runs[side][model].append(value)
        print(f"round {i + 1}: " + ", ".join(
            f"{side} cnn {runs[side]['cnn'][-1]:.0f} mlp {runs[side]['mlp'][-1]:.0f}"
            for side in sides) + " examples/s", flush=True)
    print("\n| model | native ex/s | portable ex/s | portable / native | "
          "portable, x86-64 kernels ex/s | x86-64 kernels / native |")
    print("|---|---|---|---|---|---|")
    for key, name in (("cnn", "lab CNN, Fashion-MNIST"), ("mlp", "CIFAR-10 MLP")):
        native, portable, baseline = (statistics.median(runs[s][key])
                                      for s in ("native", "portable", "baseline"))
        print(f"| {name} | {native:.0f} | {portable:.0f} | {portable / native:.2f}x | "
              f"{baseline:.0f} | {baseline / native:.2f}x |")
    print(f"\n{args.rounds} rounds, {args.threads} threads, kernels: "
          + ", ".join(f"{side} {levels[side]}" for side in sides) + "; all rounds: "
          + json.dumps(runs))


if __name__ == "__main__":
    main()
