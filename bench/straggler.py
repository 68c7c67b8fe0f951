#!/usr/bin/python3
"""What one slow task costs each strategy, simulated and real, side by side
on this machine (issue 28's first question: why asynchronous training
exists).

For each shape, runs the scenario with every task at its machine's speed
and with one worker slowed by FACTOR (scenario `slowdowns`), REPEAT times
each for real (./realnet --launch, the even and the slowed runs
alternating) and once in the simulator on this machine's calibrated
`local` type (one simulated host of its cores, as bench/fidelity.py does).
Prints examples per second from the first step, and the ratio slowed /
even: simulated, and the median of the real runs'.

A synchronous all-reduce waits for its slowest replica at every step; an
asynchronous parameter server's other workers go on. On a machine whose
cores the tasks share, the slowed task holds a core for its extra time
(./realnet) and the others have less of them: that is part of what is
measured, and the simulation charges the same.

Writes DIR/straggler.json and DIR/straggler.md.
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

from machine_info import cpu_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CNN_PS = ["--set", "strategy.name=parameter_server", "--set", "cluster.ps=1", "--set",
          "cluster.workers=2", "--set", "training.batch_size=43", "--unset", "training.epochs",
          "--set", "training.steps=60", "--set", "training.eval_every=0"]

# (name, what it is, scenario, overrides, the task slowed)
SHAPES = [
    ("ring-3-cnn", "sync all-reduce, chief + 2 workers, lab CNN", "scenarios/mnist_cnn_sync.yaml",
     ["--set", "cluster.workers=2", "--unset", "training.epochs", "--set", "training.steps=60",
      "--set", "training.eval_every=0"], "worker:1"),
    # The same CNN and replicas under parameter servers, each worker's batch
    # the ring's share of its global 128.
    ("ps-async-3-cnn", "async parameter server, chief + 2 workers + ps, lab CNN",
     "scenarios/mnist_cnn_sync.yaml", CNN_PS + ["--set", "strategy.mode=async"], "worker:1"),
    ("ps-backup-3-cnn", "sync parameter server taking 2 of 3 pushes a step, lab CNN",
     "scenarios/mnist_cnn_sync.yaml", CNN_PS + ["--set", "strategy.mode=sync", "--set",
                                                "strategy.replicas_to_aggregate=2"], "worker:1"),
    ("ps-async-6-wide", "async parameter server, chief + 4 workers + ps, wide & deep",
     "scenarios/ps_4workers.yaml", ["--set", "training.eval_every=0"], "worker:1"),
    ("ps-sync-6-wide", "sync parameter server, chief + 4 workers + ps, wide & deep",
     "scenarios/ps_4workers.yaml", ["--set", "strategy.mode=sync", "--set",
                                    "training.eval_every=0"], "worker:1"),
]


def log(line):
    print(line, file=sys.stderr, flush=True)


def run(command):
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        log(f"  failed ({result.returncode}): {' '.join(command)}")
        log("  " + "\n  ".join((result.stderr or result.stdout).strip().splitlines()[-5:]))
        return None
    return result


def examples_per_second(folder):
    with open(os.path.join(folder, "summary.json")) as f:
        return json.load(f)["training_examples_per_second"]


def others_step_rate(folder, slowed):
    """The median over the replicas but `slowed` of each one's steps a
    second, from its first step's start to its last step's end: whether the
    straggler holds the others back. (A run of a fixed number of steps per
    replica ends with the straggler's last, so its examples/s falls under
    any strategy; this does not.)"""
    spans = {}
    with open(os.path.join(folder, "steps.csv")) as f:
        for row in csv.DictReader(f):
            if row["task"].startswith("ps:") or row["task"] == slowed:
                continue
            spans.setdefault(row["task"], []).append((float(row["start"]), float(row["end"])))
    rates = [len(s) / (max(e for _, e in s) - min(b for b, _ in s)) for s in spans.values()]
    return statistics.median(rates)


def measure(name, scenario, overrides, task, factor, repeat, threads, out):
    slowed = ["--set", f"slowdowns=[{{task: {task}, factor: {factor}}}]"]
    return compare(name, scenario, overrides, slowed, repeat, threads, out, slowed_task=task)


def compare(name, scenario, overrides, variant, repeat, threads, out,
            labels=("even", "slowed"), slowed_task=None):
    """The scenario as it is and with `variant` (more --set arguments),
    simulated once each on this machine's type and run for real `repeat`
    times each, alternating; examples/s and the ratios variant / as is;
    with `slowed_task`, also the other replicas' step rates."""
    base, other = labels
    figures = {"simulated": {}, "real": {base: [], other: []}}
    others = {"simulated": {}, "real": {base: [], other: []}}
    for label, extra in ((base, []), (other, variant)):
        folder = os.path.join(out, name, f"sim-{label}")
        if run([os.path.join(ROOT, "simulate"), scenario, *overrides, *extra,
                "--set", "cluster.machine=local", "--set", "cluster.placement=one_host",
                "--fidelity", "timing", "--quiet", "--out", folder]) is None:
            return None
        figures["simulated"][label] = examples_per_second(folder)
        if slowed_task:
            others["simulated"][label] = others_step_rate(folder, slowed_task)
    for r in range(repeat):
        for label, extra in ((base, []), (other, variant)):
            folder = os.path.join(out, name, f"real-{label}-{r + 1}")
            if run([os.path.join(ROOT, "realnet"), "--launch", scenario, *overrides, *extra,
                    "--threads", str(threads), "--quiet", "--out", folder]) is None:
                return None
            figures["real"][label].append(examples_per_second(folder))
            if slowed_task:
                others["real"][label].append(others_step_rate(folder, slowed_task))
    sim = figures["simulated"]
    real = figures["real"]
    figures["simulated_ratio"] = sim[other] / sim[base]
    # Each repeat's variant run against the run as is beside it.
    ratios = [s / e for s, e in zip(real[other], real[base])]
    figures["real_ratios"] = ratios
    figures["real_ratio"] = statistics.median(ratios)
    if slowed_task:
        figures["others_simulated_ratio"] = others["simulated"][other] / others["simulated"][base]
        figures["others_real_ratio"] = statistics.median(
            s / e for s, e in zip(others["real"][other], others["real"][base]))
    log(f"  {name}: {other} / {base} simulated {figures['simulated_ratio']:.3f}, "
        f"real {figures['real_ratio']:.3f} (runs {', '.join(f'{x:.3f}' for x in ratios)})")
    return figures


def common_arguments(parser, shapes):
    """The options of every side-by-side benchmark: --out, --repeat,
    --threads, --only (one of `shapes`' names)."""
    parser.add_argument("--out", required=True, help="a new folder for the runs and tables")
    parser.add_argument("--repeat", type=int, default=3, help="real runs of each kind")
    parser.add_argument("--threads", type=int, default=2, help="compute threads per task")
    parser.add_argument("--only", action="append", metavar="SHAPE",
                        choices=[shape[0] for shape in shapes],
                        help="this shape alone (repeatable; default: every shape)")


def parse(parser):
    """The options, the --out folder made (it must be new or empty)."""
    o = parser.parse_args()
    if os.path.exists(o.out) and os.listdir(o.out):
        parser.error(f"{o.out} is not empty")
    os.makedirs(o.out, exist_ok=True)
    return o


def table_row(name, r, base, other):
    """The columns every comparison has: simulated, real, and their ratios."""
    return (f"| {name} | {r['simulated'][base]:,.0f} | {r['simulated'][other]:,.0f} "
            f"| {r['simulated_ratio']:.3f} | {statistics.median(r['real'][base]):,.0f} "
            f"| {statistics.median(r['real'][other]):,.0f} | {r['real_ratio']:.3f} |")


def write_results(out, stem, document, lines):
    """OUT/STEM.json (the figures) and OUT/STEM.md (the table), printed too."""
    with open(os.path.join(out, f"{stem}.json"), "w") as f:
        json.dump(document, f, indent=1)
    with open(os.path.join(out, f"{stem}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def machine_line(threads):
    return f"{cpu_model()}, {os.cpu_count()} vCPUs; {threads} compute threads per task"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common_arguments(parser, SHAPES)
    parser.add_argument("--factor", type=float, default=1.5, help="the slowed worker's factor")
    o = parse(parser)
    results, failed = {}, False
    for name, what, scenario, overrides, task in SHAPES:
        if o.only and name not in o.only:
            continue
        log(f"{name}: {what}, {task} at {o.factor}x")
        r = measure(name, scenario, overrides, task, o.factor, o.repeat, o.threads, o.out)
        if r is None:
            failed = True
            continue
        results[name] = {"what": what, "task": task, **r}
    machine = machine_line(o.threads)
    lines = [f"One worker at {o.factor}x, on {machine}, every task on this machine; examples/s "
             f"from the first step, slowed / even (real: the median of {o.repeat} pairs):", "",
             "| shape | simulated even | simulated slowed | ratio | real even (median) "
             "| real slowed (median) | ratio | the others' steps/s, simulated | real |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        lines.append(table_row(name, r, "even", "slowed") +
                     f" {r['others_simulated_ratio']:.3f} | {r['others_real_ratio']:.3f} |")
    write_results(o.out, "straggler", {"machine": machine, "factor": o.factor, "results": results},
                  lines)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
