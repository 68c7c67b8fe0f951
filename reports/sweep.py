"""./sweep: runs a scenario over the cross product of values of its keys.

    ./sweep SCENARIO --vary KEY=V1,V2,... [--vary ...] --out DIR

Every point is an ordinary run directory, DIR/runs/<point>/, made by
./simulate (several at once) or ./realnet --launch (one at a time, so that
real runs do not share the CPUs). A point is done when its run directory is
complete; a sweep run again skips the points already done, so an interrupted
or partly failed sweep is finished by running the same command again. Nothing
an earlier attempt left is written over: a point run again renames its
earlier log (and any incomplete run directory) aside first. DIR must be new,
empty, or this sweep's own.
DIR/sweep.csv has one row per run: the varied values and the summary's
figures. DIR/sweep.json records the sweep itself, for ./report.
"""

import argparse
import csv
import hashlib
import io
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

import run_directories

# Exit statuses, as the other commands have them.
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2

# The figures of summary.json that sweep.csv keeps, after the varied values.
SUMMARY_COLUMNS = [
    "backend", "strategy", "fidelity", "replicas", "steps", "examples",
    "run_seconds", "wall_seconds", "examples_per_second", "communication_fraction",
    "bytes_per_step", "compute_seconds", "communication_seconds", "waiting_seconds",
    "checkpoint_seconds", "checkpoint_fraction", "input_seconds", "restarts", "final_loss",
    "final_accuracy",
]


# sweep.csv's own columns; a varied key with one of these names becomes "vary:KEY".
RESERVED = {"point", "repeat", "status", "error"}


def summary_column(name, varied_keys):
    """A summary figure's column, renamed "summary:NAME" where a varied key has its name."""
    return f"summary:{name}" if name in varied_keys else name


class BadInput(Exception):
    """A mistake in the command line: exit status 2, one line."""


def parse_vary(text):
    """'cluster.workers=2,4,8' -> ('cluster.workers', ['2', '4', '8'])."""
    key, eq, values = text.partition("=")
    if not eq or not key:
        raise BadInput(f"--vary {text}: expected KEY=V1,V2,... e.g. --vary cluster.workers=2,4,8")
    if any(not part for part in key.split(".")):
        raise BadInput(f"--vary {text}: key '{key}' has an empty part (write section.key)")
    items = split_values(values)
    if not items or any(v == "" for v in items):
        raise BadInput(f"--vary {text}: give one or more values, separated by commas")
    if len(set(items)) != len(items):
        raise BadInput(f"--vary {text}: a value is given twice")
    return key, items


# Folder names longer than this are shortened, with a hash of the values.
MAX_NAME = 100


def point_name(values, repeat, repeats):
    """A folder name for a point: 'strategy.name=allreduce,cluster.workers=2' (and '#2').
    Characters a folder name cannot hold, or that would read as a repeat,
    become '_'; a name that had to change that way, or is too long, ends in
    a hash of the values, so that two points never share a folder."""
    text = ",".join(f"{k}={v}" for k, v in values)
    name = "".join("_" if c in "/\\\0\n\r#" else c for c in text)
    if name != text or len(name) > MAX_NAME:
        digest = hashlib.sha1(text.encode()).hexdigest()[:8]
        name = name[:MAX_NAME - 9] + "~" + digest
    if repeats > 1:
        name += f"#{repeat}"
    return name or "base"


def split_values(text):
    """'1,2,4' -> ['1', '2', '4']; commas inside [...] or {...} (YAML flow
    values) do not split: '[],[{task: chief, at_step: 3}]' is two values."""
    values, depth, current = [], 0, ""
    for c in text:
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        if c == "," and depth == 0:
            values.append(current.strip())
            current = ""
        else:
            current += c
    values.append(current.strip())
    return values


class Sweep:
    def __init__(self, args, binaries, command):
        self.args = args
        self.binaries = binaries
        self.command = command
        self.out = os.path.abspath(args.out)
        self.runs = os.path.join(self.out, "runs")
        self.logs = os.path.join(self.out, "logs")
        varies = [parse_vary(v) for v in args.vary]
        keys = [k for k, _ in varies]
        if len(set(keys)) != len(keys):
            raise BadInput("--vary: a key is varied twice; give all its values in one --vary")
        fixed = {text.partition("=")[0] for text in args.set} | set(args.unset)
        clash = set(keys) & fixed
        if clash:
            raise BadInput(f"--vary {sorted(clash)[0]}: the key is also given by --set or --unset")
        self.varies = varies
        self.points = []
        for combination in itertools.product(*[values for _, values in varies]):
            values = list(zip(keys, combination))
            for repeat in range(1, args.repeat + 1):
                self.points.append({"values": values, "repeat": repeat,
                                    "name": point_name(values, repeat, args.repeat)})
        # The runs in flight, so that an interrupted sweep stops them all.
        self.lock = threading.Lock()
        self.running = set()
        self.stopping = False

    # ---- one point ---------------------------------------------------------

    def arguments(self, point):
        """The command that makes a point's run directory, as a user would type it."""
        backend = self.args.backend
        args = ["./simulate", self.args.scenario] if backend == "simulate" else \
               ["./realnet", "--launch", self.args.scenario]
        for key in self.args.unset:
            args += ["--unset", key]
        for text in self.args.set:
            args += ["--set", text]
        for key, value in point["values"]:
            args += ["--set", f"{key}={value}"]
        if self.args.fidelity and backend == "simulate":
            args += ["--fidelity", self.args.fidelity]
        if backend == "simulate":
            args += ["--threads", str(self.threads_per_run())]
        else:
            args += ["--threads", str(self.args.threads or 1)]
        return args

    def threads_per_run(self):
        if self.args.threads:
            return self.args.threads
        return max(1, (os.cpu_count() or 1) // self.jobs())

    def jobs(self):
        if self.args.backend == "realnet":
            return 1  # real runs time themselves: never two at once
        return max(1, self.args.jobs or (os.cpu_count() or 1))

    def done(self, point):
        return os.path.isfile(os.path.join(self.runs, point["name"], "summary.json"))

    def set_aside_earlier(self, point):
        """Renames what an earlier attempt at a point left, which running it
        again would write over: its log (logs/<point>.log.1, .2, ...), and
        its incomplete run directory, of a run that failed or of a sweep
        killed outright (runs/.<point>.partial.1, ...). Returns what and
        where."""
        final = os.path.join(self.runs, point["name"])
        partial = os.path.join(self.runs, "." + point["name"] + ".partial")
        log = os.path.join(self.logs, point["name"] + ".log")
        kept = []
        # A point's folder without summary.json is no run that finished
        # (points are renamed into place once complete): kept as a partial.
        incomplete = "incomplete run directory"
        for what, path, aside in (("log", log, log), (incomplete, partial, partial),
                                  (incomplete, final, partial)):
            if os.path.lexists(path):
                n = 1
                while os.path.lexists(f"{aside}.{n}"):
                    n += 1
                os.rename(path, f"{aside}.{n}")
                kept.append((what, f"{aside}.{n}"))
        return kept

    def run_point(self, point):
        """Runs one point; whatever goes wrong is this point's failure, not the sweep's."""
        try:
            return self.run_point_or_raise(point)
        except OSError as e:
            return point, False, 0.0, f"{e.strerror or e}: {e.filename or ''}".rstrip(": ")

    def stop_all(self):
        """Ends the runs in flight (each leads its own process group) and starts no more."""
        with self.lock:
            self.stopping = True
            for process in self.running:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass

    def run_point_or_raise(self, point):
        """Runs one point into a hidden folder, renamed when complete, so that a
        point interrupted or failed never looks done."""
        final = os.path.join(self.runs, point["name"])
        partial = os.path.join(self.runs, "." + point["name"] + ".partial")
        log_path = os.path.join(self.logs, point["name"] + ".log")
        args = self.arguments(point) + ["--out", partial]
        binary = self.binaries[self.args.backend]
        started = time.monotonic()
        with open(log_path, "w") as log:
            log.write("$ " + run_directories.shell_command(args) + "\n")
            log.flush()
            with self.lock:
                if self.stopping:
                    return point, False, 0.0, "not started: the sweep was interrupted"
                # argv[0] is the user's command (./simulate), so that the run
                # directory records the command as it can be typed again. Its
                # own session: a terminal's Ctrl-C reaches the sweep alone,
                # which stops every run it started.
                process = subprocess.Popen(args, executable=binary, stdout=log,
                                           stderr=subprocess.STDOUT, start_new_session=True)
                self.running.add(process)
            status = process.wait()
            with self.lock:
                self.running.discard(process)
        seconds = time.monotonic() - started
        if status != 0 or not os.path.isfile(os.path.join(partial, "summary.json")):
            # What the failed run left (its checkpoints, its tasks' records)
            # stays in the hidden folder, which never looks done; the next
            # attempt sets it aside. An empty one goes.
            try:
                os.rmdir(partial)
            except OSError:
                pass
            return point, False, seconds, last_error(log_path, status)
        # The run directory names itself as --out PARTIAL; it is the final one.
        fix_recorded_out(partial, final)
        os.rename(partial, final)
        return point, True, seconds, ""

    # ---- the whole sweep ---------------------------------------------------

    def write_definition(self):
        with open(self.args.scenario, "rb") as f:
            scenario_sha256 = hashlib.sha256(f.read()).hexdigest()
        definition = {
            "scenario": self.args.scenario,
            "scenario_sha256": scenario_sha256,
            "backend": self.args.backend,
            "vary": [{"key": k, "values": v} for k, v in self.varies],
            "set": self.args.set,
            "unset": self.args.unset,
            "repeat": self.args.repeat,
            "fidelity": self.args.fidelity,
            "command": self.command,
            "points": [{"name": p["name"], "values": dict(p["values"]), "repeat": p["repeat"],
                        "command": run_directories.shell_command(
                            self.arguments(p) + ["--out", os.path.join(self.args.out, "runs",
                                                                       p["name"])])}
                       for p in self.points],
        }
        path = os.path.join(self.out, "sweep.json")
        if os.path.isfile(path):
            try:
                with open(path) as f:
                    old = json.load(f)
            except (OSError, ValueError) as e:
                old = e
            if not isinstance(old, dict):
                raise BadInput(f"{path}: not a sweep.json that ./sweep wrote; give another --out")
            # The same sweep, perhaps with other values of its keys: a point
            # is named by its values, so the runs done stay valid.
            fixed = ("scenario", "backend", "set", "unset", "repeat", "fidelity")
            same = {k: old.get(k) for k in fixed}
            same["keys"] = [v.get("key") for v in old.get("vary", [])]
            new = {k: definition[k] for k in fixed}
            new["keys"] = [k for k, _ in self.varies]
            if same != new:
                raise BadInput(f"{self.args.out} holds another sweep ({old.get('command')}); "
                               "give another --out, or remove it")
            if old.get("scenario_sha256") not in (None, scenario_sha256):
                raise BadInput(f"{self.args.scenario} changed since {self.args.out} was begun: "
                               "its runs would mix two versions; give another --out")
        run_directories.write_atomically(path, json.dumps(definition, indent=2) + "\n")

    def write_csv(self, failures):
        """Writes sweep.csv; returns the points whose run directory is there
        but cannot be read (a damaged summary.json), each with its error."""
        keys = [k for k, _ in self.varies]
        rows = []
        damaged = {}
        for point in self.points:
            row = {"point": point["name"], "repeat": point["repeat"]}
            row.update({f"vary:{k}" if k in RESERVED else k: v for k, v in point["values"]})
            summary_path = os.path.join(self.runs, point["name"], "summary.json")
            if os.path.isfile(summary_path):
                try:
                    run = run_directories.load_run(os.path.dirname(summary_path))
                except run_directories.NotARun as e:
                    # Not run again over it: what is left of it may matter.
                    row["status"] = "damaged"
                    row["error"] = damaged[point["name"]] = \
                        f"{e}; move its run directory away to run the point again"
                    rows.append(row)
                    continue
                row["status"] = "done"
                for column in SUMMARY_COLUMNS:
                    row[summary_column(column, keys)] = run.figure(column)
            else:
                row["status"] = "failed" if point["name"] in failures else "not run"
                row["error"] = failures.get(point["name"], "")
            rows.append(row)
        columns = (["point", "repeat"] + [f"vary:{k}" if k in RESERVED else k for k in keys]
                   + ["status"] + [summary_column(c, keys) for c in SUMMARY_COLUMNS] + ["error"])
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: format_cell(row.get(k)) for k in columns})
        run_directories.write_atomically(os.path.join(self.out, "sweep.csv"), buffer.getvalue())
        return damaged

    def claim_out(self):
        """Makes the sweep's folder, or takes one that holds this sweep to go on
        with it. Anything else there is refused, as ./simulate refuses an --out
        that holds something: a sweep never writes into another folder."""
        if os.path.lexists(self.out) and not os.path.isdir(self.out):
            raise BadInput(f"--out {self.args.out}: a file, not a folder")
        if os.path.isdir(self.out) and os.listdir(self.out) and \
                not os.path.isfile(os.path.join(self.out, "sweep.json")):
            what = run_directories.what_it_holds(self.out)
            raise BadInput(f"--out {self.args.out}: holds {what}, not a sweep; "
                           "a sweep never writes over it: give another --out")
        os.makedirs(self.out, exist_ok=True)

    def run(self):
        self.claim_out()
        # sweep.json first: a sweep stopped at once still leaves a folder
        # that the same command takes up again.
        self.write_definition()
        os.makedirs(self.runs, exist_ok=True)
        os.makedirs(self.logs, exist_ok=True)
        pending = [p for p in self.points if not self.done(p)]
        skipped = len(self.points) - len(pending)
        total = len(self.points)
        say(f"sweep: {total} runs of {self.args.scenario} on {self.args.backend}"
            + (f", {skipped} already done" if skipped else "")
            + (f", {self.jobs()} at a time" if self.jobs() > 1 and pending else ""))
        for point in pending:
            for what, path in self.set_aside_earlier(point):
                say(f"sweep: {point['name']}: an earlier attempt's {what} kept as "
                    f"{readable_path(path)}")
        if self.args.backend == "simulate" and self.args.repeat > 1 and \
                "seed" not in [k for k, _ in self.varies]:
            say("sweep: note: simulations are deterministic; repeats differ only if the seed does")
        failures = {}
        finished = skipped
        started = time.monotonic()
        durations = []
        with ThreadPoolExecutor(max_workers=self.jobs()) as pool:
            futures = [pool.submit(self.run_point, p) for p in pending]
            try:
                for future in as_completed(futures):
                    point, ok, seconds, error = future.result()
                    finished += 1
                    durations.append(seconds)
                    left = total - finished
                    eta = ""
                    if left and durations and time.monotonic() - started > 5:
                        elapsed = time.monotonic() - started
                        eta = f", about {format_seconds(elapsed / len(durations) * left)} left"
                    if ok:
                        run = run_directories.load_run(os.path.join(self.runs, point["name"]))
                        say(f"[{finished}/{total}] {point['name']}: done in {seconds:.1f} s "
                            f"({run.describe_figures()}){eta}")
                    else:
                        failures[point["name"]] = error
                        log = os.path.join(self.logs, point["name"] + ".log")
                        say(f"[{finished}/{total}] {point['name']}: FAILED after {seconds:.1f} s: "
                            f"{error} (log: {readable_path(log)}){eta}")
            except KeyboardInterrupt:
                for future in futures:
                    future.cancel()
                self.stop_all()
                say("sweep: interrupted; the points done are kept, run the same command to go on")
                self.write_csv(failures)
                raise
        failures.update(self.write_csv(failures))
        say(f"wrote {os.path.join(self.args.out, 'sweep.csv')} and "
            f"{os.path.join(self.args.out, 'runs')}/ ({total - len(failures)} of {total} runs done)")
        if failures:
            done = total - len(failures)
            say(f"sweep: {len(failures)} of {total} runs failed: " + ", ".join(sorted(failures))
                + (f"; the other {done} are complete" if done else ""))
            return EXIT_FAILED
        return EXIT_OK


def last_error(log_path, status):
    """The line of a failed run's log that says why: its error line, or its last."""
    try:
        with open(log_path) as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        lines = []
    errors = [line for line in lines if line.startswith("error:")]
    why = errors[-1] if errors else (lines[-1] if len(lines) > 1 else "")
    ended = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
    return ended + (f": {why}" if why else "")


def readable_path(path):
    """Relative to here when it is below here, else as it is."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def fix_recorded_out(partial, final):
    """The run's summary.json names the hidden folder it was written to; the
    command it records should name the folder it ends in."""
    path = os.path.join(partial, "summary.json")
    with open(path) as f:
        summary = json.load(f)
    def fixed(command):
        return command.replace(run_directories.shell_quote(partial),
                               run_directories.shell_quote(final))
    if isinstance(summary.get("command"), str):
        summary["command"] = fixed(summary["command"])
    # The run's segments (one, for a run of a sweep) record it too.
    for segment in summary.get("segments") or []:
        if isinstance(segment, dict) and isinstance(segment.get("command"), str):
            segment["command"] = fixed(segment["command"])
    run_directories.write_atomically(path, json.dumps(summary, indent=2) + "\n")


def format_cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        if value != value:
            return ""  # NaN
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


def format_seconds(seconds):
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def say(line):
    print(line, flush=True)


def interrupt(signum, frame):
    """SIGTERM and SIGHUP (a closed terminal) stop the sweep as Ctrl-C does."""
    raise KeyboardInterrupt


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="./sweep",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Runs a scenario for every combination of the values of some of its keys,\n"
                    "each into its own run directory, and tabulates them in sweep.csv.",
        epilog="Examples:\n"
               "  ./sweep scenarios/ps_4workers.yaml --vary strategy.name=allreduce,parameter_server \\\n"
               "      --vary cluster.workers=2,4 --out runs/sweep-strategies\n"
               "  ./sweep scenarios/mnist_cnn_sync.yaml --vary cluster.machine=n1-standard-4,"
               "n1-standard-16 \\\n"
               "      --set training.steps=50 --unset training.epochs --out runs/machines\n"
               "  ./sweep scenarios/ps_4workers.yaml --vary cluster.workers=1,2 --backend realnet \\\n"
               "      --repeat 3 --out runs/real\n"
               "then: ./report DIR\n"
               "Keys are the scenario's dotted keys, as --set takes them; commas inside a YAML\n"
               "list or mapping ([...] or {...}) do not split values. Varying strategy.name fits\n"
               "each point to its strategy: keys it does not take are dropped and cluster counts\n"
               "brought within its rule, with a note in the point's log.\n"
               "Run again with the same arguments, a sweep skips the points already done;\n"
               "a point run again keeps its earlier log as logs/POINT.log.1 (.2, ...).\n"
               "Exit status: 0 every run done, 1 a run failed (the others are kept), 2 bad input,\n"
               "130 interrupted (Ctrl-C, SIGTERM or SIGHUP: the runs in flight are stopped).")
    parser.add_argument("scenario", help="scenario file (YAML)")
    parser.add_argument("--vary", action="append", default=[], metavar="KEY=V1,V2,...",
                        help="a key and its values (repeatable; the sweep is their cross product)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a value every run has (repeatable)")
    parser.add_argument("--unset", action="append", default=[], metavar="KEY",
                        help="a key removed in every run (repeatable)")
    parser.add_argument("--backend", choices=["simulate", "realnet"], default="simulate",
                        help="./simulate (default) or ./realnet --launch on this machine")
    parser.add_argument("--fidelity", choices=["full", "timing"],
                        help="simulations' fidelity (default: the scenario's; not for realnet)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run every point N times (real runs: to see their spread)")
    parser.add_argument("--jobs", type=int, default=0, metavar="J",
                        help="simulations at once (default: one per CPU); real runs: always 1")
    parser.add_argument("--threads", type=int, default=0, metavar="T",
                        help="compute threads per run (default: CPUs / jobs; real tasks: 1)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="the sweep's folder: runs/, logs/, sweep.csv, sweep.json; new, "
                             "empty, or this sweep's own (any other is refused)")
    args = parser.parse_args(argv)
    try:
        if not args.vary:
            raise BadInput("give at least one --vary KEY=V1,V2,...")
        if args.repeat < 1:
            raise BadInput("--repeat: give 1 or more")
        if args.jobs < 0 or args.threads < 0:
            raise BadInput("--jobs and --threads: give 1 or more")
        if not os.path.isfile(args.scenario):
            raise BadInput(f"{args.scenario}: no such scenario file")
        binaries = {"simulate": os.environ.get("DISTLAB_SIMULATE", ""),
                    "realnet": os.environ.get("DISTLAB_REALNET", "")}
        if not binaries[args.backend] or not os.access(binaries[args.backend], os.X_OK):
            raise BadInput(f"the {args.backend} program is not built "
                           "(run ./sweep, which builds it, or set DISTLAB_SIMULATE/DISTLAB_REALNET)")
        command = run_directories.invoked_command("./sweep", argv)
        if args.fidelity and args.backend == "realnet":
            raise BadInput("--fidelity is for simulations: real runs always compute for real")
        sweep = Sweep(args, binaries, command)
        signal.signal(signal.SIGTERM, interrupt)
        signal.signal(signal.SIGHUP, interrupt)
        return sweep.run()
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
