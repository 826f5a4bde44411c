"""result.json, assembled once from the stages' outputs; nothing here computes a figure.

The document is the contract (schemas/result.schema.json); templates only format
what is here. run.run_job fills `Outputs` stage by stage and calls `build` once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline import __version__
from pipeline.analysis.figures import Figures, RankFigures, Work
from pipeline.analysis.measure import Measurement
from pipeline.checks.plausibility import ThresholdResult
from pipeline.errors import ResultWarning
from pipeline.hardware.detect import Peak
from pipeline.job.config import Job
from pipeline.model.flops import FlopsResult

SCHEMA_VERSION = "1.0"


@dataclass(frozen=True)
class Outputs:
    """Everything result.json says, as the stages produced it."""

    job: Job
    measurement: Measurement
    files: list[dict[str, Any]]          # per trace file: label, sha256, nsys_version, export_schema_version
    trace_sha256: str                    # one file: its hash; several: the hash of their hashes
    time_sections: dict[str, Any]        # every analysis of analysis/registry.py, by its key, written as it came
    flops: FlopsResult
    work: Work                           # per-occurrence FLOPs and tokens, GPUs, peak
    peak: Peak
    ridge_flop_per_byte: float | None
    figures: Figures
    ranks: RankFigures
    roofline: list[dict[str, Any]]
    warnings: list[ResultWarning]
    status: str
    status_reason: str | None
    thresholds: list[ThresholdResult]


def build(out: Outputs) -> dict[str, Any]:
    """The result document (JSON-ready: plain dicts, lists, numbers and strings)."""
    job, m, fig, steps = out.job, out.measurement, out.figures, out.job.steps_per_occurrence
    first = out.files[0]
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "mfu-pipeline", "version": __version__},
        "status": out.status,
        "status_reason": out.status_reason,
        "job": {"name": job.name, "description": job.description, "file": job.path.name,
                "config_sha256": job.sha256, "model": _model_label(job.model)},
        "trace": {"path": job.trace_text, "sha256": out.trace_sha256, "nsys_version": first["nsys_version"],
                  "export_schema_version": first["export_schema_version"],
                  "files": [{k: f[k] for k in ("label", "sha256", "nsys_version", "export_schema_version")}
                            for f in out.files]},
        "region": {"kind": job.region.kind, "start_s": job.region.start_s, "end_s": job.region.end_s,
                   "name": job.region.name, "match": job.region.match, "domain": job.region.domain,
                   "attribution": m.attribution, "attribution_requested": job.region.attribution,
                   "covers": job.region.covers, "steps_per_occurrence": str(steps),
                   "first": m.first, "last": m.last,
                   "occurrences_per_process": {str(p): c for p, c in sorted(m.counts_per_process.items())}},
        "occurrences": fig.occurrences,
        "devices": fig.devices,
        "totals": fig.totals,
        "step_time": fig.step_time,
        "hardware": {**out.peak.to_dict(), "num_gpus": out.work.num_gpus, "devices_in_trace": m.devices_used,
                     "ridge_flop_per_byte": out.ridge_flop_per_byte},
        "flops": {**out.flops.to_dict(), "steps_per_occurrence": str(steps),
                  "model_flops_per_occurrence": out.work.model_flops,
                  "hardware_flops_per_occurrence": out.work.hardware_flops},
        "metrics": fig.metrics,
        "thresholds": out.thresholds,
        "warnings": out.warnings,
        "ranks": out.ranks.ranks,
        "rank_summary": out.ranks.summary,
        "rank_spread": out.ranks.spread,
        "straggler": out.ranks.straggler,
        **out.time_sections,
        "roofline": out.roofline,
    }


def _model_label(model: dict[str, Any]) -> str:
    """What the report's context line calls the model: the preset, else how the FLOPs were given."""
    if "preset" in model:
        return str(model["preset"])
    return "explicit FLOPs per step" if "flops_per_step" in model else "custom architecture"
