#!/usr/bin/python3
"""How far a simulation on this machine's calibrated `local` machine type is
from the real run of the same scenario here (bench/fidelity.sh runs this).

For every shape below, runs the scenario for real with ./realnet --launch
(every task a process on this machine) REPEAT times, and once in the
simulator with --set cluster.machine=local --set cluster.placement=one_host
(every task on one simulated host of this machine's cores, over its
loopback) in timing fidelity (the same times and bytes, without the math),
the same overrides and seed; then prints, per shape and figure,
simulated, real (the median of the repeats) and the error simulated / real
- 1, and the median and worst |error| of examples per second over the
shapes. Examples per second are counted from the first training step
(summary.json's training_examples_per_second): start-up (processes, data,
connections) is not modelled, and is shown apart.

With --netns it also runs bench/narrow_links.sh (as root): the same
comparison with every task in a network namespace of its own behind a
tbf-limited link, at 100 Mbit/s and 1 Gbit/s.

Replica 0's step is also split by phase (steps.csv's phase columns), its
milliseconds per step simulated against real, so that each point of error
is located. And the benchmark says how quiet the machine was: the share of
CPU time stolen by the hypervisor while it ran (/proc/stat), and the spread
of the repeated real runs of each shape.

After ./calibrate, it profiles each model the shapes train
(./calibrate --scenario: short real runs of a ring of two, a ring of four
and the chief with one parameter server), so that the simulations charge
each phase's work what it cost there, beside as many tasks computing; the
shapes themselves have 2 to 6 tasks. Each shape is also simulated with the model's costs alone
(--no-profile), and with the CPU costs of its own real runs
(--calibrate-from), which shows what is left of the error once the CPU
time is right. --no-profile skips the profiles.

Writes DIR/fidelity.json (every figure of every run) and DIR/fidelity.md
(the tables). Exit status 0 when every run finished, 1 when one failed.
"""

import argparse
import bisect
import csv
import json
import os
import statistics
import subprocess
import sys
import time

from machine_info import cpu_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "reports"))
from report import PHASES, cpu_per_step, phase_seconds_per_step  # noqa: E402

# (name, what it is, scenario, overrides): ring and parameter server, sync
# and async, 2 to 6 tasks, small and large models. Step counts keep each
# real run to seconds, not minutes.
SHAPES = [
    ("ring-2-cnn", "all-reduce, chief + 1 worker, lab CNN (93k parameters)",
     "scenarios/mnist_cnn_sync.yaml", ["--unset", "training.epochs", "--set", "training.steps=150"]),
    ("ring-4-cnn", "all-reduce, chief + 3 workers, lab CNN",
     "scenarios/mnist_cnn_sync.yaml",
     ["--set", "cluster.workers=3", "--unset", "training.epochs", "--set", "training.steps=60"]),
    ("ring-3-mlp", "all-reduce, chief + 2 workers, CIFAR-10 MLP (1.4M parameters)",
     "scenarios/cifar10_mlp_sync.yaml", ["--set", "training.epochs=2"]),
    ("ring-5-wide", "all-reduce, chief + 4 workers, wide & deep (22k parameters)",
     "scenarios/ps_4workers.yaml", ["--set", "strategy.name=allreduce"]),
    ("ps-async-6-wide", "async parameter server, chief + 4 workers + ps, wide & deep",
     "scenarios/ps_4workers.yaml", []),
    ("ps-sync-6-wide", "sync parameter server, chief + 4 workers + ps, wide & deep",
     "scenarios/ps_4workers.yaml", ["--set", "strategy.mode=sync"]),
    ("ps-async-4-mlp", "async parameter server, chief + 2 workers + ps, CIFAR-10 MLP",
     "scenarios/cifar10_mlp_sync.yaml",
     ["--set", "strategy.name=parameter_server", "--set", "strategy.mode=async",
      "--set", "cluster.ps=1"]),
]

# Figures compared, as summary.json names them, with how they print.
FIGURES = [
    ("training_examples_per_second", "examples/s from the first step", "{:,.0f}"),
    ("median_step_seconds", "median step of replica 0 (ms)", "ms"),
    ("communication_fraction", "communication share", "{:.3f}"),
    ("waiting_fraction", "waiting share", "{:.3f}"),
    ("bytes_sent", "bytes sent", "{:,.0f}"),
    ("startup_seconds", "start-up (s, not modelled)", "{:.2f}"),
]
HEADLINE = "training_examples_per_second"

# narrow_links.sh runs: (name, scenario, rate in Mbit/s, overrides).
NETNS_SHAPES = [
    ("ring-2-cnn-100mbit", "scenarios/mnist_cnn_sync.yaml", 100,
     ["--unset", "training.epochs", "--set", "training.steps=60"]),
    ("ps-async-6-wide-1gbit", "scenarios/ps_4workers.yaml", 1000, ["--set", "training.epochs=1"]),
]


def log(line):
    print(line, file=sys.stderr, flush=True)


def run(command, what):
    started = time.monotonic()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        log(f"  {what} failed ({result.returncode}): {' '.join(command)}")
        log("  " + "\n  ".join((result.stderr or result.stdout).strip().splitlines()[-5:]))
        return False
    log(f"  {what}: {time.monotonic() - started:.1f} s")
    return True


def summary(folder):
    with open(os.path.join(folder, "summary.json")) as f:
        return json.load(f)


def error(simulated, real):
    if simulated is None or real in (None, 0):
        return None
    return simulated / real - 1


def show(value, style):
    if value is None:
        return "n/a"
    if style == "ms":
        return f"{1000 * value:.2f}"
    return style.format(value)


def percent(e):
    return "n/a" if e is None else f"{100 * e:+.1f}%"


def simulate(scenario, overrides, sim_dir, what="simulated", extra=()):
    """The scenario on one simulated host of this machine's cores."""
    return run([os.path.join(ROOT, "simulate"), scenario, *overrides,
                "--set", "cluster.machine=local", "--set", "cluster.placement=one_host",
                "--fidelity", "timing", "--quiet", "--out", sim_dir, *extra], what)


def run_real(scenario, overrides, folder, repeat, threads):
    """REPEAT real runs: (their run directories, whether all finished)."""
    real_dirs, ok = [], True
    for r in range(repeat):
        real_dir = os.path.join(folder, f"real-{r + 1}")
        if run([os.path.join(ROOT, "realnet"), "--launch", scenario, *overrides,
                "--threads", str(threads), "--quiet", "--out", real_dir], f"real run {r + 1}"):
            real_dirs.append(real_dir)
        else:
            ok = False
    return real_dirs, ok


def compare_shape(name, scenario, overrides, repeat, out, threads):
    folder = os.path.join(out, name)
    sim_dir = os.path.join(folder, "sim")
    ok = simulate(scenario, overrides, sim_dir)
    real_dirs, all_real = run_real(scenario, overrides, folder, repeat, threads)
    reals = [summary(d) for d in real_dirs]
    if not ok or not all_real or not reals:
        return None
    simulated = summary(sim_dir)
    figures = {}
    for key, _, _ in FIGURES:
        values = [s.get(key) for s in reals if s.get(key) is not None]
        real = statistics.median(values) if values else None
        figures[key] = {"simulated": simulated.get(key), "real": real,
                        "real_runs": values, "error": error(simulated.get(key), real)}
    figures["startup_seconds"]["error"] = None  # not modelled: shown, not scored
    return {"scenario": scenario, "overrides": overrides, "figures": figures,
            "phases": replica0_phases(sim_dir, real_dirs),
            "placement": reals[0].get("placement"), "real_dirs": real_dirs,
            "calibrated_from": simulated.get("calibrated_from"),
            "variants": variants(scenario, overrides, folder, real_dirs,
                                 figures[HEADLINE]["real"])}


def variants(scenario, overrides, folder, real_dirs, real):
    """Examples/s simulated with the model's costs alone (no profile), and
    with the CPU costs of the shape's own real runs: {name: figure}."""
    out = {}
    own = [a for d in real_dirs for a in ("--calibrate-from", d)]
    for name, extra in (("model_only", ["--no-profile"]), ("own_runs", own)):
        sim_dir = os.path.join(folder, "sim-" + name.replace("_", "-"))
        if simulate(scenario, overrides, sim_dir, "simulated, " + name.replace("_", " "), extra):
            simulated = summary(sim_dir).get(HEADLINE)
            out[name] = {"simulated": simulated, "real": real, "error": error(simulated, real)}
    return out


def variants_table(results):
    lines = ["", "Examples per second from the first step, simulated / real (error), three ways: "
             "with the profile (the headline: each phase at the CPU cost that short real runs "
             "of the model measured here: a ring of two, a ring of four, the chief with a server), with the model's costs alone (./calibrate's fits), and "
             "with the CPU costs of the shape's own real runs (what is left once the CPU is "
             "right):", "",
             "| shape | with the profile | the model alone | CPU of its own runs |",
             "|---|---|---|---|"]
    columns = [lambda r: r["figures"][HEADLINE],
               lambda r: r.get("variants", {}).get("model_only"),
               lambda r: r.get("variants", {}).get("own_runs")]
    for name, r in results.items():
        if "variants" not in r:
            continue
        cells = []
        for column in columns:
            f = column(r)
            cells.append("n/a" if f is None else f"{show(f['simulated'], '{:,.0f}')} / "
                         f"{show(f['real'], '{:,.0f}')} ({percent(f['error'])})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    for label, column in zip(("with the profile", "the model alone", "CPU of its own runs"),
                             columns):
        errors = [abs(column(r)["error"]) for r in results.values()
                  if "variants" in r and column(r) and column(r)["error"] is not None]
        if errors:
            lines.append(f"\n{label}: median |error| {100 * statistics.median(errors):.1f}%, "
                         f"worst {100 * max(errors):.1f}% over {len(errors)} shapes.")
    return lines

def replica0_phases(sim_dir, real_dirs):
    """{phase: {simulated, real, error, cpu_simulated, cpu_real, cpu_error}}
    of replica 0's mean step (the first task of steps.csv), the real side
    the median over the repeats; cpu_*: the CPU time of the phase."""
    sim = phase_seconds_per_step(sim_dir)
    reals = [phase_seconds_per_step(d) for d in real_dirs]
    if not sim or not all(reals):
        return {}
    task = next(iter(sim))
    phases = {}
    for phase in PHASES + ["step"]:
        s = sim[task][phase]
        r = statistics.median(by_task[task][phase] for by_task in reals if task in by_task)
        cs = cpu_per_step(sim[task], phase)
        cr = statistics.median(cpu_per_step(by_task[task], phase) for by_task in reals
                               if task in by_task)
        phases[phase] = {"simulated": s, "real": r, "error": error(s, r),
                         "cpu_simulated": cs, "cpu_real": cr, "cpu_error": error(cs, cr)}
    return phases


def staleness_of(run_dir):
    """The staleness of every update a parameter server applied (steps.csv)."""
    with open(os.path.join(run_dir, "steps.csv")) as f:
        return [int(float(r["staleness"])) for r in csv.DictReader(f)
                if r["task"].startswith("ps:") and r["staleness"] not in ("", None)]


def ks_distance(a, b):
    """The Kolmogorov-Smirnov distance of two samples: the largest gap
    between their distribution functions."""
    if not a or not b:
        return None
    a, b = sorted(a), sorted(b)
    gap = 0.0
    for x in sorted(set(a) | set(b)):
        gap = max(gap, abs(bisect.bisect_right(a, x) / len(a) - bisect.bisect_right(b, x) / len(b)))
    return gap


def staleness_table(results, out):
    """Per asynchronous parameter-server shape: the staleness distribution
    simulated (with the profile) against the real runs', pooled."""
    lines = []
    for name, r in results.items():
        sim = staleness_of(os.path.join(out, name, "sim"))
        real = [s for d in r.get("real_dirs", []) for s in staleness_of(d)]
        distance = ks_distance(sim, real)
        if distance is None or not any(sim):
            continue
        r["staleness_ks"] = distance
        lines.append(f"| {name} | {distance:.2f} | {statistics.mean(sim):.2f} / "
                     f"{statistics.mean(real):.2f} | {max(sim)} / {max(real)} |")
    if not lines:
        return []
    return ["", "Staleness of the asynchronous servers' updates, simulated against real "
            "(Kolmogorov-Smirnov distance of the two distributions):", "",
            "| shape | KS distance | mean staleness | largest |", "|---|---|---|---|"] + lines


def cpu_times():
    """(steal, total) jiffies of every CPU so far (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    steal = fields[7] if len(fields) > 7 else 0
    return steal, sum(fields[:8])


def spread(values):
    """The largest of repeated figures over the smallest, less 1."""
    values = [v for v in values if v]
    return max(values) / min(values) - 1 if len(values) > 1 else None


def compare_netns(name, scenario, mbit, overrides, out):
    folder = os.path.join(out, name)
    command = [os.path.join(ROOT, "bench", "narrow_links.sh"), scenario, "--mbit", str(mbit),
               "--out", folder, "--threads", "2", "--sim-set", "cluster.placement=one_host"]
    for i in range(0, len(overrides), 2):
        command += [overrides[i], overrides[i + 1]]
    if not run(command, f"narrow links at {mbit} Mbit/s"):
        return None
    with open(os.path.join(folder, "comparison.json")) as f:
        comparison = json.load(f)
    sim, real = summary(os.path.join(folder, "sim")), summary(os.path.join(folder, "real"))
    figures = {key: {"simulated": sim.get(key), "real": real.get(key),
                     "real_runs": [real.get(key)], "error": error(sim.get(key), real.get(key))}
               for key, _, _ in FIGURES}
    figures["startup_seconds"]["error"] = None
    return {"scenario": scenario, "overrides": overrides, "figures": figures, "mbit": mbit,
            "measured_mbit": comparison.get("measured_mbit")}


def phase_table(results, prefix=""):
    """Replica 0's milliseconds per step, by phase: a row a shape; with
    prefix "cpu_", the CPU milliseconds of each phase."""
    sim, real, err = prefix + "simulated", prefix + "real", prefix + "error"
    shown = [p for p in PHASES + ["step"]
             if any(abs(r.get("phases", {}).get(p, {}).get(k) or 0) >= 1e-7
                    for r in results.values() for k in (sim, real))]
    title = ("Replica 0's CPU milliseconds per step by phase (all its threads), simulated / real "
             "(error):" if prefix else
             "Replica 0's milliseconds per step by phase, simulated / real (error); "
             "\"step\" is the whole step, which the phases add up to:")
    lines = ["", title, "",
             "| shape | " + " | ".join(shown) + " |", "|---" * (len(shown) + 1) + "|"]
    for name, r in results.items():
        phases = r.get("phases") or {}
        if not phases:
            continue
        cells = []
        for p in shown:
            f = phases[p]
            cell = f"{show(f.get(sim), 'ms')} / {show(f.get(real), 'ms')}"
            if f.get(err) is not None:
                cell += f" ({percent(f[err])})"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def markdown(results, machine, quiet, out):
    lines = [f"Machine: {machine}", "", quiet, ""]
    header = "| shape | " + " | ".join(label for _, label, _ in FIGURES) + " |"
    lines += [header, "|---" * (len(FIGURES) + 1) + "|"]
    for name, r in results.items():
        cells = []
        for key, _, style in FIGURES:
            f = r["figures"][key]
            cell = f"{show(f['simulated'], style)} / {show(f['real'], style)}"
            if f["error"] is not None:
                cell += f" ({percent(f['error'])})"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    errors = [abs(r["figures"][HEADLINE]["error"]) for r in results.values()
              if r["figures"][HEADLINE]["error"] is not None]
    if errors:
        lines += ["", f"Examples per second from the first step, simulated / real - 1 over "
                  f"{len(errors)} shapes: median |error| {100 * statistics.median(errors):.1f}%, "
                  f"worst {100 * max(errors):.1f}%."]
    lines.append("Cells: simulated / real (median of the real runs), then the error.")
    lines += phase_table(results)
    lines += phase_table(results, "cpu_")
    lines += variants_table(results)
    lines += staleness_table(results, out)
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(
        prog="bench/fidelity.sh",
        description=__doc__.split("\n\n")[0],
        epilog="Shapes: " + ", ".join(name for name, *_ in SHAPES))
    parser.add_argument("--repeat", type=int, default=3, help="real runs per shape (default 3)")
    parser.add_argument("--out", default=None,
                        help="where the runs go (default runs/fidelity-<time>)")
    parser.add_argument("--only", action="append", default=[],
                        help="run only this shape (repeatable)")
    parser.add_argument("--threads", type=int, default=2,
                        help="compute threads per task, both sides (default 2, as ./calibrate)")
    parser.add_argument("--netns", action="store_true",
                        help="also compare over tbf-limited links in network namespaces (root)")
    parser.add_argument("--no-profile", action="store_true",
                        help="do not profile the models (./calibrate --scenario): keep the "
                             "profiles made before, or the model's costs where there are none")
    parser.add_argument("--no-calibrate", action="store_true",
                        help="use the overlay ./calibrate wrote before")
    o = parser.parse_args()
    if o.repeat < 1:
        parser.error("--repeat must be at least 1")
    unknown = [s for s in o.only if s not in [name for name, *_ in SHAPES + NETNS_SHAPES]]
    if unknown:
        parser.error(f"unknown shape {unknown[0]}")
    out = o.out or os.path.join(ROOT, "runs", time.strftime("fidelity-%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)

    steal_before, total_before = cpu_times()
    if not o.no_calibrate:
        log("calibrating this machine")
        if not run([os.path.join(ROOT, "calibrate"), "--threads", str(o.threads), "--quiet"],
                   "./calibrate"):
            return 1
    if not o.no_profile:
        scenarios = sorted({scenario for name, _, scenario, _ in SHAPES
                            if not o.only or name in o.only})
        log("profiling the models: " + ", ".join(scenarios))
        command = [os.path.join(ROOT, "calibrate"), "--threads", str(o.threads), "--quiet"]
        for scenario in scenarios:
            command += ["--scenario", scenario]
        if not run(command, "./calibrate --scenario"):
            return 1
    results, failed = {}, False
    for name, what, scenario, overrides in SHAPES:
        if o.only and name not in o.only:
            continue
        log(f"{name}: {what}")
        r = compare_shape(name, scenario, overrides, o.repeat, out, o.threads)
        if r is None:
            failed = True
            continue
        results[name] = r
        e = r["figures"][HEADLINE]["error"]
        log(f"  examples/s simulated {show(r['figures'][HEADLINE]['simulated'], '{:,.0f}')}, "
            f"real {show(r['figures'][HEADLINE]['real'], '{:,.0f}')}: {percent(e)}")
    if o.netns:
        for name, scenario, mbit, overrides in NETNS_SHAPES:
            if o.only and name not in o.only:
                continue
            log(f"{name}: {scenario} over {mbit} Mbit/s links in network namespaces")
            r = compare_netns(name, scenario, mbit, overrides, out)
            if r is None:
                failed = True
                continue
            results[name] = r

    machine = (f"{cpu_model()}, {os.cpu_count()} vCPUs; {o.threads} compute threads per task, "
               f"every task on this machine")
    steal_after, total_after = cpu_times()
    steal = (steal_after - steal_before) / max(total_after - total_before, 1)
    spreads = {name: spread(r["figures"][HEADLINE]["real_runs"]) for name, r in results.items()}
    widest = max(((s, n) for n, s in spreads.items() if s is not None), default=None)
    quiet = (f"Quiet? CPU time stolen by the hypervisor: {100 * steal:.1f}%"
             + (f"; widest spread of the repeated real runs (examples/s, largest / smallest - 1):"
                f" {100 * widest[0]:.0f}% ({widest[1]})" if widest else "")
             + (". NOT QUIET: the real figures are unreliable." if steal > 0.02 or
                (widest and widest[0] > 0.15) else "."))
    log(quiet)
    text = markdown(results, machine, quiet, out)
    with open(os.path.join(out, "fidelity.json"), "w") as f:
        json.dump({"machine": machine, "command": " ".join(sys.argv), "steal_fraction": steal,
                   "real_spreads": spreads, "results": results}, f, indent=1)
    with open(os.path.join(out, "fidelity.md"), "w") as f:
        f.write(text)
    print(text)
    print(f"wrote {os.path.join(out, 'fidelity.md')} and fidelity.json")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
