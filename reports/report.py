"""./report: turns run directories and sweeps into report.md and its figures.

    ./report PATH... [--out DIR]

DIR must be new or empty; by default it is a new folder, SWEEP/report-<time>
for one sweep, else runs/report-<time>: a report never writes over another.

PATH is a sweep (./sweep's folder), a run directory of ./simulate,
./realnet or ./train, or a folder of run directories. The figures are
chosen from what differs between the runs (see choose_dimensions), and
every figure is written as PNG (to paste) and SVG (to scale).
"""

import argparse
import datetime
import html
import os
import statistics
import sys

import figures
import run_directories
from run_directories import number

EXIT_OK, EXIT_BAD_INPUT = 0, 2

# Keys whose values are the same run again, never a dimension to plot against.
NOT_DIMENSIONS = {"seed"}


class BadInput(Exception):
    pass


# ---- what differs between the runs -------------------------------------------


def derived_dimensions(run):
    """What every run says of itself, sweep or not."""
    dims = {"strategy": run.strategy, "backend": run.kind}
    replicas = run.figure("replicas")
    if replicas is not None:
        dims["replicas"] = int(replicas)
    machines = run.machine_types()
    if machines and run.kind == "simulate":
        dims["machine type"] = ", ".join(machines)
    every = (run.summary.get("checkpoints") or {}).get("every_steps")
    if every is not None:
        dims["checkpoint every (steps)"] = every
    dims["scenario"] = run.scenario
    return dims


def as_number(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def partition(runs, values):
    """Which runs share a value: a partition of run indices, for comparing dimensions."""
    groups = {}
    for i, run in enumerate(runs):
        groups.setdefault(str(values[i]), set()).add(i)
    return sorted(map(frozenset, groups.values()), key=min)


# Scenario keys that are no dimension of their own: free text, and what the
# strategy's label already names (its name and mode).
SCENARIO_KEYS_LEFT_OUT = {"description", "strategy.name", "strategy.mode"}


def dimensions_of(run):
    """A run's values: a sweep's varied keys, every key of the scenario as it
    ran (scenario.yaml), then what the run says of itself."""
    dims = {k: v for k, v in run.values.items() if k != "strategy.name"}
    for key, value in run.scenario_values().items():
        if key not in SCENARIO_KEYS_LEFT_OUT:
            dims.setdefault(key, value)
    for key, value in derived_dimensions(run).items():
        dims.setdefault(key, value)
    return dims


def choose_dimensions(runs):
    """Every run's values, and the dimensions that vary, in a stable order:
    the strategy and the backend, the sweeps' varied keys, the scenario keys
    that differ, then what the runs say of themselves; a dimension that only
    restates an earlier one, whose value follows from it (replicas when
    cluster.workers varies, cluster.ps when the strategy does), is left
    out."""
    table = [dimensions_of(run) for run in runs]
    keys = []
    for dims in table:
        for key in dims:
            if key not in keys and key not in NOT_DIMENSIONS:
                keys.append(key)
    varying = []
    for key in keys:
        values = [dims.get(key) for dims in table]
        if len({str(v) for v in values}) > 1:
            varying.append(key)
    # The strategy and the backend first: they name the series.
    varying = [k for k in varying if k in ("strategy", "backend")] + \
        [k for k in varying if k not in ("strategy", "backend")]
    swept = [k for k in varying if any(k in run.values for run in runs)]
    kept = []
    for key in varying:
        if key in swept or key in ("strategy", "backend"):
            kept.append(key)
            continue
        mine = partition(runs, [dims.get(key) for dims in table])
        if any(determines(partition(runs, [dims.get(k) for dims in table]), mine)
               for k in kept + swept):
            continue  # restates another dimension
        kept.append(key)
    return kept, table


def determines(finer, coarser):
    """Whether knowing which group of `finer` a run is in says which group of
    `coarser` it is in (the batch size that each strategy's sweep set, the
    option a strategy mapping already holds)."""
    return all(any(group <= other for other in coarser) for group in finer)


def numeric(key, table):
    values = [dims.get(key) for dims in table]
    return all(v is not None and as_number(v) is not None for v in values)


def short_key(key):
    return {"cluster.workers": "workers", "strategy": "", "backend": ""}.get(key, key)


def label_of(dims, keys):
    parts = []
    for key in keys:
        value = dims.get(key)
        if value is None:
            continue  # a key this run does not have
        name = short_key(key)
        parts.append(f"{value}" if not name else f"{name}={value}")
    return ", ".join(parts) if parts else "runs"


# ---- figures ---------------------------------------------------------------------


def clock_unit(runs):
    clocks = {run.clock for run in runs}
    if clocks == {"simulated"}:
        return "simulated seconds"
    if clocks == {"wall"}:
        return "wall-clock seconds"
    return "seconds (simulated or wall-clock)"


def metrics_for(runs, target):
    unit = clock_unit(runs)
    chosen = [("Throughput", "examples per second", "si", lambda r: r.figure("examples_per_second")),
              ("Time to finish", unit, "plain", lambda r: r.figure("run_seconds"))]
    if target is not None:
        chosen.append((f"Time to {100 * target:.0f}% test accuracy", unit, "plain",
                       lambda r: r.seconds_to_accuracy(target)))
    chosen += [("Communication share of task time", "communication + waiting", "percent",
                lambda r: r.figure("communication_fraction")),
               ("Bytes sent per step", "bytes, all tasks", "si",
                lambda r: r.figure("bytes_per_step"))]
    if any((number(r.summary.get("checkpoint_seconds")) or 0) > 0 for r in runs):
        chosen.append(("Checkpoint overhead", "share of task time", "percent",
                       lambda r: r.figure("checkpoint_fraction")))
    return chosen


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def metric_figures(runs, target, folder):
    """The metrics against each varied key, one line per series (the values of
    the other varied keys); one set of figures per scenario."""
    by_scenario = {}
    for run in runs:
        by_scenario.setdefault(run.scenario, []).append(run)
    made = []
    for scenario, group in by_scenario.items():
        keys, table = choose_dimensions(group)
        if len(group) < 2 or not keys:
            continue
        prefix = f"{slug(scenario)}-" if len(by_scenario) > 1 else ""
        made += scenario_metric_figures(group, keys, table, target, folder, prefix)
    return made


def scenario_metric_figures(runs, keys, table, target, folder, prefix):
    made = []
    numeric_keys = [k for k in keys if numeric(k, table)]
    categorical = [k for k in keys if k not in numeric_keys]
    x_keys = numeric_keys or [k for k in categorical if k != "strategy"][:1] or categorical[:1]
    metrics = metrics_for(runs, target)
    for x_key in x_keys:
        others = [k for k in keys if k != x_key]
        groups = {}
        for run, dims in zip(runs, table):
            series = label_of(dims, others)
            groups.setdefault(series, {}).setdefault(str(dims.get(x_key)), []).append(run)
        is_numeric = x_key in numeric_keys
        categories = []
        for dims in table:
            if str(dims.get(x_key)) not in categories:
                categories.append(str(dims.get(x_key)))
        name = f"{prefix}metrics-vs-{slug(x_key)}"
        title = f"Throughput, time and communication against {x_key}"
        if prefix:
            title += f" ({runs[0].scenario})"
        fig = figures.Figure(name, title, panels=len(metrics))
        repeats = max(len(rs) for g in groups.values() for rs in g.values())
        # Many series: one legend under the panels rather than one over each.
        shared_legend = len(groups) > 3
        for ax, (panel, unit, kind, value_of) in zip(fig.axes, metrics):
            series = []
            for label, by_x in groups.items():
                points = []
                for x, rs in by_x.items():
                    y = median([value_of(r) for r in rs])
                    points.append((as_number(x) if is_numeric else x, y))
                series.append((label, points))
            figures.metric_lines(fig, ax, x_key, (panel, unit, kind), series, is_numeric,
                                 categories, legend=not shared_legend)
        if shared_legend:
            fig.legend_below(fig.axes[0], columns=2 if len(groups) > 6 else len(groups))
        fig.save(folder)
        caption = (f"Each panel is one figure of the runs against {x_key}"
                   + (f", one line per {', '.join(others)}" if others else "")
                   + (f"; points are medians of {repeats} runs" if repeats > 1 else "")
                   + ". Communication share: time in transfers and waiting for peers, over all"
                   " the tasks' busy time.")
        made.append((name, title, caption, fig.series))
    return made


def time_figure(runs, labels, folder):
    shown = [run for run in runs if run.tasks()][:8]  # ./train keeps no per-task times
    if not shown:
        return None
    fig = figures.Figure("time-per-task", "Where each task's time goes", panels=len(shown),
                         columns=min(2, len(shown)))
    for ax, run in zip(fig.axes, shown):
        rows = run.time_breakdown()
        if len(rows) > 12:
            rows = by_role(rows)
        figures.time_bars(fig, ax, labels[run.path], rows, clock_unit([run]))
    fig.legend_below(max(fig.axes, key=lambda ax: len(ax.get_legend_handles_labels()[1])))
    fig.save(folder)
    caption = ("Stacked seconds of compute, communication (transfers), waiting (blocked on a"
               " peer), checkpoints and input (waiting for the input pipeline), per task" + (" (per role, averaged, in clusters of more"
                                                    " than 12 tasks)" if any(len(r.tasks()) > 12
                                                                             for r in shown)
                                                   else "") + ".")
    with_tasks = sum(1 for run in runs if run.tasks())
    if with_tasks > len(shown):
        caption += f" The first {len(shown)} of {with_tasks} runs are shown."
    return ("time-per-task", "Where each task's time goes", caption, fig.series)


def by_role(rows):
    roles = {}
    for name, *parts in rows:
        roles.setdefault(name.split(":")[0], []).append(parts)
    out = []
    for role, parts in roles.items():
        mean = [sum(p[k] for p in parts) / len(parts) for k in range(len(parts[0]))]
        out.append((f"{role} (mean of {len(parts)})" if len(parts) > 1 else role, *mean))
    return out


def accuracy_figure(runs, labels, folder):
    with_curves = [r for r in runs if len(r.accuracy_curve()) > 0]
    if not with_curves:
        return None
    fig = figures.Figure("accuracy-vs-time", "Test accuracy against time")
    series = [(labels[r.path], r.accuracy_curve(), i) for i, r in enumerate(with_curves)]
    figures.curves(fig, fig.axes[0], series, clock_unit(with_curves), "test accuracy",
                   "Test accuracy against time", percent=True)
    fig.save(folder)
    caption = ("The chief's evaluations on the test set, one curve per run, against the run's"
               " clock: simulated time for ./simulate, wall-clock time for ./realnet and ./train.")
    return ("accuracy-vs-time", "Test accuracy against time", caption, fig.series)


# ---- simulated against real ------------------------------------------------------


# Keys that a simulation and its real run may differ in: the backend itself,
# the simulator's machine types and fidelity (a real run always computes).
NOT_COMPARED_KEYS = {"backend", "machine type", "fidelity"}


def pair_key(dims):
    """Everything a run was: two runs with the same key differ only in backend."""
    return tuple(sorted((k, str(v)) for k, v in dims.items() if k not in NOT_COMPARED_KEYS))


def simulated_real_pairs(runs, table, keys):
    """(simulated runs, real runs, label) for every setting run on both
    backends; repeats of a setting are compared by their medians."""
    simulated, real, labels = {}, {}, {}
    for run, dims in zip(runs, table):
        key = pair_key(dims)
        if run.kind == "simulate":
            simulated.setdefault(key, []).append(run)
        elif run.kind == "realnet":
            real.setdefault(key, []).append(run)
        labels.setdefault(key, label_of(dims, [k for k in keys if k != "backend"]))
    return [(simulated[k], real[k], labels[k]) for k in simulated if k in real]


COMPARED = [("time to finish (s)", "run_seconds"), ("examples per second", "examples_per_second"),
            ("examples per second, from the first step", "training_examples_per_second"),
            ("start-up before the first step (s)", "startup_seconds"),
            ("median step of replica 0 (s)", "median_step_seconds"),
            ("communication share", "communication_fraction"),
            ("waiting share", "waiting_fraction"),
            ("bytes sent per step", "bytes_per_step"), ("final test accuracy", "final_accuracy"),
            ("final test loss", "final_loss")]


# steps.csv's phases (strategy/phase.h), in its order.
PHASES = ["input", "forward", "backward", "optimizer", "packing", "communication", "waiting",
          "evaluation", "checkpoint", "other"]


def phase_seconds_per_step(folder):
    """{task: {phase: mean seconds per step, phase + "_cpu": mean CPU seconds
    per step, "step": mean step}} from the steps.csv of a run directory;
    tasks in its order. Empty for a run written before steps were split by
    phase; CPU 0 for one written before they had CPU times."""
    rows = run_directories.read_csv(os.path.join(folder, "steps.csv"))
    if not rows or "phase_other_seconds" not in rows[0]:
        return {}
    keys = PHASES + [f"{phase}_cpu" for phase in PHASES] + ["step"]
    sums, counts = {}, {}
    for row in rows:
        task = sums.setdefault(row["task"], dict.fromkeys(keys, 0.0))
        counts[row["task"]] = counts.get(row["task"], 0) + 1
        for phase in PHASES:
            task[phase] += number(row.get(f"phase_{phase}_seconds")) or 0
            task[f"{phase}_cpu"] += number(row.get(f"phase_{phase}_cpu_seconds")) or 0
        task["step"] += (number(row.get("end")) or 0) - (number(row.get("start")) or 0)
    return {name: {k: v / counts[name] for k, v in task.items()} for name, task in sums.items()}


def cpu_per_step(phases, phase):
    """CPU seconds per step of one phase ("step": of them all) from
    phase_seconds_per_step's figures of a task."""
    if phase == "step":
        return sum(phases[f"{p}_cpu"] for p in PHASES)
    return phases[f"{phase}_cpu"]


def phase_rows(sims, reals):
    """Rows (task, phase, simulated ms, real ms, error, simulated CPU ms, real
    CPU ms) of the tasks in both runs, medians over repeats; phases that are
    zero on both sides left out."""
    sim_runs = [phase_seconds_per_step(run.path) for run in sims]
    real_runs = [phase_seconds_per_step(run.path) for run in reals]
    if not all(sim_runs) or not all(real_runs):
        return []
    rows = []
    for task in real_runs[0]:
        if not all(task in by_task for by_task in sim_runs + real_runs):
            continue
        for phase in PHASES + ["step"]:
            s = median([by_task[task][phase] for by_task in sim_runs])
            r = median([by_task[task][phase] for by_task in real_runs])
            if phase != "step" and max(abs(s), abs(r)) < 1e-7:
                continue
            cpu = [median([cpu_per_step(by_task[task], phase) for by_task in runs])
                   for runs in (sim_runs, real_runs)]
            rows.append([task, "whole step" if phase == "step" else phase,
                         f"{1e3 * s:.3f}", f"{1e3 * r:.3f}", error_text(s, r),
                         f"{1e3 * cpu[0]:.3f}", f"{1e3 * cpu[1]:.3f}"])
    return rows


def step_durations(run):
    """(step, seconds) of every step of replica 0: the first task of steps.csv,
    which lists the chief first, or worker 0 where there is no chief."""
    rows = run_directories.read_csv(os.path.join(run.path, "steps.csv"))
    first = rows[0]["task"] if rows else None
    points = []
    for row in rows:
        if row["task"] != first:
            continue
        start, end = number(row.get("start")), number(row.get("end"))
        if start is not None and end is not None:
            points.append((int(row["step"]), end - start))
    return points


def simulated_real_figure(pairs, folder):
    fig = figures.Figure("simulated-vs-real", "Simulated against real", panels=2)
    accuracy, steps, dashed = [], [], set()
    for i, (sims, reals, label) in enumerate(pairs):
        for k, (run, what) in enumerate(((sims[0], "simulated"), (reals[0], "real"))):
            name = f"{label} ({what})" if len(pairs) > 1 and label != "runs" else what
            # A colour per run; simulated runs dashed as well.
            accuracy.append((name, run.accuracy_curve(), 2 * i + k))
            steps.append((name, [(s, 1000 * d) for s, d in step_durations(run)], 2 * i + k))
            if what == "simulated":
                dashed.add(name)
    figures.curves(fig, fig.axes[0], accuracy, "seconds (simulated, or wall-clock)",
                   "test accuracy", "Test accuracy against time", percent=True, dashed=dashed)
    figures.curves(fig, fig.axes[1], steps, "step", "milliseconds",
                   "Duration of each step of replica 0", dashed=dashed, integer_x=True)
    fig.save(folder)
    caption = ("The same scenario and settings simulated (dashed) and run on real sockets"
               " (solid): the learning curve, and the duration of every step of replica 0 (the"
               " chief, or worker 0)" + (", of the first run of each" if any(
                   len(s) > 1 or len(r) > 1 for s, r, _ in pairs) else "") + ".")
    return ("simulated-vs-real", "Simulated against real", caption, fig.series)


def error_text(simulated, real):
    if simulated is None or real is None or real == 0:
        return "n/a"
    return f"{100 * (simulated - real) / abs(real):+.1f}%"


# ---- Markdown --------------------------------------------------------------------


def fmt(value, kind="plain"):
    if value is None:
        return "n/a"
    if kind == "percent":
        return f"{100 * value:.1f}%"
    if kind == "int":
        return f"{value:,.0f}"
    if kind == "bytes":
        for scale, suffix in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
            if value >= scale:
                return f"{value / scale:.2f} {suffix}"
        return f"{value:.0f} B"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def slug(text):
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    return "\n".join(lines)


MACHINE_FIGURES = [("vcpus", "vCPUs"), ("memory_gib", "memory (GiB)"),
                   ("cpu_peak_gflops", "CPU peak (GFLOP/s)"), ("nic_gbps", "network (Gbit/s)"),
                   ("disk_write_mb_per_s", "disk write (MB/s)"), ("gpus", "GPUs"),
                   ("gpu_peak_tflops", "GPU peak (TFLOP/s)")]


def machines_section(runs):
    machines = {}
    for run in runs:
        for name, facts in (run.summary.get("machines") or {}).items():
            machines.setdefault(name, facts)
    if not machines:
        return "No machine figures recorded (runs made before distlab recorded them, or ./train).\n"
    present = [(k, h) for k, h in MACHINE_FIGURES if any(k in f for f in machines.values())]
    rows = []
    for name, facts in machines.items():
        rows.append([f"`{name}`"] + [fmt(number(facts.get(k))) if k in facts else ""
                                      for k, _ in present] + [facts.get("description", "")])
    return markdown_table(["machine type"] + [h for _, h in present] + ["source"], rows) + "\n"


def code(text):
    """Inline code that holds backticks too (CommonMark: a longer fence)."""
    text = str(text).replace("\n", " ")
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


def plain(text):
    """Text for a Markdown line or cell: one line, no HTML."""
    return html.escape(" ".join(str(text).split()), quote=False)


def write_report(out, sweeps, runs, labels, made, pairs, target, target_given, keys, command):
    lines = []
    scenarios = sorted({run.scenario for run in runs})
    lines.append(f"# distlab report: {', '.join(scenarios)}\n")
    versions = sorted({str(run.summary.get("version")) for run in runs
                       if run.summary.get("version")})
    lines.append(f"Made {datetime.date.today().isoformat()} by {code(command)}"
                 + (f" from runs of distlab {', '.join(code(v) for v in versions)}" if versions
                    else "") + ".\n")

    lines.append("## What was run\n")
    descriptions = {}
    for run in runs:
        descriptions.setdefault(run.scenario, run.summary.get("description", ""))
    for name, description in descriptions.items():
        lines.append(f"- Scenario **{plain(name)}**" + (f": {plain(description)}"
                                                         if description else ""))
    for sweep in sweeps:
        d = sweep.definition
        lines.append(f"- Sweep of {code(d.get('scenario'))} on {d.get('backend')}, "
                     f"{len(d.get('points', []))} runs ({len(sweep.runs)} complete):")
        for vary in d.get("vary", []):
            lines.append(f"  - {code(vary['key'])} = "
                         + ", ".join(code(v) for v in vary["values"]))
        for text in d.get("set", []):
            lines.append(f"  - every run: {code('--set ' + text)}")
        for key in d.get("unset", []):
            lines.append(f"  - every run: {code('--unset ' + key)}")
        if d.get("repeat", 1) > 1:
            lines.append(f"  - each point run {d['repeat']} times (figures: medians)")
    if keys:
        lines.append(f"- What differs between the runs: {', '.join(code(k) for k in keys)}")
    lines.append(f"- Clock: {clock_unit(runs)}")
    lines.append("")
    shown = set()
    for run in runs:
        text = run.scenario_text()
        if text is None or run.scenario in shown:
            continue
        shown.add(run.scenario)
        others = sum(1 for r in runs if r.scenario == run.scenario) - 1
        differ = "the other run differs" if others == 1 else f"the other {others} differ"
        lines.append(f"<details><summary>Scenario {plain(run.scenario)} as run by "
                     f"{plain(labels[run.path])}"
                     + (f" ({differ} in the values above)" if others and keys else "")
                     + "</summary>\n")
        lines.append("```yaml\n" + text.rstrip() + "\n```\n</details>\n")
    lines.append("### Commands\n")
    lines.append("Run from the distlab checkout:\n")
    commands = [f"{sweep.definition.get('command')}" for sweep in sweeps if
                sweep.definition.get("command")]
    if commands:
        lines.append("```\n" + "\n".join(commands) + "\n```\n")
        lines.append("which ran, one run directory each:\n")
    lines.append("```")
    for run in runs:
        lines.append(run.summary.get("command") or f"(not recorded) {run.path}")
    lines.append("```\n")
    lines.append("### Machine types\n")
    lines.append(machines_section(runs))

    lines.append("## Results\n")
    header = ["run", "backend", "strategy", "replicas", "time (s)", "examples/s",
              "communication", "bytes/step", "checkpoints", "final accuracy"]
    if target is not None:
        header.insert(-1, f"time to {100 * target:.0f}% (s)")
    rows = []
    for run in runs:
        checkpoints = (run.summary.get("checkpoints") or {}).get("files") or \
            (number(run.summary.get("checkpoint_seconds")) or 0) > 0
        row = [plain(labels[run.path]), run.kind, run.strategy,
               fmt(run.figure("replicas"), "int"), fmt(run.figure("run_seconds")),
               fmt(run.figure("examples_per_second"), "int"),
               fmt(run.figure("communication_fraction"), "percent"),
               fmt(run.figure("bytes_per_step"), "bytes"),
               fmt(run.figure("checkpoint_fraction"), "percent") if checkpoints else "none",
               fmt(run.figure("final_accuracy"))]
        if target is not None:
            row.insert(-1, fmt(run.seconds_to_accuracy(target)))
        rows.append(row)
    lines.append(markdown_table(header, rows) + "\n")
    lines.append("Communication: the share of the tasks' busy time spent in transfers or waiting"
                 " for a peer. Checkpoints: the share spent writing them."
                 + (f" Time to {100 * target:.0f}%: when the chief's evaluation first reached"
                    f" it ({target_source(target_given)})."
                    if target is not None else "") + "\n")

    if pairs:
        lines.append("## Simulated against real\n")
        lines.append("Each setting run on both backends: its figures simulated and real, and the"
                     " error = simulated / real - 1 (medians where a setting ran several times).\n")
        for sims, reals, label in pairs:
            lines.append(f"**{plain(label)}**: {len(sims)} simulated, {len(reals)} real\n")
            rows = []
            for name, key in COMPARED:
                s = median([r.figure(key) for r in sims])
                r = median([run.figure(key) for run in reals])
                kind = "percent" if key == "communication_fraction" else (
                    "bytes" if key == "bytes_per_step" else "plain")
                rows.append([name, fmt(s, kind), fmt(r, kind), error_text(s, r)])
            lines.append(markdown_table(["figure", "simulated", "real", "error"], rows) + "\n")
        phases = [(label, phase_rows(sims, reals)) for sims, reals, label in pairs]
        if any(rows for _, rows in phases):
            lines.append("## Where the time goes, simulated against real\n")
            lines.append("Each task's milliseconds per step, phase by phase, as steps.csv splits"
                         " them (the phases add up to the step; \"other\" is time the run did not"
                         " name), and the error = simulated / real - 1. Beside them, the CPU"
                         " milliseconds each phase used (all the task's threads: more than the"
                         " wall time when it computed on several, less when it waited).\n")
            for label, rows in phases:
                if not rows:
                    continue
                lines.append(f"**{plain(label)}**\n")
                lines.append(markdown_table(["task", "phase", "simulated (ms)", "real (ms)",
                                             "error", "CPU simulated (ms)", "CPU real (ms)"],
                                            rows) + "\n")

    lines.append("## Figures\n")
    for name, title, caption, _ in made:
        lines.append(f"### {title}\n")
        lines.append(f"![{title}](figures/{name}.png)\n")
        lines.append(f"{caption} ([SVG](figures/{name}.svg))\n")

    failed = []
    for sweep in sweeps:
        done = {run.point for run in sweep.runs}
        failed += [p["name"] for p in sweep.definition.get("points", []) if p["name"] not in done]
    if failed:
        lines.append("## Runs missing\n")
        lines.append("These points of the sweep have no complete run directory (failed, or not run"
                     " yet; their logs are in the sweep's logs/):\n")
        lines += [f"- {code(name)}" for name in failed]
        lines.append("")
    path = os.path.join(out, "report.md")
    run_directories.write_atomically(path, "\n".join(lines).rstrip() + "\n")
    return path


def target_source(given):
    if given:
        return "the target given"
    return "95% of the lowest best accuracy among the runs; --target-accuracy sets it"


def run_labels(runs, keys, table):
    labels = {}
    for run, dims in zip(runs, table):
        label = label_of(dims, keys) if keys else run.scenario
        labels[run.path] = label
    # Repeats and runs that differ in nothing shown keep their folder's name.
    counts = {}
    for label in labels.values():
        counts[label] = counts.get(label, 0) + 1
    for run in runs:
        if counts[labels[run.path]] > 1:
            labels[run.path] = f"{labels[run.path]} ({os.path.basename(run.path.rstrip('/'))})"
    return labels


def default_target(runs):
    best = [run.figure("best_accuracy") for run in runs if run.accuracies()]
    if not best:
        return None
    return int(95 * min(best)) / 100.0


def fresh_folder(path):
    """Makes a new folder at path, or at path-2, path-3, ... when that exists,
    and returns it: a report's default folder is never an earlier one, even
    for two reports begun in the same second."""
    candidate, n = path, 2
    while True:
        try:
            os.makedirs(candidate)
            return candidate
        except FileExistsError:
            candidate, n = f"{path}-{n}", n + 1


def claim_out(out):
    """Takes a --out that is new or empty; one that holds anything is
    refused, as ./simulate refuses it: a report never writes over a run, a
    sweep or an earlier report."""
    if os.path.lexists(out) and not os.path.isdir(out):
        raise BadInput(f"--out {out}: a file, not a folder")
    if os.path.isdir(out) and os.listdir(out):
        raise BadInput(f"--out {out}: holds {run_directories.what_it_holds(out)}; a report never "
                       "writes over anything: give another --out, or none for a new folder")
    os.makedirs(out, exist_ok=True)
    return out


def default_out(sweeps, loose, now):
    """A new folder named by the time: in the sweep, for a report of one
    sweep alone, else in runs/."""
    parent = sweeps[0].path if len(sweeps) == 1 and not loose else "runs"
    return fresh_folder(os.path.join(parent, "report-" + now.strftime("%Y%m%d-%H%M%S")))


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="./report",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Writes report.md and its figures (PNG and SVG) from sweeps and run\n"
                    "directories of ./simulate, ./realnet and ./train.",
        epilog="Examples:\n"
               "  ./report runs/sweep-strategies\n"
               "  ./report runs/ps_4workers-20261126-101500 runs/ps-real --out runs/sim-vs-real\n"
               "  ./report runs/train-mnist_cnn-*/\n"
               "The figures follow what differs between the runs: a figure of throughput, time,\n"
               "communication share, bytes per step (and checkpoint overhead) against each\n"
               "varied number, where each task's time goes, test accuracy against time, and,\n"
               "for a simulated and a real run of the same scenario, both overlaid with the\n"
               "error of each figure.\n"
               "A report never writes over anything: --out must be new or empty, and the\n"
               "default folder is a new one each time (-2, -3, ... added within a second).\n"
               "Exit status: 0 done, 2 bad input (no runs, a path that is none, an --out that\n"
               "holds anything).")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="a sweep folder, a run directory, or a folder of run directories")
    parser.add_argument("--out", metavar="DIR",
                        help="where report.md and figures/ go: a new or empty folder (default: "
                             "a new SWEEP/report-<time> for one sweep, else runs/report-<time>)")
    parser.add_argument("--target-accuracy", type=float, metavar="A",
                        help="the test accuracy of 'time to accuracy' (default: 95%% of the lowest"
                             " best accuracy of the runs)")
    args = parser.parse_args(argv)
    command = run_directories.invoked_command("./report", argv)
    try:
        try:
            sweeps, loose = run_directories.collect(args.paths)
        except run_directories.NotARun as e:
            raise BadInput(str(e))
        runs = [run for sweep in sweeps for run in sweep.runs] + loose
        seen, unique = set(), []
        for run in runs:
            if os.path.realpath(run.path) not in seen:
                seen.add(os.path.realpath(run.path))
                unique.append(run)
        runs = unique
        if not runs:
            raise BadInput("no complete run under " + ", ".join(args.paths))
        if args.target_accuracy is not None and not 0 < args.target_accuracy <= 1:
            raise BadInput("--target-accuracy: give a fraction, e.g. 0.85")
        out = claim_out(args.out) if args.out else \
            default_out(sweeps, loose, datetime.datetime.now())
        folder = os.path.join(out, "figures")
        os.makedirs(folder, exist_ok=True)

        keys, table = choose_dimensions(runs)
        labels = run_labels(runs, keys, table)
        target_given = args.target_accuracy is not None
        target = args.target_accuracy if target_given else default_target(runs)
        made = metric_figures(runs, target, folder)
        breakdown = time_figure(runs, labels, folder)
        if breakdown:
            made.append(breakdown)
        accuracy = accuracy_figure(runs, labels, folder)
        if accuracy:
            made.append(accuracy)
        pairs = simulated_real_pairs(runs, table, keys)
        if pairs:
            made.append(simulated_real_figure(pairs, folder))
        path = write_report(out, sweeps, runs, labels, made, pairs, target, target_given, keys,
                            command)
        print(f"wrote {path} and {len(made)} figure{'s' if len(made) != 1 else ''} in {folder}/"
              " (PNG and SVG)")
        return EXIT_OK
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
