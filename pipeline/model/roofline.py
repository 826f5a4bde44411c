"""The roofline table: analytic or user-given FLOPs and bytes per operator, matched to measured time.

Formulas are metrics.ridge_flop_per_byte / attainable_tflops (docs/figures.md §9); the
operators come from operators.py. A row gets measured time only when the match is
unambiguous: its kernel class holds no other operator (several GEMM operators share
the `gemm` class, so they get one combined row instead). Without a bytes figure there
is no arithmetic intensity and no roofline verdict: such a row gets a label from the
heuristic rules below, always marked "(heuristic)" (docs/figures.md §9).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from pipeline.analysis import metrics
from pipeline.job.config import Job, Workload
from pipeline.model.flops import FlopsResult
from pipeline.model.operators import BYTES_PER_ELEMENT, Operator, Work, operators
from pipeline.model.transformer import Arch

MEMORY_CLASSES = frozenset({"elementwise", "normalization", "memory"})
COMPUTE_LIKE_PCT = 50.0     # achieved >= half the dense peak: the tensor cores are busy
STARVED_PCT = 10.0          # achieved < a tenth of the peak: most time is not math
MOSTLY_IDLE = 0.5           # no kernel ran in over half of the wall: idle time, not memory, holds the row back
TRAINING_PASSES = 3         # forward, input gradient, weight gradient: kernel calls per operator (docs/figures.md §7)


@dataclass(frozen=True)
class Roofs:
    """The denominator's numbers the table needs: compute roof, memory roof, GPUs in the job and in the trace."""

    peak_tflops: float
    hbm_gbps: float | None
    precision: str
    num_gpus: int
    devices: int


JOB_NOTE = "from the job file"   # the note of a row built from the job's analysis.figures
REGION_ROW = "whole region (model FLOPs)"   # the row of the region's model FLOPs, timed over the wall
ABOVE_PEAK = "impossible: above the peak (heuristic)"


def heuristic_bound(kernel_class: str | None, pct_of_peak: float | None, busy_share: float | None = None) -> str:
    """A label from measured throughput (as a share of the dense peak, metrics.utilization_pct: work exactly at
    the peak is 100.0, not a float rounding above it) and kernel class alone; never a roofline result. Whatever
    the bytes, the peak is a roof: a row above it is impossible, never "compute-bound". busy_share: for a row
    timed over the wall, the share of it in which any kernel ran; mostly idle GPUs are slow for want of
    work, which says nothing about memory."""
    if pct_of_peak is not None and pct_of_peak > 100.0:
        return ABOVE_PEAK
    if pct_of_peak is not None and pct_of_peak >= COMPUTE_LIKE_PCT:
        return "likely compute-bound (heuristic)"
    if busy_share is not None and busy_share < MOSTLY_IDLE:
        return f"mostly idle: kernels ran in {100 * busy_share:.0f} % of the wall (heuristic)"
    if kernel_class in MEMORY_CLASSES or (pct_of_peak is not None and pct_of_peak < STARVED_PCT):
        return "likely memory-bound (heuristic)"
    return "undetermined (heuristic)"


def row(op: Operator, source: str, measured_s: float | None, peak_tflops: float, hbm_gbps: float | None,
        num_gpus: int, busy_share: float | None = None) -> dict[str, Any]:
    """One table row. measured_s is per GPU; FLOPs and bytes are totals over num_gpus GPUs; busy_share: see
    heuristic_bound (rows timed over the wall only).

    The share of the roof is achieved / min(compute roof, memory roof), i.e. the larger of the FLOPs' share of
    the peak and the bytes' share of the bandwidth, each by the metrics helper that makes a point exactly on
    its roof 100.0: dividing the derived floats put such a point a few ulp above and warned it impossible."""
    achieved = metrics.achieved_tflops_per_gpu(op.flops, measured_s, num_gpus) if measured_s else None
    of_peak = metrics.utilization_pct(op.flops, measured_s, num_gpus, peak_tflops) if measured_s else None
    ai = metrics.arithmetic_intensity(op.flops, op.bytes)
    attainable = metrics.attainable_tflops(ai, peak_tflops, hbm_gbps) if ai is not None and hbm_gbps else None
    if attainable is None:
        bound, source = heuristic_bound(op.kernel_class, of_peak, busy_share), "heuristic"
    else:
        bound = "memory" if attainable < peak_tflops else "compute"
    of_bytes = metrics.bandwidth_pct(op.bytes, measured_s, num_gpus, hbm_gbps) if measured_s and attainable \
        and hbm_gbps else None
    of_roof = max(of_peak, of_bytes) if of_peak is not None and of_bytes is not None else None
    return {"operator": op.operator, "kernel_class": op.kernel_class, "flops": op.flops,
            "bytes": op.bytes or None, "arithmetic_intensity": ai, "attainable_tflops": attainable,
            "bound": bound, "measured_s": measured_s, "achieved_tflops": achieved,
            "pct_of_roof": of_roof, "source": source, "note": op.note}


def analytic_operators(model: dict[str, Any], components: dict[str, int], work: Work) -> list[Operator]:
    """Per-operator rows plus one combined row per class that several operators share."""
    ops = operators(Arch.from_model(model), components, work)
    shared = [c for c, n in Counter(o.kernel_class for o in ops).items() if n > 1]
    for cls in shared:
        members = [o for o in ops if o.kernel_class == cls]
        ops.append(Operator(f"all {cls} operators", cls, sum(o.flops for o in members),
                            sum(o.bytes for o in members), " + ".join(o.operator for o in members), True))
    return ops


def measured_per_gpu(op: Operator, class_times: dict[str, float], ambiguous: set[str],
                     devices: int) -> float | None:
    """Mean per traced GPU of the class's per-device busy time, when only this row claims the class."""
    if (op.kernel_class in ambiguous and not op.combined) or op.kernel_class not in class_times or not devices:
        return None
    return class_times[op.kernel_class] / devices or None


def work_of(job_workload: Workload, tokens: int, precision: str, attention: str, multiplier: int) -> Work:
    """Kernel calls see one micro-batch of one rank (default: one sequence when micro_batch is absent)."""
    seq = job_workload["seq_len"]
    return Work(tokens=tokens, tokens_per_call=seq * job_workload.get("micro_batch", 1), seq_len=seq,
                multiplier=multiplier, bpe=BYTES_PER_ELEMENT[precision], attention=attention)


def ambiguous_classes(ops: list[Operator], attention: str) -> set[str]:
    """Classes claimed by several single operators; naive attention's softmax also runs as a reduction."""
    singles = [o for o in ops if not o.combined]
    out = {c for c, n in Counter(o.kernel_class for o in singles if o.kernel_class is not None).items() if n > 1}
    return out | ({"normalization"} if attention == "naive" else set())


def table(fl: FlopsResult, model: dict[str, Any], job: Job, totals: dict[str, Any], class_rows: list[dict[str, Any]],
          peak: Roofs, figure_device_s: list[float | None]) -> list[dict[str, Any]]:
    """Every roofline row of a result: analytic operators, the job's figures, the whole region.

    `model`: the resolved model; `totals`: figures.Figures.totals; `class_rows`: the kernel_classes
    section; figure_device_s: GPU-seconds of each job figure's kernels (None: the figure is the region's).
    """
    gpus, devices = peak.num_gpus, peak.devices
    attention = job.analysis["attention"]
    class_times = {c["class"]: c["device_union_s"] for c in class_rows}
    rows, region_bytes = [], 0
    if fl.convention in ("megatron", "palm") and fl.mode != "decode":
        scale = job.steps_per_occurrence * totals["occurrences"]
        components = {c.component: round(c.total * scale) for c in fl.breakdown}
        work = work_of(job.workload, totals["tokens"], peak.precision, attention,
                       TRAINING_PASSES if fl.mode == "training" else 1)
        ops = analytic_operators(model, components, work)
        ambiguous = ambiguous_classes(ops, attention)
        rows = [row(o, "analytic", measured_per_gpu(o, class_times, ambiguous, devices), peak.peak_tflops,
                    peak.hbm_gbps, gpus) for o in ops]
        region_bytes = sum(o.bytes for o in ops if not o.combined)
    figures = job.analysis.get("figures", [])
    wall = totals["wall_time_s"]
    busy = totals["gpu_kernel_union_s"] / wall if wall else None     # any kernel running: at most per GPU's
    for fig, gpu_s in zip(figures, figure_device_s):
        measured = wall if gpu_s is None else (gpu_s / devices if devices and gpu_s else None)
        op = Operator(fig["name"], None, round(fig["flops"] * totals["occurrences"]),
                      round(fig.get("bytes", 0) * totals["occurrences"]), JOB_NOTE)
        rows.append(row(op, "job", measured, peak.peak_tflops, peak.hbm_gbps, gpus, busy if gpu_s is None else None))
    if not any("kernels" not in f for f in figures):
        op = Operator(REGION_ROW, None, totals["model_flops"], region_bytes,
                      "bytes: sum of the operators' minimum traffic" if region_bytes else "no bytes figure")
        rows.append(row(op, "analytic", wall, peak.peak_tflops, peak.hbm_gbps, gpus, busy))
    return rows

