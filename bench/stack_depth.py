# The stack a simulated ring member uses per message, read with gdb: at
# every context switch of SimGrid's (RawContext::swap_into_for_real, where
# a member blocks and the next one runs), the bytes of stack between the
# ring walk's frame and the switch, split into the program's own frames
# and SimGrid's. A simulation of a thousand members finds every stack line
# it touches out of the caches when a member resumes, so these bytes are a
# floor of the cache lines each message costs.
#
# Run by bench/stack_depth.sh (which says how); inside gdb:
#   gdb -batch -ex "python walk_frame = 'walk_ring'" -x bench/stack_depth.py \
#       -ex run --args PROGRAM ARGS...
# prints one JSON object on exit: per blocking point (the outermost SimGrid
# call below the walk, e.g. simgrid::s4u::Comm::wait), the switches seen
# and the distinct (own bytes, SimGrid bytes) pairs with their counts.
import collections
import json

import gdb

# The walk's frame: the first frame, from the switch outwards, whose name
# holds one of these ('|' between them). A Release build without -g names
# no inlined frame, so the caller the walk is inlined into stands for it:
# an inlined function's locals are in its caller's frame, so the bytes are
# the same.
WALKS = globals().get("walk_frame", "walk_ring").split("|")
SWITCH = "simgrid::kernel::context::RawContext::swap_into_for_real"

# (blocking point) -> Counter of (own bytes, simgrid bytes)
seen = collections.defaultdict(collections.Counter)
# (blocking point, own bytes, simgrid bytes) -> the program's frames, from
# the walk inwards, each with the bytes it adds (as first seen)
frames_of = {}


def rsp(frame):
    return int(frame.read_register("rsp"))


def short(name):
    """The function's name without its parameters or its return type (which
    gdb puts before a template's name where it reads the ELF symbols)."""
    name = name.replace("(anonymous namespace)::", "").split("(")[0]
    depth, start = 0, 0
    for i, c in enumerate(name):
        depth += {"<": 1, ">": -1}.get(c, 0)
        if c == " " and depth == 0:
            start = i + 1
    return name[start:]


def is_simgrid(name):
    return short(name).startswith("simgrid::")


class Switch(gdb.Breakpoint):
    def stop(self):
        frame = gdb.newest_frame()
        top = rsp(frame)
        chain = []  # (name, rsp) from the switch outwards, real frames only
        while frame is not None:
            name = frame.name() or "??"
            if any(walk in name for walk in WALKS):  # inlined or not: its real frame's rsp
                self.record(chain, top, rsp(frame))
                return False
            if frame.type() != gdb.INLINE_FRAME:
                chain.append((name, rsp(frame)))
            frame = frame.older()
        return False  # a switch outside the walk (start, end of a member)

    @staticmethod
    def record(chain, top, walk_rsp):
        # The outermost SimGrid frame below the walk: its caller is the
        # program's, and everything from there to the switch is SimGrid's.
        outermost = None
        for i, (name, _) in enumerate(chain):
            if is_simgrid(name):
                outermost = i
        if outermost is None:
            return
        name, _ = chain[outermost]
        # The stack from the walk down to the outermost SimGrid call's
        # caller is the program's; its caller's rsp is where SimGrid's begins.
        caller_rsp = chain[outermost + 1][1] if outermost + 1 < len(chain) else walk_rsp
        point = short(name)
        key = (walk_rsp - caller_rsp, caller_rsp - top)
        seen[point][key] += 1
        if (point,) + key not in frames_of:
            own = []  # each frame's bytes: its caller's rsp less its own
            outer = walk_rsp
            for frame_name, frame_rsp in reversed(chain[outermost + 1 :]):
                own.append([short(frame_name), outer - frame_rsp])
                outer = frame_rsp
            frames_of[(point,) + key] = own


def report(event):
    if not seen:
        print("STACK_DEPTH_NONE no context switch below a frame named " + " or ".join(WALKS))
        return
    out = {}
    for point, pairs in sorted(seen.items()):
        out[point] = {
            "switches": sum(pairs.values()),
            "own_simgrid_bytes": [[own, sg, n] for (own, sg), n in sorted(pairs.items())],
            "own_frames": {
                f"{own}+{sg}": frames_of[(point, own, sg)] for (own, sg) in sorted(pairs)
            },
        }
    print("STACK_DEPTH " + json.dumps(out))


gdb.execute("set pagination off")
gdb.execute("set breakpoint pending on")
Switch(SWITCH, internal=True)
gdb.events.exited.connect(report)
