#!/usr/bin/python3
"""Training throughput of distlab's NN core beside PyTorch's, in the same run.

Alternates the peer (../shared/peers/torch_train.py: the lab CNN on
Fashion-MNIST, the CIFAR MLP on random data, batch 128, 2 threads) with
bench/train_throughput on the same models, `--rounds` times, and prints the
median examples per second of each and their ratio as a Markdown table for
bench/RESULTS.md. Build first (./test or tools/build); install the peer's
packages once with ../shared/peers/setup.

Usage: bench/compare_torch.py [--rounds 5] [--threads 2 [4 8 16]] [--peers DIR] [--malloc-tune]
                              [--python PATH] [--build-dir DIR]

With several thread counts, each round runs both programs at each count,
and the table has a row per count with both sides' examples/s per thread
against their own at the smallest count (1.00: every thread adds as much
as the first ones did). It names the machine: CPU model, distlab's kernel
ISA level and the peer's PyTorch version.

--malloc-tune passes the peer's own option of that name (glibc keeps large
blocks on the heap: +25-35% for PyTorch by the peer's notes), so that the
ratio can be quoted against the peer at its best.

--python is the peer's interpreter (default Debian's /usr/bin/python3; on a
machine whose PyTorch is another interpreter's, that one), and --build-dir
the folder whose bench/train_throughput runs (default build/; a build
copied to a machine without build tools, bench/device_pack.sh).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

from machine_info import cpu_model

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


MACHINE = {}  # what the runs report about where they ran


def torch_round(args, threads):
    r = run([args.python, os.path.join(args.peers, "torch_train.py"), "--model", "both",
             "--epochs", "1", "--threads", str(threads)]
            + (["--malloc-tune"] if args.malloc_tune else []))
    MACHINE["torch"] = r.get("torch", "?")
    return {"cnn": r["cnn"]["epochs"][0]["steady_ex_per_s"], "mlp": r["mlp"]["steady_ex_per_s"]}


def distlab_round(args, threads):
    r = run([os.path.join(ROOT, args.build_dir, "bench/train_throughput"), MODELS["cnn"], MODELS["mlp"],
             "--threads", str(threads), "--steps", "200", "--warmup", "20"])
    MACHINE["isa"] = r.get("isa", "?")
    by_name = {m["model"]: m["steady_ex_per_s"] for m in r["models"]}
    return {"cnn": by_name["mnist_cnn"], "mlp": by_name["cifar10_mlp"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="+", default=[2])
    ap.add_argument("--peers", default=os.path.join(ROOT, "..", "shared", "peers"))
    ap.add_argument("--malloc-tune", action="store_true", help="the peer's --malloc-tune")
    ap.add_argument("--python", default="/usr/bin/python3", help="the peer's interpreter")
    ap.add_argument("--build-dir", default="build", help="where bench/train_throughput is")
    args = ap.parse_args()
    counts = sorted(set(args.threads))
    ours = {t: {"cnn": [], "mlp": []} for t in counts}
    theirs = {t: {"cnn": [], "mlp": []} for t in counts}
    for i in range(args.rounds):
        for t in counts:
            # Alternate who goes first, so that drift in the machine's speed
            # falls on both sides.
            order = [(distlab_round, ours[t]), (torch_round, theirs[t])]
            for fn, sink in (order if (i + counts.index(t)) % 2 == 0 else order[::-1]):
                for k, v in fn(args, t).items():
                    sink[k].append(v)
            print(f"round {i + 1}, {t} threads: distlab cnn {ours[t]['cnn'][-1]:.0f} "
                  f"mlp {ours[t]['mlp'][-1]:.0f}, pytorch cnn {theirs[t]['cnn'][-1]:.0f} "
                  f"mlp {theirs[t]['mlp'][-1]:.0f} examples/s", flush=True)
    med = statistics.median
    print(f"\nMachine: {cpu_model()}, {os.cpu_count()} CPUs; distlab kernels "
          f"{MACHINE.get('isa', '?')}; PyTorch {MACHINE.get('torch', '?')}")
    print("\n| model | threads | distlab examples/s (median) | PyTorch examples/s (median) | ratio "
          "| distlab per thread vs fewest | PyTorch per thread vs fewest |")
    print("|---|---|---|---|---|---|---|")
    base = counts[0]
    for k, name in (("cnn", "lab CNN, Fashion-MNIST"), ("mlp", "CIFAR-10 MLP")):
        for t in counts:
            a, b = med(ours[t][k]), med(theirs[t][k])
            a0, b0 = med(ours[base][k]), med(theirs[base][k])
            print(f"| {name} | {t} | {a:.0f} | {b:.0f} | {a / b:.2f}x | "
                  f"{(a / t) / (a0 / base):.2f} | {(b / t) / (b0 / base):.2f} |")
    print(f"\n{args.rounds} rounds each, peer malloc-tune "
          f"{'on' if args.malloc_tune else 'off'}; all rounds: "
          + json.dumps({"distlab": ours, "pytorch": theirs}))


if __name__ == "__main__":
    main()
