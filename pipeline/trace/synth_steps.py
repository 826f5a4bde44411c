"""Synthetic exports whose steps are written out kernel by kernel, with each step's parts as ground truth.

synth.py plants a realistic random step; the "what changed" tests (docs/compare.md) need two traces that
differ by one known thing (a longer collective, slower GEMMs, a launch gap, a collective moved under
compute, a new kernel), so here a step is a plan: each kernel's name, its part group, stream and place.
The truth (how long each part of docs/compare.md lasts in each step) is computed here by a plain sweep
over the planted intervals, sharing no code with step_parts.sql.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pipeline.trace.synth import HOST, LAUNCH_LATENCY_NS, LAUNCH_NS, SynthSpec, Tables, write_export

TAIL_NS = 50_000            # CPU range end after the step's last kernel end
STEP_GAP_NS = 100_000       # between one step's range end and the next one's start
FIRST_KERNEL_NS = 10_000    # offset of the earliest possible kernel start from the range start
GROUPS = {"g": "gemm", "a": "attention", "o": "other_compute", "c": "comm", "m": "memory"}


@dataclass(frozen=True)
class Planned:
    """One kernel of a step: its name, its group (g, a, o, c: GEMM, attention, other compute, communication),
    stream, start offset from the step's range start (at least FIRST_KERNEL_NS) and length, in ns."""

    name: str
    group: str
    stream: int
    start_ns: int
    dur_ns: int


def step_truth(plan: list[Planned]) -> dict[str, int]:
    """The parts of one step (docs/compare.md) by sweeping its planted kernels: the step is [0, last end + TAIL)."""
    step = max(k.start_ns + k.dur_ns for k in plan) + TAIL_NS
    cuts = sorted({0, step} | {k.start_ns for k in plan} | {k.start_ns + k.dur_ns for k in plan})
    parts = {p: 0 for p in ("gemm", "attention", "other_compute", "mixed_compute", "comm", "comm_overlap",
                            "memory", "idle")}
    for lo, hi in zip(cuts, cuts[1:]):
        running = {k.group for k in plan if k.start_ns <= lo and k.start_ns + k.dur_ns >= hi}
        compute = running & {"g", "a", "o"}
        part = ("comm_overlap" if "c" in running and compute else "comm" if "c" in running else
                "mixed_compute" if len(compute) > 1 else GROUPS[compute.pop()] if compute else
                "memory" if "m" in running else "idle")
        parts[part] += hi - lo
    return {"step_ns": step, **parts}


def generate_steps(plans: list[list[Planned]], out: Path, region: str = "train_step") -> dict:
    """Write `out` (one rank, one device; step k runs plans[k]) and `out` + '.truth.json'; return the truth."""
    spec = SynthSpec(ranks=1, steps=len(plans), region=region)
    t = Tables()
    pid = spec.first_pid
    gpid = HOST | (pid << 24)
    tid = gpid | pid
    launch_name = t.sid("cudaLaunchKernel")
    start, corr, truth = 1_000_000_000, 0, []
    for plan in plans:
        parts = step_truth(plan)
        t.nvtx.append((start, start + parts["step_ns"], 59, None, t.sid(region), tid, 0))
        for k in sorted(plan, key=lambda k: k.start_ns):
            corr += 1
            launch = start + k.start_ns - LAUNCH_LATENCY_NS
            t.runtime.append((launch, launch + LAUNCH_NS, tid, corr, launch_name))
            t.kernels.append((start + k.start_ns, start + k.start_ns + k.dur_ns, 0, k.stream, corr, gpid,
                              t.sid(k.name), None, None))
        truth.append({"start_ns": start, **parts})
        start += parts["step_ns"] + STEP_GAP_NS
    write_export(spec, t, out)
    doc = {"steps": truth}
    Path(str(out) + ".truth.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return doc
