"""The job's figures from the measurement and three numbers: FLOPs per occurrence, GPUs, peak.

Per occurrence, per device, in total and per rank (docs/figures.md §1, §5, §6). Inputs are the
measured integer nanoseconds and plain numbers, so nothing here depends on how the FLOPs
or the peak were obtained; the formulas are metrics.py's. Times become seconds here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from pipeline.analysis import metrics, rankstats
from pipeline.analysis.measure import NS, Measurement
from pipeline.errors import ResultWarning

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Work:
    """What one occurrence holds and what it ran on: the numerator and denominator's numbers."""

    model_flops: int                 # per occurrence
    hardware_flops: int              # per occurrence
    tokens: int | None               # per occurrence; None: an explicit numerator with no seq_len/global_batch
    num_gpus: int
    peak_tflops: float
    achievable_tflops: float | None


@dataclass(frozen=True)
class Figures:
    """result.json's occurrences, devices, totals, metrics and step_time sections."""

    occurrences: Rows
    devices: Rows
    totals: dict[str, Any]
    metrics: dict[str, float | None]
    step_time: dict[str, float]


@dataclass(frozen=True)
class RankFigures:
    """Per-rank rows and what they add up to: spread across ranks, straggler cost, alignment warnings."""

    ranks: Rows
    summary: Rows
    spread: dict[str, dict[str, float | None]]
    straggler: dict[str, Any]
    warnings: list[ResultWarning]


def figures(m: Measurement, work: Work, device_labels: dict[int, str]) -> Figures:
    """Totals are unions over all selected occurrences (measure's `totals`): overlap counts once (docs/figures.md §6)."""
    spreads = rankstats.occurrence_spreads(m.ranks)
    occurrences = [_occurrence(o, work, spreads.get(o["occurrence"])) for o in m.occurrences]
    n = len(occurrences)
    t = m.totals
    wall_ns, union_ns = t["wall_ns"], t["kernel_union_ns"]
    totals = {
        "occurrences": n,
        "wall_time_s": wall_ns / NS,
        "wall_time_sum_s": t["wall_sum_ns"] / NS,
        "cpu_range_s": t["cpu_range_ns"] / NS,
        "gpu_kernel_sum_s": t["kernel_sum_ns"] / NS,
        "gpu_kernel_union_s": union_ns / NS,
        "kernel_count": t["kernel_count"],
        "unattributed_kernel_count": sum(o["unattributed_kernel_count"] for o in m.occurrences),
        "model_flops": work.model_flops * n,
        "hardware_flops": work.hardware_flops * n,
        "tokens": None if work.tokens is None else work.tokens * n,
    }
    return Figures(occurrences, _devices(m, wall_ns, device_labels), totals,
                   headline(totals, wall_ns, union_ns, work),
                   metrics.step_stats([o["step_time_s"] for o in occurrences]))


def headline(totals: dict[str, Any], wall_ns: int, union_ns: int, work: Work) -> dict[str, float | None]:
    """MFU, HFU, the union diagnostic and friends over the selected work (docs/figures.md §1)."""
    wall_s, union_s = wall_ns / NS, union_ns / NS
    gpus, peak = work.num_gpus, work.peak_tflops
    return {
        "mfu_pct_wall": metrics.utilization_pct(totals["model_flops"], wall_s, gpus, peak),
        "hfu_pct_wall": metrics.utilization_pct(totals["hardware_flops"], wall_s, gpus, peak),
        "active_ratio_pct_union": metrics.utilization_pct(totals["model_flops"], union_s, gpus, peak),
        "union_over_wall_pct": metrics.pct_of(union_ns, wall_ns),
        "achieved_tflops_per_gpu": metrics.achieved_tflops_per_gpu(totals["model_flops"], wall_s, gpus),
        "tokens_per_s": None if totals["tokens"] is None else metrics.tokens_per_s(totals["tokens"], wall_s),
        "mfu_pct_achievable": (metrics.utilization_pct(totals["model_flops"], wall_s, gpus, work.achievable_tflops)
                               if work.achievable_tflops else None),
    }


def _occurrence(o: dict[str, Any], work: Work, rank_spread_s: float | None) -> dict[str, Any]:
    wall_s = o["wall_ns"] / NS
    ran = o["kernel_count"] > 0         # no attributed kernel: nothing ran that the FLOPs could describe
    return {
        "index": o["occurrence"],
        "processes": o["pids"],
        "start_ns": o["start_ns"],
        "cpu_range_s": o["cpu_range_ns"] / NS,
        "wall_time_s": wall_s,
        "step_time_s": o["step_ns"] / NS,
        "gpu_kernel_sum_s": o["kernel_sum_ns"] / NS,
        "gpu_kernel_union_s": o["kernel_union_ns"] / NS,
        "kernel_count": o["kernel_count"],
        "unattributed_kernel_count": o["unattributed_kernel_count"],
        "device_union_s": {d: ns / NS for d, ns in o["device_union_ns"].items()},
        "mfu_pct_wall": metrics.utilization_pct(work.model_flops, wall_s, work.num_gpus, work.peak_tflops)
        if ran else None,
        "hfu_pct_wall": metrics.utilization_pct(work.hardware_flops, wall_s, work.num_gpus, work.peak_tflops)
        if ran else None,
        "rank_spread_s": rank_spread_s,
    }


def _devices(m: Measurement, wall_ns: int, labels: dict[int, str]) -> Rows:
    totals = {d["device_id"]: d for d in m.totals["devices"]}
    out = []
    for dev in m.devices_used:
        union, count = totals[dev]["union_ns"], totals[dev]["kernel_count"]
        out.append({"device_id": dev, "label": labels.get(dev, str(dev)), "union_s": union / NS,
                    "kernel_count": count, "busy_pct_of_wall": metrics.pct_of(union, wall_ns)})
    return out


def rank_figures(m: Measurement, work: Work) -> RankFigures:
    """Each rank's figures over the selected occurrences (rankstats.py states the definitions)."""
    late = rankstats.straggler(m.ranks, m.totals["wall_ns"])
    slowest = Counter(p["slowest_rank"] for p in late["occurrences"])
    summary = rankstats.summary(m.ranks, work.model_flops, work.num_gpus, work.peak_tflops, slowest)
    return RankFigures(rankstats.rank_rows(m.ranks, work.model_flops, work.num_gpus, work.peak_tflops),
                       summary, rankstats.spread(summary, m.ranks), late,
                       rankstats.alignment_warnings(m.ranks, m.first, m.last))
