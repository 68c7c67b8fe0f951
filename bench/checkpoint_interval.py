#!/usr/bin/python3
"""The checkpoint interval's optimum under failures, against Young and Daly.

Simulates scenarios/checkpoint_interval.yaml (CIFAR-10 MLP, timing fidelity,
every machine failing at exponential times) for a range of
checkpoint.every_steps, under synchronous all-reduce (every failure rolls
every task back to the last checkpoint) and under an asynchronous parameter
server (a worker's failure only restarts that worker; the server's rolls
back). Each point is the median over --seeds failure draws (the scenario's
seed drives the failure processes). Prints a Markdown table per strategy
and, beside the measured optimum, the first-order optimum of Young (1974),
T = sqrt(2 C M), and Daly's (2006) higher-order one, where C is a
checkpoint's cost and M the mean time between the failures that roll back.

Usage: bench/checkpoint_interval.py [--seeds 7] [--mtbf-hours 0.0167]
                                    [--intervals 10,25,50,100,200,400,800,1500]
"""
import argparse
import concurrent.futures
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "scenarios", "checkpoint_interval.yaml")
SIMULATE = os.path.join(ROOT, "build", "bin", "distlab-simulate")
STRATEGIES = {
    "allreduce (sync)": [],
    "parameter_server (async)": ["--set", "cluster.ps=1", "--set", "strategy.name=parameter_server",
                                 "--set", "strategy.mode=async"],
}


def simulate(args, out):
    subprocess.run([SIMULATE, SCENARIO, "--quiet", "--out", out] + args, check=True)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def daly(cost, mtbf):
    """Daly's higher-order optimum (FGCS 22(3), 2006, eq. 37)."""
    if cost >= 2 * mtbf:
        return mtbf
    x = cost / (2 * mtbf)
    return math.sqrt(2 * cost * mtbf) * (1 + math.sqrt(x) / 3 + x / 9) - cost


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=7)
    parser.add_argument("--mtbf-hours", type=float, default=1 / 60,
                        help="each machine's mean time between failures")
    parser.add_argument("--intervals", default="10,25,50,100,200,400,800,1500")
    options = parser.parse_args()
    if not os.path.exists(SIMULATE):
        subprocess.run([os.path.join(ROOT, "tools", "build")], check=True)
    intervals = [int(i) for i in options.intervals.split(",")]
    mtbf = options.mtbf_hours * 3600
    print(f"scenario {os.path.relpath(SCENARIO, ROOT)}, each machine's MTBF {mtbf:.0f} s, "
          f"median of {options.seeds} failure draws per point\n")

    with tempfile.TemporaryDirectory() as work, concurrent.futures.ThreadPoolExecutor(
            max_workers=os.cpu_count() or 2) as pool:
        for label, strategy in STRATEGIES.items():
            # Without failures: the step's time and a checkpoint's cost.
            calm = simulate(strategy + ["--set", "faults=[]", "--set", "checkpoint.every_steps=100"],
                            os.path.join(work, "calm"))
            files = calm["checkpoints"]["files"]
            cost = calm["checkpoint_seconds"] / files
            step = (calm["run_seconds"] - calm["checkpoint_seconds"]) / calm["steps"]
            machines = 3 + (1 if "parameter_server" in label else 0)
            rollback_machines = 1 if "async" in label else machines
            m = mtbf / rollback_machines
            jobs = {}
            for every in intervals:
                for seed in range(options.seeds):
                    args = strategy + ["--set", f"faults={{mtbf_hours: {options.mtbf_hours}}}",
                                       "--set", f"checkpoint.every_steps={every}",
                                       "--seed", str(seed)]
                    out = os.path.join(work, f"{len(jobs)}")
                    jobs[pool.submit(simulate, args, out)] = every
            results = {every: [] for every in intervals}
            for future in concurrent.futures.as_completed(jobs):
                results[jobs[future]].append(future.result())

            print(f"### {label}\n")
            print(f"Without failures: {step * 1000:.1f} ms a step, a checkpoint "
                  f"{cost:.3f} s (C). Failures that roll back: every {m:.0f} s (M) on "
                  f"{rollback_machines} machine(s).\n")
            print("| every_steps | interval (s) | total (s), median | failures | "
                  "rollbacks | lost steps | checkpoint s |")
            print("|---:|---:|---:|---:|---:|---:|---:|")
            medians = {}
            for every in intervals:
                runs = results[every]
                total = statistics.median(r["run_seconds"] for r in runs)
                medians[every] = total
                failures = statistics.median(r["restarts"] for r in runs)
                rollbacks = statistics.median(
                    sum(f["recovery"] == "rollback" for f in r["failures"]) for r in runs)
                lost = statistics.median(r["lost_steps"] for r in runs)
                ckpt = statistics.median(r["checkpoint_seconds"] for r in runs)
                print(f"| {every} | {every * step:.2f} | {total:.1f} | {failures:g} | "
                      f"{rollbacks:g} | {lost:g} | {ckpt:.1f} |")
            best = min(medians, key=medians.get)
            young = math.sqrt(2 * cost * m)
            print(f"\nMeasured optimum: every {best} steps ({best * step:.2f} s of training), "
                  f"{medians[best]:.1f} s in all. Young: sqrt(2 C M) = {young:.2f} s = "
                  f"{young / step:.0f} steps; Daly: {daly(cost, m):.2f} s = "
                  f"{daly(cost, m) / step:.0f} steps.\n")


if __name__ == "__main__":
    sys.exit(main())
