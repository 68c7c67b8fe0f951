"""The README's quick start as a newcomer meets it: its commands are the
two CI runs (.ci/run), the `./simulate` one runs, and the sample output the
README shows has the shape of what it prints: as many lines, the same keys
in the same order, the same table header, tasks and hosts. Where the
sample's kernels are of this CPU's ISA level, its values are the ones
printed too (weights, simulated time, throughput, loss, accuracy, every
figure of the task table): all but the wall-clock figures of the `time`
line and the run directory's time. tools/readme-sample rewrites the sample.

`./test`, the second command, builds and runs every test: it cannot run
inside a test, so only its place in the quick start is checked.

Usage: readme_quick_start_test.py PATH/TO/distlab-simulate SOURCE_DIR
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

simulate = Path(sys.argv[1]).resolve()
src = Path(sys.argv[2]).resolve()
readme = (src / "README.md").read_text().split("\n")
failures = 0


def check(what, ok, detail=""):
    global failures
    print(("ok: " if ok else "FAILED: ") + what)
    if not ok:
        failures += 1
        if detail:
            print("    " + detail.replace("\n", "\n    "))
    return ok


def code_block(start):
    """The lines of the first fenced code block at or after line `start`."""
    fence = next((i for i in range(start, len(readme)) if readme[i].startswith("```")), None)
    if fence is None:
        return None
    end = next((i for i in range(fence + 1, len(readme)) if readme[i].startswith("```")), None)
    return None if end is None else readme[fence + 1:end]


# --- the quick start's commands ----------------------------------------------
quick = readme.index("## Quick start") if "## Quick start" in readme else -1
check("the README has a '## Quick start' section", quick >= 0)
block = code_block(quick) if quick >= 0 else None
commands = [line.split("#", 1)[0].strip() for line in block or []]
commands = [c for c in commands if c]
check("its first code block holds two commands", len(commands) == 2, repr(commands))
check("the first is ./simulate SCENARIO", len(commands) >= 1 and
      commands[0].startswith("./simulate "), repr(commands[:1]))
check("the second is ./test (CI runs it; it cannot run inside a test)",
      len(commands) >= 2 and commands[1] == "./test", repr(commands[1:2]))

# --- the sample, between its markers -------------------------------------------
begin = [i for i, line in enumerate(readme) if re.match(r"<!-- sample: begin\b.*-->$", line)]
end = [i for i, line in enumerate(readme) if re.match(r"<!-- sample: end\b.*-->$", line)]
ok = check("the README has one sample between '<!-- sample: begin -->' and "
           "'<!-- sample: end -->'", len(begin) == 1 and len(end) == 1 and begin[0] < end[0])
sample = readme[begin[0] + 1:end[0]] if ok else []
ok = check("... as one code block",
           len(sample) >= 2 and sample[0] == "```" and sample[-1] == "```" and
           "```" not in sample[1:-1])
sample = sample[1:-1] if ok else []

if failures or not commands[0].startswith("./simulate "):
    sys.exit(1)

# --- the ./simulate command, run as shown ----------------------------------------
args = shlex.split(commands[0])[1:]
with tempfile.TemporaryDirectory() as work:
    # Its relative paths lead to the tree's scenarios; its runs/ stays here.
    os.symlink(src / "scenarios", Path(work) / "scenarios")
    env = dict(os.environ, DISTLAB_MACHINES_OVERLAY="")  # the shipped catalog
    run = subprocess.run([str(simulate)] + args, cwd=work, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
check(f"./simulate {shlex.join(args)} exits 0", run.returncode == 0, run.stderr[-2000:])
real = run.stdout.rstrip("\n").split("\n")

# --- the shape -----------------------------------------------------------------
check("the sample has as many lines as the output",
      len(sample) == len(real), f"sample {len(sample)}, output {len(real)}")


def sections(lines):
    """(the summary's lines, the table's lines, the last line), split at the
    first blank line; the summary's first line says what is simulated."""
    blank = lines.index("") if "" in lines else len(lines)
    return lines[:blank], lines[blank + 1:-1], lines[-1] if lines else ""


def key(line):
    # "{:<12}{}": the key is the first 12 characters ("comm share").
    return line[:12].rstrip()


s_summary, s_table, s_last = sections(sample)
r_summary, r_table, r_last = sections(real)
check("the first line says what is simulated, as the output's",
      s_summary[:1] == r_summary[:1], f"sample {s_summary[:1]}\noutput {r_summary[:1]}")
check("the summary has the same keys in the same order",
      [key(x) for x in s_summary[1:]] == [key(x) for x in r_summary[1:]],
      f"sample {[key(x) for x in s_summary[1:]]}\noutput {[key(x) for x in r_summary[1:]]}")
check("the task table has the same header",
      s_table[:2] == r_table[:2], "sample:\n" + "\n".join(s_table[:2]) +
      "\noutput:\n" + "\n".join(r_table[:2]))


def tasks(table):
    # "chief:0   chief-0 (n1-standard-4)   320 ...": the task and its host.
    return [re.match(r"(\S+)\s+(\S+ \([^)]*\)|\S+)", row).group(0).split(None, 1)
            for row in table[2:] if row and not row.startswith(("-", "total ")) and
            re.match(r"\S+\s+\S", row)]


check("... the same tasks on the same hosts, all of them",
      tasks(s_table) == tasks(r_table), f"sample {tasks(s_table)}\noutput {tasks(r_table)}")
check("... and no row left out", not any(row.strip() == "..." for row in s_table))

WROTE = re.compile(r"^wrote (\S+)-\d{8}-\d{6}/(\{.*\})$")
ws, wr = WROTE.match(s_last), WROTE.match(r_last)
check("the last line names the run directory and its files, as the output's",
      bool(ws and wr) and ws.groups() == wr.groups(), f"sample {s_last!r}\noutput {r_last!r}")

DURATION = r"(?:\d+ us|[\d.]+ ms|[\d.]+ s|\d+m\d\ds|\d+h\d\dm\d\ds)"
TIME = re.compile(rf"^(time\s+{DURATION} simulated) in {DURATION}(?: \([\d.]+x\))?, "
                  rf"{DURATION} wall in all$")


def time_line(lines):
    return next((x for x in lines if key(x) == "time"), "")


check("the time line has the output's form (simulated, wall, speed)",
      bool(TIME.match(time_line(s_summary))) and bool(TIME.match(time_line(r_summary))),
      f"sample {time_line(s_summary)!r}\noutput {time_line(r_summary)!r}")

# --- the values, on the sample's ISA level ---------------------------------------


def kernels(lines):
    found = re.search(r"kernels (\S+)", next((x for x in lines if key(x) == "backend"), ""))
    return found.group(1) if found else None


level, sample_level = kernels(r_summary), kernels(s_summary)
check("the output and the sample name their kernels' ISA level",
      level is not None and sample_level is not None)


def deterministic(lines):
    """The lines with what varies from run to run cut out: the wall-clock
    figures of the time line, the run directory's time."""
    out = []
    for line in lines:
        if TIME.match(line):
            line = TIME.match(line).group(1) + " in (wall clock)"
        line = re.sub(r"^(wrote \S+-)\d{8}-\d{6}/", r"\1(time)/", line)
        out.append(line)
    return out


if level is not None and level == sample_level:
    differ = [f"sample: {a}\noutput: {b}" for a, b in
              zip(deterministic(sample), deterministic(real)) if a != b]
    check(f"on {level}, the sample's values are the output's (weights, simulated time, "
          "throughput, loss, accuracy, the task table): if the change is meant, run "
          "tools/readme-sample", not differ and len(sample) == len(real), "\n".join(differ))
else:
    print(f"skipped: the sample's values, which are of kernels {sample_level}; "
          f"these ran {level}")

sys.exit(1 if failures else 0)
