#!/usr/bin/python3
"""The order in which an asynchronous parameter server took its messages,
from run directories' timeline.json (simulated or real).

A worker sends its next pull 12-18 us after its push. Taken in arrival
order, the pull comes right after the push; taken in turn by sender (as
./realnet's I/O thread reads a crowded machine's connections, and as the
simulator takes them on a crowded one_host, docs/fidelity.md), other
workers' pushes come between. Those pushes are applied before the pull is
answered, so they lower the staleness of the worker's next update.

For each run directory and each server, prints how many of the workers'
pulls were taken right after their own push, and how many after 1, 2, 3
or more other pushes. A server's timeline tells its messages apart by
what it did next: a push is followed by its update, a pull by the answer
sent to the worker.

Usage: bench/ps_message_order.py RUN_DIR...
"""
import collections
import json
import os
import sys


def server_messages(timeline, server_tid):
    """(sender, "push" or "pull") of each message the server took, in order."""
    spans = sorted((e for e in timeline if e.get("tid") == server_tid and e.get("ph") == "X"),
                   key=lambda e: e["ts"])
    taken = []
    for i, span in enumerate(spans):
        if not span["name"].startswith("to-ps from "):
            continue
        sender = span["name"][len("to-ps from "):]
        kind = None
        for after in spans[i + 1:]:
            if after["name"].startswith("to-ps from "):
                break
            if after["name"].endswith(" update"):
                kind = "push"
                break
            if after["name"] == sender:  # the answer sent back
                kind = "pull"
                break
        if kind:
            taken.append((sender, kind))
    return taken


def pushes_between(taken):
    """For each pull after its sender's push: the other pushes taken between."""
    counts = collections.Counter()
    since_push = {}  # sender -> other pushes taken since its last push
    for sender, kind in taken:
        if kind == "push":
            for other in since_push:
                since_push[other] += 1
            since_push[sender] = 0
        elif sender in since_push:
            counts[min(since_push.pop(sender), 3)] += 1
    return counts


def main(run_dirs):
    if not run_dirs:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    rows = []
    for run_dir in run_dirs:
        path = os.path.join(run_dir, "timeline.json")
        try:
            with open(path) as f:
                events = json.load(f)["traceEvents"]
        except (OSError, ValueError, KeyError) as error:
            print(f"{path}: cannot read the timeline: {error}", file=sys.stderr)
            return 1
        names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
        servers = sorted((name.split()[0], tid) for tid, name in names.items()
                         if name.startswith("ps:"))
        if not servers:
            print(f"{run_dir}: no parameter server in its timeline", file=sys.stderr)
            return 1
        for server, tid in servers:
            counts = pushes_between(server_messages(events, tid))
            total = sum(counts.values())
            if total == 0:
                print(f"{run_dir}: {server} took no pull after a push (or its timeline has no "
                      "receive spans: messages that took no time to arrive)", file=sys.stderr)
                return 1
            cells = " | ".join(f"{100 * counts[k] / total:.0f}%" for k in range(4))
            rows.append(f"| {run_dir} | {server} | {total} | {cells} |")
    print("| run | server | pulls | right after own push | after 1 other | 2 | 3 or more |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
