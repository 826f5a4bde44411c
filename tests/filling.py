"""What a user fills into a `mfu init` skeleton: the TODOs a trace cannot answer, with small valid values.

Only these keys may be left as TODO by `mfu init` (issue 30): the model, the workload, the precision when no
GEMM name says it, and the GPU when the trace names none (or one outside the catalog). Anything else left as
TODO fails `fill`, so a test using it also checks init proposed everything the trace can tell.
"""

from __future__ import annotations

import re

# key -> the line written in its place (the indentation of the TODO line is kept)
FILLED = {
    "preset": "flops_per_step: 1.0e+9",       # a tiny model: an MFU far below any peak
    "mode": "mode: training",
    "seq_len": "seq_len: 128",
    "global_batch": "global_batch: 1",
    "precision": "precision: fp16",           # every catalog GPU has an fp16 peak
    "gpu": "gpu: h100-sxm",
}
TODO_LINE = re.compile(r"^(\s*)([A-Za-z_]+):\s+TODO\b.*$", re.M)


def todo_keys(text: str) -> list[str]:
    return [m.group(2) for m in TODO_LINE.finditer(text)]


def fill(text: str) -> str:
    """The job text with every TODO a trace cannot know filled in; any other TODO is an AssertionError."""
    unknown = [k for k in todo_keys(text) if k not in FILLED]
    assert not unknown, f"mfu init left TODOs the trace could answer: {unknown}"
    return TODO_LINE.sub(lambda m: m.group(1) + FILLED[m.group(2)], text)
