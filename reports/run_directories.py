"""Reading run directories of every kind: ./simulate and ./realnet (one
schema: summary.json, steps.csv, curve.csv, timeline.json), ./train
(summary.json with one entry per epoch, curve.csv), and sweeps (sweep.json,
runs/<point>/). What a report or sweep.csv shows of a run is derived here,
once."""

import csv
import json
import math
import os
import re
import sys

import yaml


class NotARun(Exception):
    """A path that is no run directory, sweep or folder of them."""


def shell_quote(word):
    """As run/provenance.cc quotes: bare when safe, else in single quotes."""
    if word and re.fullmatch(r"[A-Za-z0-9@%+=:,./_-]+", word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def write_atomically(path, text):
    """Writes a file under a temporary name, then renames it: never half a file."""
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        f.write(text)
    os.replace(temporary, path)


def what_it_holds(folder):
    """What a folder holds, for the message that refuses to write into it."""
    if os.path.isfile(os.path.join(folder, "summary.json")):
        return "a run directory (summary.json)"
    if os.path.isfile(os.path.join(folder, "sweep.json")):
        return "a sweep (sweep.json)"
    if os.path.isdir(os.path.join(folder, "checkpoints")):
        return "checkpoints of a run"
    if os.path.isfile(os.path.join(folder, "report.md")):
        return "a report (report.md)"
    names = sorted(os.listdir(folder))
    return "files (" + ", ".join(names[:3]) + (", ..." if len(names) > 3 else "") + ")"


def shell_command(args):
    return " ".join(shell_quote(a) for a in args)


def invoked_command(name, argv):
    """How this program was invoked, to record: the root script's name as the
    user typed it (DISTLAB_COMMAND_NAME, set by ./sweep and ./report), then
    the arguments."""
    return shell_command([os.environ.get("DISTLAB_COMMAND_NAME", name)] +
                         (argv if argv is not None else sys.argv[1:]))


def number(value):
    """A finite float, or None (JSON null, an empty CSV cell, NaN)."""
    if value is None or value == "":
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def read_csv(path):
    if not os.path.isfile(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class Run:
    """One run directory and what is derived from it."""

    def __init__(self, path, summary, curve, sweep_values=None, point=None):
        self.path = path
        self.summary = summary
        self.curve = curve  # rows of curve.csv: seconds, step, test_accuracy, ...
        self.kind = summary.get("backend") or ("train" if "epochs" in summary else "unknown")
        # The sweep's varied values for this run ({} outside a sweep), and its point name.
        self.values = dict(sweep_values or {})
        self.point = point

    # ---- identity ----------------------------------------------------------

    @property
    def scenario(self):
        if self.kind == "train":
            return "train-" + str(self.summary.get("model", "model"))
        return self.summary.get("scenario", os.path.basename(self.path))

    @property
    def strategy(self):
        return self.summary.get("strategy", "local" if self.kind == "train" else "?")

    @property
    def clock(self):
        """What the run's seconds are: simulated or wall-clock."""
        return "simulated" if self.kind == "simulate" else "wall"

    def scenario_text(self):
        """The scenario as it ran (scenario.yaml), or None for older runs and ./train."""
        path = os.path.join(self.path, "scenario.yaml")
        if not os.path.isfile(path):
            return None
        with open(path) as f:
            return f.read()

    def scenario_values(self):
        """The scenario as it ran, flattened to dotted keys ("cluster.workers": "4");
        {} without scenario.yaml. List values stay whole (one value)."""
        text = self.scenario_text()
        if text is None:
            return {}
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError:
            return {}
        values = {}

        def flatten(prefix, node):
            if isinstance(node, dict):
                for key, child in node.items():
                    flatten(f"{prefix}.{key}" if prefix else str(key), child)
            else:
                values[prefix] = node if isinstance(node, (int, float, str)) else \
                    json.dumps(node, sort_keys=True)
        flatten("", document if isinstance(document, dict) else {})
        return values

    def tasks(self):
        return self.summary.get("tasks", [])

    def machine_types(self):
        """The machine type of each task's host, from 'worker-0 (n1-standard-4)'."""
        types = []
        for task in self.tasks():
            match = re.search(r"\(([^)]+)\)\s*$", task.get("host", ""))
            name = match.group(1) if match else None
            if name and name not in types:
                types.append(name)
        if not types:
            types = list(self.summary.get("machines", {}).keys())
        return types

    # ---- figures -----------------------------------------------------------

    def figure(self, name):
        """A figure of the run by name: a summary.json key, or one derived here."""
        s = self.summary
        if self.kind == "train":
            epochs = s.get("epochs", [])
            if name == "run_seconds":
                return number(s.get("wall_seconds"))
            if name == "examples_per_second":
                # Every epoch's rate weighted by its time: all examples over
                # all training seconds (curve.csv's seconds are cumulative).
                examples, seconds, before = 0.0, 0.0, 0.0
                for row in self.curve:
                    rate, at = number(row.get("examples_per_second")), number(row.get("seconds"))
                    if rate is None or at is None:
                        continue
                    examples += rate * (at - before)
                    seconds += at - before
                    before = at
                return examples / seconds if seconds > 0 else None
            if name == "replicas":
                return 1
            if name == "backend":
                return "train"
            if name == "strategy":
                return "local"
        derived = {
            "bytes_per_step": lambda: ratio(s.get("bytes_sent"), s.get("steps")),
            "checkpoint_fraction": lambda: ratio(
                s.get("checkpoint_seconds"),
                sum(number(s.get(k)) or 0 for k in ("compute_seconds", "communication_seconds",
                                                    "waiting_seconds", "checkpoint_seconds"))),
            "best_accuracy": lambda: max((a for a in self.accuracies()), default=None),
        }
        if name in derived:
            return derived[name]()
        value = s.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return number(value)
        return value

    def accuracies(self):
        return [a for a in (number(row.get("test_accuracy")) for row in self.curve)
                if a is not None]

    def accuracy_curve(self):
        """(seconds, test accuracy) points, in order."""
        points = []
        for row in self.curve:
            t, a = number(row.get("seconds")), number(row.get("test_accuracy"))
            if t is not None and a is not None:
                points.append((t, a))
        return points

    def seconds_to_accuracy(self, target):
        """When the test accuracy first reached `target`; None if it never did."""
        for t, a in self.accuracy_curve():
            if a >= target:
                return t
        return None

    def time_breakdown(self):
        """Per task: (name, compute, communication, waiting, checkpoint, input)
        seconds (input: waiting for the input pipeline; 0 in runs before it)."""
        rows = []
        for task in self.tasks():
            rows.append((task.get("task", "?"),
                         number(task.get("compute_seconds")) or 0,
                         number(task.get("communication_seconds")) or 0,
                         number(task.get("waiting_seconds")) or 0,
                         number(task.get("checkpoint_seconds")) or 0,
                         number(task.get("input_seconds")) or 0))
        return rows

    def describe_figures(self):
        """One line for progress displays."""
        parts = []
        rate = self.figure("examples_per_second")
        if rate is not None:
            parts.append(f"{rate:,.0f} examples/s")
        share = self.figure("communication_fraction")
        if share is not None:
            parts.append(f"{100 * share:.0f}% communication")
        accuracy = self.figure("final_accuracy")
        if accuracy is not None:
            parts.append(f"accuracy {accuracy:.3f}")
        return ", ".join(parts) or "no figures"


def ratio(a, b):
    a, b = number(a), number(b)
    if a is None or b is None or b == 0:
        return None
    return a / b


def load_run(path, sweep_values=None, point=None):
    summary_path = os.path.join(path, "summary.json")
    try:
        with open(summary_path) as f:
            summary = json.load(f)
    except OSError as e:
        raise NotARun(f"{path}: no summary.json ({e.strerror})")
    except json.JSONDecodeError as e:
        raise NotARun(f"{summary_path}: not JSON ({e.msg}, line {e.lineno})")
    if not isinstance(summary, dict):
        raise NotARun(f"{summary_path}: not a run summary")
    return Run(path, summary, read_csv(os.path.join(path, "curve.csv")), sweep_values, point)


class Sweep:
    """A sweep folder: its definition (sweep.json) and its complete runs."""

    def __init__(self, path, definition, runs):
        self.path = path
        self.definition = definition
        self.runs = runs


def load_sweep(path):
    with open(os.path.join(path, "sweep.json")) as f:
        definition = json.load(f)
    runs = []
    for point in definition.get("points", []):
        run_path = os.path.join(path, "runs", point["name"])
        if os.path.isfile(os.path.join(run_path, "summary.json")):
            runs.append(load_run(run_path, point.get("values"), point["name"]))
    return Sweep(path, definition, runs)


def collect(paths):
    """The sweeps and loose runs under the given paths: a sweep folder, a run
    directory, or a folder of run directories (./runs, say)."""
    sweeps, runs = [], []
    for path in paths:
        if os.path.isfile(os.path.join(path, "sweep.json")):
            sweeps.append(load_sweep(path))
        elif os.path.isfile(os.path.join(path, "summary.json")):
            runs.append(load_run(path))
        elif os.path.isdir(path):
            folders = sorted(os.path.join(path, d) for d in os.listdir(path)
                             if not d.startswith("."))
            found_sweeps = [d for d in folders if os.path.isfile(os.path.join(d, "sweep.json"))]
            found_runs = [d for d in folders if os.path.isfile(os.path.join(d, "summary.json"))]
            if not found_sweeps and not found_runs:
                raise NotARun(f"{path}: neither a run directory (summary.json), a sweep "
                              "(sweep.json) nor a folder of them")
            sweeps.extend(load_sweep(d) for d in found_sweeps)
            runs.extend(load_run(d) for d in found_runs)
        else:
            raise NotARun(f"{path}: no such directory")
    return sweeps, runs
