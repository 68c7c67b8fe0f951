"""Measured GPU training steps, as bench/torch_gpu_steps.py and
bench/torch_gpu_heldout.py write them: JSON lines, a header naming the GPU
and the framework, then one row per model, batch and precision. Shared by
bench/fit_gpu_model.py and bench/gpu_step_validation.py."""

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The H200's steps: the two models first fitted, then the held-out sweep.
DEFAULT_MEASURED = [os.path.join(ROOT, "bench/data/gpu_steps_h200.jsonl"),
                    os.path.join(ROOT, "bench/data/gpu_steps_h200_heldout.jsonl")]


def read_measured(paths):
    """The first file's header and every file's rows. Rows a measurement
    skipped (its time budget spent) say so and have no step: left out."""
    header, rows = None, []
    for path in paths:
        with open(path) as f:
            lines = [json.loads(line) for line in f if line.strip()]
        if header is None and lines:
            header = lines[0]
        rows += [r for r in lines[1:] if "step_s" in r]
    return header or {}, rows
