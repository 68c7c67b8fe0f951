#!/usr/bin/python3
"""Test accuracy of the lab CNN on Fashion-MNIST after each epoch, distlab
beside PyTorch with the same settings (Glorot-uniform weights, zero biases,
SGD 0.01 momentum 0.9, batch 128, 2 threads), for several seeds. Prints a
Markdown table of the accuracies after 1, 2 and the last epoch.

Usage: bench/accuracy_vs_torch.py [--epochs 10] [--seeds 0 1] [--peers DIR]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def distlab(epochs, seed):
    with tempfile.TemporaryDirectory() as out:
        cmd = [os.path.join(ROOT, "build/nn/distlab-train"), "--epochs", str(epochs),
               "--seed", str(seed), "--out", out, "--quiet"]
        subprocess.run(cmd, cwd=ROOT, check=True)
        with open(os.path.join(out, "curve.csv")) as f:
            return [float(row["test_accuracy"]) for row in csv.DictReader(f)]


def pytorch(epochs, seed, peers):
    done = subprocess.run(["/usr/bin/python3", os.path.join(peers, "torch_train.py"), "--model",
                           "cnn", "--epochs", str(epochs), "--seed", str(seed)],
                          capture_output=True, text=True, check=True)
    line = next(l for l in done.stdout.splitlines() if l.startswith("RESULT "))
    return [e["test_acc"] for e in json.loads(line[7:])["cnn"]["epochs"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "peers"))
    args = ap.parse_args()
    runs = {"distlab": [], "pytorch": []}
    for seed in args.seeds:
        runs["distlab"].append(distlab(args.epochs, seed))
        runs["pytorch"].append(pytorch(args.epochs, seed, args.peers))
        print(f"seed {seed}: distlab {runs['distlab'][-1]}\n        pytorch {runs['pytorch'][-1]}",
              flush=True)
    marks = sorted({1, 2, args.epochs})
    print("\n| after epoch | " + " | ".join(f"{k} (median of {len(args.seeds)} seeds)" for k in runs) + " |")
    print("|---|" + "---|" * len(runs))
    for e in marks:
        cells = [f"{statistics.median(r[e - 1] for r in runs[k]):.4f}" for k in runs]
        print(f"| {e} | " + " | ".join(cells) + " |")
    print("\nall runs: " + json.dumps(runs))


if __name__ == "__main__":
    sys.exit(main())
