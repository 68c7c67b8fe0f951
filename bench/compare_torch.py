#!/usr/bin/python3
"""Training throughput of distlab's NN core beside PyTorch's, in the same run.

Alternates the peer (../shared/peers/torch_train.py: the lab CNN on
Fashion-MNIST, the CIFAR MLP on random data, batch 128, 2 threads) with
bench/train_throughput on the same models, `--rounds` times, and prints the
median examples per second of each and their ratio as a Markdown table for
bench/RESULTS.md. Build first (./test or tools/build); install the peer's
packages once with ../shared/peers/setup.

Usage: bench/compare_torch.py [--rounds 5] [--threads 2] [--peers DIR] [--malloc-tune]

--malloc-tune passes the peer's own option of that name (glibc keeps large
blocks on the heap: +25-35% for PyTorch by the peer's notes), so that the
ratio can be quoted against the peer at its best.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = {"cnn": "scenarios/models/mnist_cnn.yaml", "mlp": "scenarios/models/cifar10_mlp.yaml"}


def result_line(output):
    for line in output.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError("no RESULT line in:\n" + output[-2000:])


def run(cmd):
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return result_line(done.stdout)


def torch_round(args):
    r = run(["/usr/bin/python3", os.path.join(args.peers, "torch_train.py"), "--model", "both",
             "--epochs", "1", "--threads", str(args.threads)]
            + (["--malloc-tune"] if args.malloc_tune else []))
    return {"cnn": r["cnn"]["epochs"][0]["steady_ex_per_s"], "mlp": r["mlp"]["steady_ex_per_s"]}


def distlab_round(args):
    r = run([os.path.join(ROOT, "build/bench/train_throughput"), MODELS["cnn"], MODELS["mlp"],
             "--threads", str(args.threads), "--steps", "200", "--warmup", "20"])
    by_name = {m["model"]: m["steady_ex_per_s"] for m in r["models"]}
    return {"cnn": by_name["mnist_cnn"], "mlp": by_name["cifar10_mlp"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "peers"))
    ap.add_argument("--malloc-tune", action="store_true", help="the peer's --malloc-tune")
    args = ap.parse_args()
    ours, theirs = {"cnn": [], "mlp": []}, {"cnn": [], "mlp": []}
    for i in range(args.rounds):
        # Alternate who goes first, so that drift in the machine's speed
        # falls on both sides.
        order = [(distlab_round, ours), (torch_round, theirs)]
        for fn, sink in (order if i % 2 == 0 else order[::-1]):
            for k, v in fn(args).items():
                sink[k].append(v)
        print(f"round {i + 1}: distlab cnn {ours['cnn'][-1]:.0f} mlp {ours['mlp'][-1]:.0f}, "
              f"pytorch cnn {theirs['cnn'][-1]:.0f} mlp {theirs['mlp'][-1]:.0f} examples/s",
              flush=True)
    print("\n| model | distlab examples/s (median) | PyTorch examples/s (median) | ratio |")
    print("|---|---|---|---|")
    for k, name in (("cnn", "lab CNN, Fashion-MNIST"), ("mlp", "CIFAR-10 MLP")):
        a, b = statistics.median(ours[k]), statistics.median(theirs[k])
        print(f"| {name} | {a:.0f} | {b:.0f} | {a / b:.2f}x |")
    print(f"\n{args.rounds} rounds each, {args.threads} threads, peer malloc-tune "
          f"{'on' if args.malloc_tune else 'off'}; all rounds: "
          + json.dumps({"distlab": ours, "pytorch": theirs}))


if __name__ == "__main__":
    main()
