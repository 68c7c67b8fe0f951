#!/usr/bin/python3
"""What overlapping gradient communication with the backward pass
(strategy.overlap) gains, simulated and real, side by side on this machine
(issue 28, item 3).

For each shape, runs the scenario with its gradients sent after the
backward pass and beside it, REPEAT times each for real (./realnet
--launch, alternating) and once in the simulator on this machine's
calibrated `local` type (one simulated host of its cores, as
bench/fidelity.py does). Prints examples per second from the first step
and the ratio beside / after: simulated, and the median of the real runs'.

On a machine whose cores the tasks share, the backward pass that runs
beside the communication competes with it (and with the other tasks) for
the cores: part of what is measured, and the simulation charges the same.

Writes DIR/overlap.json and DIR/overlap.md.
"""

import argparse
import sys

from straggler import common_arguments, compare, log, machine_line, parse, table_row, write_results

CNN = ["--unset", "training.epochs", "--set", "training.steps=60", "--set",
       "training.eval_every=0", "--set", "cluster.workers=2"]

# (name, what it is, scenario, overrides)
SHAPES = [
    ("ring-3-cnn", "sync all-reduce, chief + 2 workers, lab CNN, buckets of 64 KiB",
     "scenarios/mnist_cnn_sync.yaml", CNN + ["--set", "strategy.bucket_bytes=65536"]),
    ("ps-sync-3-cnn", "sync parameter servers, chief + 2 workers + 2 ps, lab CNN",
     "scenarios/mnist_cnn_sync.yaml",
     CNN + ["--set", "strategy.name=parameter_server", "--set", "strategy.mode=sync", "--set",
            "cluster.ps=2", "--set", "training.batch_size=43"]),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common_arguments(parser, SHAPES)
    o = parse(parser)
    results, failed = {}, False
    for name, what, scenario, overrides in SHAPES:
        if o.only and name not in o.only:
            continue
        log(f"{name}: {what}")
        r = compare(name, scenario, overrides, ["--set", "strategy.overlap=true"], o.repeat,
                    o.threads, o.out, labels=("after", "beside"))
        if r is None:
            failed = True
            continue
        results[name] = {"what": what, **r}
    machine = machine_line(o.threads)
    lines = [f"Gradients sent after the backward pass and beside it, on {machine}, every task "
             f"on this machine; examples/s from the first step, beside / after (real: the "
             f"median of {o.repeat} pairs):", "",
             "| shape | simulated after | simulated beside | ratio | real after (median) "
             "| real beside (median) | ratio |", "|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        lines.append(table_row(name, r, "after", "beside"))
    write_results(o.out, "overlap", {"machine": machine, "results": results}, lines)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
