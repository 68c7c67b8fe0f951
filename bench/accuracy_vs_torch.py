#!/usr/bin/python3
"""Test accuracy of the lab CNN on Fashion-MNIST after each epoch, distlab
beside PyTorch with the same settings (Glorot-uniform weights, zero biases,
SGD 0.01 momentum 0.9, batch 128, 2 threads), for several seeds. Prints a
Markdown table of the accuracies after 1, 2 and the last epoch; --json keeps
every run's curve, --plot draws the median curves (gnuplot), and --load
redraws or retabulates a kept JSON without training again.

Usage: bench/accuracy_vs_torch.py [--epochs 10] [--seeds 0 1] [--peers DIR]
                                  [--json FILE] [--plot FILE.png] [--load FILE]
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
        cmd = [os.path.join(ROOT, "build/bin/distlab-train"), "--epochs", str(epochs),
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


def medians(runs):
    """Per side, the median test accuracy at each epoch over the seeds."""
    return {k: [statistics.median(r[e] for r in v) for e in range(len(v[0]))]
            for k, v in runs.items()}


def plot(runs, path):
    curves = medians(runs)
    with tempfile.NamedTemporaryFile("w", suffix=".dat", delete=False) as data:
        for e in range(len(curves["distlab"])):
            data.write(f"{e + 1} {curves['distlab'][e]} {curves['pytorch'][e]}\n")
    seeds = len(runs["distlab"])
    script = f"""
set terminal pngcairo size 800,420 font 'sans,10'
set output '{path}'
set title 'Lab CNN on Fashion-MNIST: test accuracy (median of {seeds} seeds)'
set xlabel 'epoch'
set ylabel 'test accuracy'
set key bottom right
set grid
set xtics 1
plot '{data.name}' using 1:2 with linespoints title 'distlab', \\
     '{data.name}' using 1:3 with linespoints title 'PyTorch 1.13'
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.unlink(data.name)
    print(f"wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "peers"))
    ap.add_argument("--json", help="write every run's accuracies here")
    ap.add_argument("--plot", help="draw the median curves into this PNG")
    ap.add_argument("--load", help="take the runs from a --json file instead of training")
    args = ap.parse_args()
    if args.load:
        with open(args.load) as f:
            runs = json.load(f)
    else:
        runs = {"distlab": [], "pytorch": []}
        for seed in args.seeds:
            runs["distlab"].append(distlab(args.epochs, seed))
            runs["pytorch"].append(pytorch(args.epochs, seed, args.peers))
            print(f"seed {seed}: distlab {runs['distlab'][-1]}\n"
                  f"        pytorch {runs['pytorch'][-1]}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    curves = medians(runs)
    epochs = len(curves["distlab"])
    print("\n| after epoch | " + " | ".join(
        f"{k} (median of {len(runs[k])} seeds)" for k in runs) + " |")
    print("|---|" + "---|" * len(runs))
    for e in sorted({1, 2, epochs}):
        print(f"| {e} | " + " | ".join(f"{curves[k][e - 1]:.4f}" for k in runs) + " |")
    if args.plot:
        plot(runs, args.plot)


if __name__ == "__main__":
    sys.exit(main())
