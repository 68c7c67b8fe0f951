"""./sweep and ./report as a user meets them: sweeps of real simulations and
launches, reports rendered and their figures checked (the PNG decodes and is
not blank, the SVG parses, the number of data series is right).

Run by ctest with DISTLAB_SIMULATE, DISTLAB_REALNET and DISTLAB_TRAIN set to
the built programs; one ctest entry per class:
    python3 reports_test.py SweepTest
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "reports"))

import matplotlib.image  # noqa: E402

import report  # noqa: E402
import run_directories  # noqa: E402
import sweep  # noqa: E402

PYTHON = sys.executable
SMALL_TAXI = ["--set", "data=synthetic-taxi:3000", "--set", "training.epochs=1",
              "--set", "training.eval_every=3"]


def run(args, expect=0, cwd=SOURCE):
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    if done.returncode != expect:
        raise AssertionError(f"{' '.join(args)}: exit {done.returncode}, expected {expect}\n"
                             f"{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


def sweep_command(*args):
    return [PYTHON, os.path.join(SOURCE, "reports", "sweep.py"), *args]


def report_command(*args):
    return [PYTHON, os.path.join(SOURCE, "reports", "report.py"), *args]


def listing(folder):
    """Every path under a folder with its bytes: what 'left as it was' compares."""
    found = {}
    for parent, _, files in os.walk(folder):
        found[os.path.relpath(parent, folder)] = None
        for name in files:
            with open(os.path.join(parent, name), "rb") as f:
                found[os.path.relpath(os.path.join(parent, name), folder)] = f.read()
    return found


def written_folder(output):
    """The folder a report says it wrote report.md to."""
    match = re.search(r"^wrote (.+)/report\.md and ", output, re.MULTILINE)
    if not match:
        raise AssertionError(f"no 'wrote .../report.md' in:\n{output}")
    return match.group(1)


def figure_names(report_md):
    with open(report_md) as f:
        return re.findall(r"!\[[^\]]*\]\(figures/([^)]+)\.png\)", f.read())


def series_count(svg_path):
    """Data series of a figure: the distinct 'series-N' groups of its SVG."""
    tree = ElementTree.parse(svg_path)  # raises if the SVG does not parse
    ids = {element.get("id") for element in tree.iter() if element.get("id")}
    return len({m.group(1) for i in ids for m in [re.match(r"series-(\d+)", i)] if m})


def panel_count(svg_path):
    tree = ElementTree.parse(svg_path)
    return sum(1 for e in tree.iter() if re.fullmatch(r"axes_\d+", e.get("id") or ""))


class Checks(unittest.TestCase):
    def check_png(self, path):
        pixels = matplotlib.image.imread(path)  # decodes, or raises
        height, width = pixels.shape[:2]
        self.assertGreaterEqual(width, 800, path)  # readable when pasted at page width
        self.assertGreaterEqual(height, 400, path)
        rgb = pixels[..., :3].reshape(-1, 3)
        self.assertGreater(float(rgb.std()), 0.05, f"{path} is blank")
        # Not blank: ink on at least 2% of the pixels, and several colours.
        ink = (rgb.min(axis=1) < 0.9).mean()
        self.assertGreater(ink, 0.02, f"{path} is nearly empty")
        colours = {tuple((p * 255).astype(int)) for p in rgb[:: max(1, len(rgb) // 20000)]}
        self.assertGreater(len(colours), 8, f"{path} has too few colours")

    def check_figures(self, out, at_least):
        names = figure_names(os.path.join(out, "report.md"))
        self.assertGreaterEqual(len(names), at_least, names)
        for name in names:
            self.check_png(os.path.join(out, "figures", name + ".png"))
            self.assertGreater(series_count(os.path.join(out, "figures", name + ".svg")), 0, name)
        return names


class FakeRun:
    """What choose_dimensions reads of a run, without a run directory."""

    def __init__(self, strategy, values, scenario_values):
        self.strategy, self.values, self._scenario = strategy, values, scenario_values
        self.kind, self.scenario, self.summary = "simulate", "lab", {}

    def scenario_values(self):
        return self._scenario

    def figure(self, name):
        return 4 if name == "replicas" else None

    def machine_types(self):
        return ["n1-standard-4"]


class DimensionsTest(unittest.TestCase):
    def test_a_key_that_follows_from_another_is_no_dimension(self):
        # Two sweeps: all-reduce at a global batch of 256, parameter servers
        # at 64 a worker, each over the same slowdowns; a backup-worker
        # option that only one strategy mapping holds.
        runs = []
        for slow in ("[]", "[{task: worker:2, factor: 1.5}]"):
            runs.append(FakeRun("allreduce", {"slowdowns": slow},
                                {"training.batch_size": 256, "slowdowns": slow}))
            for strategy, extra in (("{name: parameter_server, mode: sync}", {}),
                                    ("{name: parameter_server, mode: sync, "
                                     "replicas_to_aggregate: 3}",
                                     {"strategy.replicas_to_aggregate": 3})):
                runs.append(FakeRun("parameter_server (sync)",
                                    {"slowdowns": slow, "strategy": strategy},
                                    {"training.batch_size": 64, "slowdowns": slow, **extra}))
        keys, _ = report.choose_dimensions(runs)
        self.assertEqual(keys, ["strategy", "slowdowns"])

    def test_a_key_that_cuts_across_is_kept(self):
        runs = [FakeRun("allreduce", {"cluster.workers": w}, {"cluster.workers": w, "training.batch_size": batch})
                for w in (1, 2) for batch in (64, 256)]
        keys, _ = report.choose_dimensions(runs)
        self.assertEqual(keys, ["cluster.workers", "training.batch_size"])

    def test_determines(self):
        finer = [frozenset({0}), frozenset({1}), frozenset({2, 3})]
        self.assertTrue(report.determines(finer, [frozenset({0, 1}), frozenset({2, 3})]))
        self.assertFalse(report.determines([frozenset({0, 1}), frozenset({2, 3})], finer))


class SweepTest(Checks):
    """The issue's sweep: strategies x workers, then a report of it."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="distlab-sweep-test-")
        cls.out = os.path.join(cls.work, "sweep")
        cls.first = run(sweep_command("scenarios/ps_4workers.yaml",
                                      "--vary", "strategy.name=allreduce,parameter_server",
                                      "--vary", "cluster.workers=2,4", *SMALL_TAXI,
                                      "--out", cls.out))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def test_every_point_is_a_run_directory_and_a_row(self):
        with open(os.path.join(self.out, "sweep.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 4)
        self.assertEqual({(r["strategy.name"], r["cluster.workers"]) for r in rows},
                         {("allreduce", "2"), ("allreduce", "4"), ("parameter_server", "2"),
                          ("parameter_server", "4")})
        for row in rows:
            self.assertEqual(row["status"], "done")
            summary = run_directories.load_run(os.path.join(self.out, "runs", row["point"]))
            # The row holds the run's own figures, and the run what the point asked.
            self.assertAlmostEqual(float(row["examples_per_second"]),
                                   summary.figure("examples_per_second"))
            self.assertEqual(int(row["replicas"]), 1 + int(row["cluster.workers"]))
            self.assertTrue(summary.strategy.startswith(row["strategy.name"]))
            self.assertIn(f"--set strategy.name={row['strategy.name']}",
                          summary.summary["command"])
            self.assertIn(os.path.join("runs", row["point"]), summary.summary["command"])
            self.assertEqual([s["command"] for s in summary.summary["segments"]],
                             [summary.summary["command"]])
            # The scenario as it ran: this point's values applied.
            self.assertIn(f"workers: {row['cluster.workers']}", summary.scenario_text())
        # Switching an async-PS scenario to all-reduce dropped its PS, with a note.
        with open(os.path.join(self.out, "logs",
                               "strategy.name=allreduce,cluster.workers=2.log")) as f:
            self.assertIn("note: cluster.ps: 1 dropped for strategy allreduce", f.read())
        self.assertIn("[4/4]", self.first)

    def test_run_again_skips_what_is_done(self):
        again = run(sweep_command("scenarios/ps_4workers.yaml",
                                  "--vary", "strategy.name=allreduce,parameter_server",
                                  "--vary", "cluster.workers=2,4", *SMALL_TAXI,
                                  "--out", self.out))
        self.assertIn("4 already done", again)
        self.assertNotIn("[1/4]", again.replace("[4/4]", ""))
        # Another sweep into the same folder is refused rather than mixed in.
        other = run(sweep_command("scenarios/ps_4workers.yaml", "--vary", "cluster.workers=3",
                                  "--out", self.out), expect=2)
        self.assertIn("holds another sweep", other)
        # More values of the same keys: the points done are kept, the new one runs.
        more = run(sweep_command("scenarios/ps_4workers.yaml",
                                 "--vary", "strategy.name=allreduce,parameter_server",
                                 "--vary", "cluster.workers=2,4,1", *SMALL_TAXI,
                                 "--out", self.out))
        self.assertIn("6 runs of scenarios/ps_4workers.yaml on simulate, 4 already done", more)

    def test_report_has_the_figures_checked(self):
        out = os.path.join(self.work, "report")
        run(report_command(self.out, "--out", out))
        names = self.check_figures(out, at_least=3)
        self.assertIn("metrics-vs-cluster-workers", names)
        self.assertIn("time-per-task", names)
        self.assertIn("accuracy-vs-time", names)
        figures = os.path.join(out, "figures")
        # Against workers: one line per strategy in every panel.
        svg = os.path.join(figures, "metrics-vs-cluster-workers.svg")
        self.assertEqual(series_count(svg), 2 * panel_count(svg))
        # Accuracy against time: one curve per run.
        self.assertEqual(series_count(os.path.join(figures, "accuracy-vs-time.svg")), 4)
        # Time per task: compute, communication and waiting in each of the 4 runs.
        self.assertEqual(series_count(os.path.join(figures, "time-per-task.svg")), 12)
        with open(os.path.join(out, "report.md")) as f:
            text = f.read()
        for expected in ("## What was run", "`strategy.name` = `allreduce`, `parameter_server`",
                         "./sweep scenarios/ps_4workers.yaml", "./simulate scenarios/ps_4workers.yaml",
                         "`n1-standard-4`", "distlab `", "## Results", "(figures/time-per-task.svg)",
                         "<details><summary>Scenario ps_4workers as run by", "```yaml"):
            self.assertIn(expected, text)
        # The figures are drawn in the colour-blind-safe palette.
        with open(svg) as f:
            self.assertIn("#0072b2", f.read().lower())


    def test_report_never_writes_over_anything(self):
        point = os.path.join(self.out, "runs", "strategy.name=allreduce,cluster.workers=2")
        before = listing(point)
        text = run(report_command(self.out, "--out", point), expect=2)
        self.assertIn(f"--out {point}: holds a run directory (summary.json)", text)
        self.assertEqual(listing(point), before)  # no report.md, no figures/
        # Any folder that holds something, and a file, are refused alike.
        other = os.path.join(self.work, "notes")
        os.makedirs(other)
        with open(os.path.join(other, "notes.txt"), "w") as f:
            f.write("mine\n")
        self.assertIn(f"--out {other}: holds files (notes.txt)",
                      run(report_command(self.out, "--out", other), expect=2))
        self.assertEqual(listing(other), {".": None, "notes.txt": b"mine\n"})
        self.assertIn("a file, not a folder",
                      run(report_command(self.out, "--out", os.path.join(other, "notes.txt")),
                          expect=2))

    def test_report_default_is_a_new_folder_each_time(self):
        first = written_folder(run(report_command(self.out)))
        second = written_folder(run(report_command(self.out)))
        self.assertNotEqual(first, second)
        for folder in (first, second):
            self.assertEqual(os.path.dirname(folder), self.out)
            self.assertRegex(os.path.basename(folder), r"^report-\d{8}-\d{6}(-\d+)?$")
            self.assertTrue(os.path.isfile(os.path.join(folder, "report.md")), folder)
        self.assertFalse(os.path.exists(os.path.join(self.out, "report")))
        # Loose runs: a new runs/report-<time> where ./report is run.
        here = os.path.join(self.work, "elsewhere")
        os.makedirs(here)
        point = os.path.join(self.out, "runs", "strategy.name=allreduce,cluster.workers=2")
        loose = written_folder(run(report_command(point), cwd=here))
        self.assertRegex(loose, r"^runs/report-\d{8}-\d{6}(-\d+)?$")
        self.assertTrue(os.path.isfile(os.path.join(here, loose, "report.md")))


class RealnetSweepTest(Checks):
    def test_real_points_run_one_at_a_time_and_repeat(self):
        work = tempfile.mkdtemp(prefix="distlab-real-sweep-")
        try:
            out = os.path.join(work, "s")
            text = run(sweep_command("scenarios/ps_4workers.yaml", "--backend", "realnet",
                                     "--vary", "cluster.workers=1,2", "--repeat", "2",
                                     "--jobs", "4", *SMALL_TAXI, "--out", out))
            self.assertIn("4 runs of scenarios/ps_4workers.yaml on realnet", text)
            self.assertNotIn("at a time", text)  # --jobs does not apply to real runs
            with open(os.path.join(out, "sweep.csv")) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual([r["point"] for r in rows],
                             ["cluster.workers=1#1", "cluster.workers=1#2",
                              "cluster.workers=2#1", "cluster.workers=2#2"])
            finished = []
            for row in rows:
                self.assertEqual(row["status"], "done")
                self.assertEqual(row["backend"], "realnet")
                summary = run_directories.load_run(os.path.join(out, "runs", row["point"]))
                self.assertTrue(summary.summary["command"].startswith("./realnet --launch"))
                finished.append(os.path.getmtime(os.path.join(out, "runs", row["point"],
                                                           "summary.json")))
            # One at a time, in order: each run finished after the one before it.
            self.assertEqual(finished, sorted(finished))
            self.assertLess(text.index("[1/4] cluster.workers=1#1"),
                            text.index("[2/4] cluster.workers=1#2"))
            out_report = os.path.join(work, "r")
            run(report_command(out, "--out", out_report))
            with open(os.path.join(out_report, "report.md")) as f:
                text = f.read()
            self.assertIn("each point run 2 times (figures: medians)", text)
            self.assertIn("wall-clock seconds", text)
        finally:
            shutil.rmtree(work, ignore_errors=True)


class FailureTest(Checks):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="distlab-sweep-fail-")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def test_a_failed_point_is_reported_and_the_others_go_on(self):
        out = os.path.join(self.work, "s")
        text = run(sweep_command("scenarios/ps_4workers.yaml", "--vary", "cluster.workers=2,0x",
                                 *SMALL_TAXI, "--out", out), expect=1)
        self.assertIn("cluster.workers=0x: FAILED", text)
        self.assertIn("cluster.workers", text)  # the run's own error line
        with open(os.path.join(out, "sweep.csv")) as f:
            rows = {r["cluster.workers"]: r for r in csv.DictReader(f)}
        self.assertEqual(rows["2"]["status"], "done")
        self.assertEqual(rows["0x"]["status"], "failed")
        self.assertIn("exit status 2", rows["0x"]["error"])
        self.assertFalse(os.path.exists(os.path.join(out, "runs", "cluster.workers=0x")))
        # The report shows what there is and names what is missing.
        run(report_command(out, "--out", os.path.join(self.work, "r")))
        with open(os.path.join(self.work, "r", "report.md")) as f:
            self.assertIn("- `cluster.workers=0x`", f.read())

    def test_sweep_refuses_an_out_that_is_no_sweep(self):
        vary = ["scenarios/ps_4workers.yaml", "--vary", "cluster.workers=2", *SMALL_TAXI]
        run_directory = os.path.join(self.work, "run")
        os.makedirs(os.path.join(run_directory, "checkpoints"))
        with open(os.path.join(run_directory, "summary.json"), "w") as f:
            f.write("{}\n")
        other = os.path.join(self.work, "other")
        os.makedirs(other)
        with open(os.path.join(other, "notes.txt"), "w") as f:
            f.write("mine\n")
        for folder, holds in ((run_directory, "holds a run directory (summary.json)"),
                              (other, "holds files (notes.txt)")):
            before = listing(folder)
            text = run(sweep_command(*vary, "--out", folder), expect=2)
            self.assertIn(f"--out {folder}: {holds}, not a sweep", text)
            self.assertIn("give another --out", text)
            self.assertEqual(listing(folder), before)
        self.assertIn("a file, not a folder",
                      run(sweep_command(*vary, "--out", os.path.join(other, "notes.txt")),
                          expect=2))
        # A sweep.json that is not ./sweep's is refused with a line, not a traceback.
        with open(os.path.join(other, "sweep.json"), "w") as f:
            f.write("not JSON\n")
        text = run(sweep_command(*vary, "--out", other), expect=2)
        self.assertIn("not a sweep.json that ./sweep wrote", text)
        self.assertNotIn("Traceback", text)

    def test_a_point_run_again_keeps_what_its_earlier_attempt_left(self):
        out = os.path.join(self.work, "s")
        args = sweep_command("scenarios/ps_4workers.yaml", "--vary", "cluster.workers=0x",
                             "--out", out)
        run(args, expect=1)
        log = os.path.join(out, "logs", "cluster.workers=0x.log")
        with open(log) as f:
            first_log = f.read()
        self.assertIn("error:", first_log)
        # What a sweep killed outright leaves: the point's hidden partial run
        # directory; and a point folder without summary.json.
        for folder in (".cluster.workers=0x.partial", "cluster.workers=0x"):
            os.makedirs(os.path.join(out, "runs", folder))
            with open(os.path.join(out, "runs", folder, "marker"), "w") as f:
                f.write(folder)
        text = run(args, expect=1)
        self.assertIn("cluster.workers=0x: an earlier attempt's log kept as", text)
        self.assertIn("cluster.workers=0x: an earlier attempt's incomplete run directory kept as",
                      text)
        with open(log + ".1") as f:
            self.assertEqual(f.read(), first_log)
        self.assertTrue(os.path.isfile(log))  # this attempt's own log
        markers = set()
        for n in (1, 2):
            with open(os.path.join(out, "runs", f".cluster.workers=0x.partial.{n}",
                                   "marker")) as f:
                markers.add(f.read())
        self.assertEqual(markers, {".cluster.workers=0x.partial", "cluster.workers=0x"})
        # A third attempt: the second's log is kept too, the first's as it was.
        run(args, expect=1)
        with open(log + ".1") as f:
            self.assertEqual(f.read(), first_log)
        self.assertTrue(os.path.isfile(log + ".2"))

    def test_a_failed_run_keeps_what_it_wrote(self):
        out = os.path.join(self.work, "s")
        # Checkpoints at steps 1 and 2, then worker:0 dies at step 3 with no
        # restart left: the run fails.
        args = sweep_command("scenarios/mnist_cnn_sync.yaml", "--vary", "seed=1",
                             "--set", "training.train_examples=1280", "--set", "training.steps=6",
                             "--set", "checkpoint.every_steps=1",
                             "--set", 'faults=[{task: "worker:0", at_step: 3}]',
                             "--set", "recovery.max_restarts=0", "--out", out)
        run(args, expect=1)
        kept = os.path.join(out, "runs", ".seed=1.partial", "checkpoints")
        self.assertEqual(sorted(os.listdir(kept)),
                         ["step-000000001.safetensors", "step-000000002.safetensors"])
        text = run(args, expect=1)  # again: the first attempt's files set aside
        self.assertIn("seed=1: an earlier attempt's incomplete run directory kept as", text)
        self.assertTrue(os.path.isdir(os.path.join(out, "runs", ".seed=1.partial.1",
                                                   "checkpoints")))

    def test_a_damaged_point_is_named_not_a_traceback(self):
        out = os.path.join(self.work, "s")
        args = sweep_command("scenarios/ps_4workers.yaml", "--vary", "cluster.workers=0x",
                             "--out", out)
        run(args, expect=1)
        # A point whose run directory holds a summary.json that is not one.
        point = os.path.join(out, "runs", "cluster.workers=0x")
        os.makedirs(point)
        with open(os.path.join(point, "summary.json"), "w") as f:
            f.write("{not json")
        text = run(args, expect=1)
        self.assertNotIn("Traceback", text)
        self.assertIn("1 of 1 runs failed: cluster.workers=0x", text)
        with open(os.path.join(out, "sweep.csv")) as f:
            row = next(csv.DictReader(f))
        self.assertEqual(row["status"], "damaged")
        self.assertIn("summary.json: not JSON", row["error"])
        with open(os.path.join(point, "summary.json")) as f:
            self.assertEqual(f.read(), "{not json")  # left as it was

    def test_a_new_folder_never_an_earlier_one(self):
        base = os.path.join(self.work, "report-20261128-101500")
        self.assertEqual([report.fresh_folder(base) for _ in range(3)],
                         [base, base + "-2", base + "-3"])
        with open(base + "-4", "w"):
            pass  # a file of that name is passed over too
        self.assertEqual(report.fresh_folder(base), base + "-5")
        self.assertTrue(os.path.isdir(base + "-5"))

    def test_bad_input_exits_2_with_a_line(self):
        for args, message in (
                (["scenarios/ps_4workers.yaml", "--out", self.work], "at least one --vary"),
                (["scenarios/ps_4workers.yaml", "--vary", "cluster.workers", "--out", self.work],
                 "expected KEY=V1,V2"),
                (["scenarios/ps_4workers.yaml", "--vary", "cluster.workers=2,2", "--out",
                  self.work], "given twice"),
                (["scenarios/nothing.yaml", "--vary", "seed=1,2", "--out", self.work],
                 "no such scenario file")):
            self.assertIn(message, run(sweep_command(*args), expect=2))
        self.assertIn("neither a run directory",
                      run(report_command(self.work), expect=2))

    def test_help_explains_with_examples(self):
        sweep_help = run(sweep_command("--help"))
        for text in ("--vary KEY=V1,V2,...", "--backend", "--repeat", "--jobs", "Exit status",
                     "skips the points already done", "logs/POINT.log.1"):
            self.assertIn(text, sweep_help)
        report_help = run(report_command("--help"))
        for text in ("--out", "--target-accuracy", "Examples:", "Exit status",
                     "SWEEP/report-<time>", "new or empty"):
            self.assertIn(text, report_help)

    def test_vary_values_and_point_names(self):
        self.assertEqual(sweep.parse_vary("cluster.workers=1, 2,4"),
                         ("cluster.workers", ["1", "2", "4"]))
        self.assertEqual(sweep.parse_vary("faults=[{task: worker:1, at_step: 3}]"),
                         ("faults", ["[{task: worker:1, at_step: 3}]"]))
        self.assertEqual(sweep.point_name([("a.b", "1"), ("c", "x")], 2, 3), "a.b=1,c=x#2")
        self.assertEqual(sweep.split_values("[],[{task: chief, at_step: 3}],4"),
                         ["[]", "[{task: chief, at_step: 3}]", "4"])
        # Values that a folder name cannot hold, or too long for one, end in a
        # hash: two points never share a folder.
        slash, underscore = (sweep.point_name([("c", v)], 1, 1) for v in ("x/y", "x_y"))
        self.assertNotEqual(slash, underscore)
        self.assertNotIn("/", slash)
        long = sweep.point_name([("description", "x" * 300)], 1, 1)
        self.assertLessEqual(len(long), sweep.MAX_NAME)
        self.assertNotEqual(long, sweep.point_name([("description", "x" * 299)], 1, 1))
        # Quoted as run/provenance.cc quotes, so that commands compare equal.
        self.assertEqual(run_directories.shell_quote("x=$HOME"), "'x=$HOME'")
        self.assertEqual(run_directories.shell_quote("it's"), "'it'\\''s'")
        self.assertEqual(run_directories.shell_quote("runs/a=1,b=2"), "runs/a=1,b=2")


class SimulatedRealTest(Checks):
    """A simulated and a real run of the same scenario, side by side."""

    def test_both_are_shown_with_the_errors(self):
        work = tempfile.mkdtemp(prefix="distlab-sim-real-")
        try:
            args = ["scenarios/ps_4workers.yaml", "--set", "cluster.workers=2", *SMALL_TAXI,
                    "--quiet"]
            run([os.environ["DISTLAB_SIMULATE"], *args, "--out", os.path.join(work, "sim")])
            run([os.environ["DISTLAB_REALNET"], "--launch", *args, "--out",
                 os.path.join(work, "real")])
            out = os.path.join(work, "report")
            run(report_command(os.path.join(work, "sim"), os.path.join(work, "real"),
                               "--out", out))
            names = self.check_figures(out, at_least=3)
            self.assertIn("simulated-vs-real", names)
            # Accuracy and step times, simulated and real: two series per panel.
            self.assertEqual(series_count(os.path.join(out, "figures", "simulated-vs-real.svg")), 4)
            with open(os.path.join(out, "report.md")) as f:
                text = f.read()
            self.assertIn("## Simulated against real", text)
            table = text.split("## Simulated against real")[1].split("## Where the time goes")[0]
            self.assertIn("| figure | simulated | real | error |", table)
            rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
            self.assertEqual(len(rows), len(report.COMPARED))
            # The bytes a step sends are the same on both backends: error 0.
            bytes_row = next(r for r in rows if r.startswith("| bytes sent per step"))
            self.assertTrue(bytes_row.rstrip(" |").endswith("+0.0%"), bytes_row)
            self.assertIn("this machine: ", text)  # the real run's machine
            # Every task's step, phase by phase, on both backends.
            phases = text.split("## Where the time goes, simulated against real")[1]
            phases = phases.split("## Figures")[0]
            self.assertIn("| task | phase | simulated (ms) | real (ms) | error |"
                          " CPU simulated (ms) | CPU real (ms) |", phases)
            rows = [line.split(" | ") for line in phases.splitlines() if line.startswith("| ")]
            by_task = {}
            for row in rows[1:]:
                by_task.setdefault(row[0].lstrip("| "), {})[row[1]] = row
            self.assertEqual(set(by_task), {"chief:0", "worker:0", "worker:1", "ps:0"})
            for task in ("chief:0", "worker:0"):
                self.assertTrue({"forward", "backward", "whole step"} <= set(by_task[task]),
                                by_task[task])
            self.assertIn("optimizer", by_task["ps:0"])
            # CPU per phase on both sides: the real workers' forward passes
            # used some; nobody's CPU is negative.
            self.assertGreater(float(by_task["worker:0"]["forward"][6].rstrip(" |")), 0)
            for task in by_task.values():
                for row in task.values():
                    self.assertGreaterEqual(float(row[5]), 0, row)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def test_a_train_run_directory_plots(self):
        work = tempfile.mkdtemp(prefix="distlab-train-report-")
        try:
            run([os.environ["DISTLAB_TRAIN"], "scenarios/models/taxi_wide_deep.yaml",
                 "--data", "synthetic-taxi:3000", "--epochs", "2", "--quiet", "--out",
                 os.path.join(work, "train")])
            out = os.path.join(work, "report")
            run(report_command(os.path.join(work, "train"), "--out", out))
            names = self.check_figures(out, at_least=1)
            self.assertIn("accuracy-vs-time", names)
            self.assertEqual(series_count(os.path.join(out, "figures", "accuracy-vs-time.svg")), 1)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
