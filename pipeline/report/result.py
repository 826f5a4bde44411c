"""Assemble result.json: measured times + FLOPs + peak -> every figure the reports show.

The document is the contract (schemas/result.schema.json); templates only format
what is here. Times stay integer nanoseconds until this final division.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from pipeline import __version__
from pipeline.analysis import metrics
from pipeline.job.config import Job
from pipeline.analysis.measure import NS, Measurement
from pipeline.trace.open import Trace

SCHEMA_VERSION = "1.0"


def flops_scaled(per_step: int, steps: Fraction) -> int:
    """FLOPs of one occurrence: per-step FLOPs x optimizer steps in it, rounded to whole FLOPs."""
    return round(per_step * steps)


def build(job: Job, trace: Trace, m: Measurement, peak: Any, fl: Any) -> dict[str, Any]:
    """The result document; `peak` is hardware.Peak, `fl` is flops.FlopsResult.

    Per-rank figures (ranks, rank_summary, spread, straggler) are added by ranks.enrich,
    which knows the files and rank labels.
    """
    gpus = job.hardware["num_gpus"]
    steps = job.steps_per_occurrence
    occ_model = flops_scaled(fl.model_flops_per_step, steps)
    occ_hw = flops_scaled(fl.hardware_flops_per_step, steps)
    occ_tokens = None if fl.tokens_per_step is None else flops_scaled(fl.tokens_per_step, steps)
    occurrences = [_occurrence(o, occ_model, occ_hw, gpus, peak.peak_tflops) for o in m.occurrences]
    n = len(occurrences)
    t = m.totals                  # unions over all selected occurrences: overlap counts once (SEMANTICS §6)
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
        "model_flops": occ_model * n,
        "hardware_flops": occ_hw * n,
        "tokens": None if occ_tokens is None else occ_tokens * n,
    }
    wall_s, union_s = wall_ns / NS, union_ns / NS
    peak_t = peak.peak_tflops
    mets = {
        "mfu_pct_wall": metrics.utilization_pct(totals["model_flops"], wall_s, gpus, peak_t),
        "hfu_pct_wall": metrics.utilization_pct(totals["hardware_flops"], wall_s, gpus, peak_t),
        "active_ratio_pct_union": metrics.utilization_pct(totals["model_flops"], union_s, gpus, peak_t),
        "union_over_wall_pct": 100.0 * union_ns / wall_ns if wall_ns else None,
        "achieved_tflops_per_gpu": metrics.achieved_tflops_per_gpu(totals["model_flops"], wall_s, gpus),
        "tokens_per_s": None if occ_tokens is None else metrics.tokens_per_s(totals["tokens"], wall_s),
        "mfu_pct_achievable": (metrics.utilization_pct(totals["model_flops"], wall_s, gpus, peak.achievable_tflops)
                               if peak.achievable_tflops else None),
    }
    warnings = list(m.warnings) + [{"code": "flops", "message": w} for w in fl.warnings] + \
        [{"code": "hardware", "message": w} for w in peak.warnings]
    status, reason = _status(job, mets, m, warnings)
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "mfu-pipeline", "version": __version__},
        "status": status,
        "status_reason": reason,
        "job": {"name": job.name, "description": job.description, "file": job.path.name,
                "config_sha256": job.sha256, "model": _model_label(job.model)},
        "trace": {"path": job.trace_text, "sha256": trace.sha256, "nsys_version": trace.nsys_version,
                  "export_schema_version": trace.export_schema_version},
        "region": {"name": job.region.name, "match": job.region.match, "domain": job.region.domain,
                   "attribution": m.attribution, "attribution_requested": job.region.attribution,
                   "covers": job.region.covers, "steps_per_occurrence": str(steps),
                   "first": m.first, "last": m.last,
                   "occurrences_per_process": {str(p): c for p, c in sorted(m.counts_per_process.items())}},
        "occurrences": occurrences,
        "devices": _devices(m, wall_ns),
        "totals": totals,
        "step_time": metrics.step_stats([o["step_time_s"] for o in occurrences]),
        "hardware": {**peak.to_dict(), "num_gpus": gpus, "devices_in_trace": m.devices_used},
        "flops": {**fl.to_dict(), "steps_per_occurrence": str(steps),
                  "model_flops_per_occurrence": occ_model, "hardware_flops_per_occurrence": occ_hw},
        "metrics": mets,
        "thresholds": _thresholds(job, mets, metrics.step_stats([o["step_time_s"] for o in occurrences])),
        "warnings": warnings,
    }


def _model_label(model: dict[str, Any]) -> str:
    """What the report's context line calls the model: the preset, else how the FLOPs were given."""
    if "preset" in model:
        return str(model["preset"])
    return "explicit FLOPs per step" if "flops_per_step" in model else "custom architecture"


def _occurrence(o: dict, flops: int, hw_flops: int, gpus: int, peak: float) -> dict[str, Any]:
    wall_s = o["wall_ns"] / NS
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
        "mfu_pct_wall": metrics.utilization_pct(flops, wall_s, gpus, peak),
        "hfu_pct_wall": metrics.utilization_pct(hw_flops, wall_s, gpus, peak),
    }


def _devices(m: Measurement, wall_ns: int) -> list[dict[str, Any]]:
    out = []
    totals = {d["device_id"]: d for d in m.totals["devices"]}
    for dev in m.devices_used:
        union, count = totals[dev]["union_ns"], totals[dev]["kernel_count"]
        out.append({"device_id": dev, "union_s": union / NS, "kernel_count": count,
                    "busy_pct_of_wall": 100.0 * union / wall_ns if wall_ns else None})
    return out


def _status(job: Job, mets: dict, m: Measurement, warnings: list) -> tuple[str, str | None]:
    """MFU above 100 % is not a measurement: name the scope error most likely behind it.

    A numerator far from the declared architecture's is not one either (SEMANTICS §11's 5.1 %).
    """
    mismatch = [w["message"] for w in warnings if w["code"] == "scope_mismatch"]
    if mismatch:
        return "invalid", "the FLOPs numerator does not describe the measured work: " + mismatch[0]
    if not ((mets["mfu_pct_wall"] or 0) > 100.0 or (mets["hfu_pct_wall"] or 0) > 100.0):
        return "ok", None
    causes = []
    if job.region.covers == "step" and job.workload.get("grad_accum", 1) > 1:
        causes.append("the region may wrap one microbatch, not a whole step (set region.covers: microbatch)")
    if len(m.counts_per_process) < job.hardware["num_gpus"]:
        causes.append("global FLOPs may be paired with one rank's GPU count, or num_gpus is too small")
    causes.append("the FLOPs may be for more work than one occurrence holds (check covers, global_batch, seq_len)")
    causes.append("the peak may be too low for this GPU or precision")
    return "invalid", "MFU above 100 % is physically impossible; likely: " + "; ".join(causes)


def _thresholds(job: Job, mets: dict, steps: dict) -> list[dict[str, Any]]:
    checks = {"mfu_pct_wall_min": (mets["mfu_pct_wall"], lambda v, t: v >= t),
              "hfu_pct_wall_min": (mets["hfu_pct_wall"], lambda v, t: v >= t),
              "step_time_s_max": (steps["median_s"], lambda v, t: v <= t)}
    return [{"name": name, "limit": limit, "value": checks[name][0],
             "passed": checks[name][0] is not None and bool(checks[name][1](checks[name][0], limit))}
            for name, limit in sorted(job.thresholds.items())]
