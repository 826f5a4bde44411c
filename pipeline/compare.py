"""`mfu compare`: N results side by side, differences against a baseline, and a regression gate for CI.

Inputs may be job files (run now), result.json files or report folders. Two
columns are only comparable when they count FLOPs the same way, ran the same
precision on the same GPU type, and measured the same region with the same
occurrence scope; otherwise the report says so in a warning row, and the gate
refuses to pass a column it cannot compare.

Gate: a column regresses when MFU (wall) falls, or the median step time rises, by
more than the allowed share *of the baseline's value* (relative, not points).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.errors import ConfigError, Problem, UsageError

# (key, label, unit, getter, which direction is better)
METRICS: list[tuple[str, str, str, Any, str]] = [
    ("mfu_pct_wall", "MFU (wall)", "%", lambda r: r["metrics"]["mfu_pct_wall"], "higher"),
    ("hfu_pct_wall", "HFU (wall)", "%", lambda r: r["metrics"]["hfu_pct_wall"], "higher"),
    ("active_ratio_pct_union", "active-time ratio (diagnostic)", "%",
     lambda r: r["metrics"]["active_ratio_pct_union"], "higher"),
    ("achieved_tflops_per_gpu", "achieved TFLOP/s per GPU", "TFLOP/s",
     lambda r: r["metrics"]["achieved_tflops_per_gpu"], "higher"),
    ("tokens_per_s", "tokens/s", "tokens/s", lambda r: r["metrics"]["tokens_per_s"], "higher"),
    ("step_time_median_s", "step time (median)", "s", lambda r: r["step_time"]["median_s"], "lower"),
    ("step_time_cv_pct", "step time CV", "%", lambda r: r["step_time"]["cv_pct"], "lower"),
    ("wall_time_s", "wall time (total)", "s", lambda r: r["totals"]["wall_time_s"], "lower"),
    ("gpu_kernel_union_s", "kernel union (total)", "s", lambda r: r["totals"]["gpu_kernel_union_s"], "lower"),
    ("straggler_s", "straggler cost", "s", lambda r: (r.get("straggler") or {}).get("total_s"), "lower"),
    ("model_flops_per_occurrence", "model FLOPs per occurrence", "FLOP",
     lambda r: r["flops"]["model_flops_per_occurrence"], "none"),
    ("num_gpus", "GPUs", "", lambda r: r["hardware"]["num_gpus"], "none"),
    ("peak_tflops", "peak TFLOP/s per GPU", "TFLOP/s", lambda r: r["hardware"]["peak_tflops"], "none"),
]
GATED = ("mfu_pct_wall", "step_time_median_s")

# What must match for two columns to be comparable: (name, getter).
SCOPE: list[tuple[str, Any]] = [
    ("FLOPs convention", lambda r: r["flops"]["convention"]),
    ("precision", lambda r: r["hardware"]["precision"]),
    ("GPU type", lambda r: r["hardware"]["key"] or r["hardware"]["gpu"]),
    ("region", lambda r: f"{r['region']['name']} ({r['region']['match']})"),
    ("occurrence scope", lambda r: f"covers {r['region']['covers']}, "
                                   f"{r['region']['steps_per_occurrence']} step(s) per occurrence"),
]


def load_input(text: str) -> tuple[str, dict[str, Any]]:
    """A result from a job file (run now), a result.json, or a report folder holding one."""
    path = Path(text)
    if path.is_dir():
        path = path / "result.json"
    if path.suffix in (".yaml", ".yml"):
        from pipeline.job.config import load_job
        from pipeline.run import run_job
        return text, run_job(load_job(path))
    if not path.is_file():
        raise UsageError(f"{text}: not a job file, result.json or report folder")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError([Problem(f"cannot read as result JSON ({exc})", "", str(path))]) from None
    if not isinstance(doc, dict) or "metrics" not in doc or "schema_version" not in doc:
        raise ConfigError([Problem("not an mfu-pipeline result.json (no schema_version/metrics)", "", str(path))])
    return text, doc


def compare(inputs: list[tuple[str, dict[str, Any]]], baseline: str | None = None,
            max_regression_pct: float | None = None) -> dict[str, Any]:
    """The comparison document (compare.json); the templates only format it."""
    labels = _labels(inputs)
    base = _baseline_index(labels, [src for src, _ in inputs], baseline)
    results = [r for _, r in inputs]
    columns = []
    for i, ((src, r), label) in enumerate(zip(inputs, labels)):
        issues = [] if i == base else _scope_issues(results[base], r)
        columns.append({"label": label, "source": Path(src).name if Path(src).is_absolute() else src,
                        "job": r["job"]["name"], "status": r["status"], "config_sha256": r["job"]["config_sha256"],
                        "trace_sha256": r["trace"]["sha256"], "baseline": i == base,
                        "comparable": not issues, "issues": issues})
    rows = [_row(key, label, unit, get, better, results, base) for key, label, unit, get, better in METRICS]
    gates = _gates(rows, columns, base, max_regression_pct) if max_regression_pct is not None else []
    return {"baseline": labels[base], "max_regression_pct": max_regression_pct, "columns": columns,
            "scope": [{"name": n, "values": [str(g(r)) for r in results]} for n, g in SCOPE],
            "rows": rows, "gates": gates, "passed": all(g["passed"] for g in gates)}


def _labels(inputs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    names = [r["job"]["name"] for _, r in inputs]
    return [n if names.count(n) == 1 else f"{n} #{i + 1}" for i, n in enumerate(names)]


def _baseline_index(labels: list[str], sources: list[str], wanted: str | None) -> int:
    if wanted is None:
        return 0
    for i, (label, src) in enumerate(zip(labels, sources)):
        if wanted in (label, src) or wanted == str(i + 1):
            return i
    raise UsageError(f"--baseline {wanted!r} is none of the inputs ({', '.join(labels)}); "
                     "give a job name, an input as written, or its 1-based position")


def _scope_issues(base: dict[str, Any], other: dict[str, Any]) -> list[str]:
    return [f"{name}: {get(other)} vs baseline {get(base)}" for name, get in SCOPE if get(other) != get(base)]


def _row(key: str, label: str, unit: str, get: Any, better: str, results: list[dict], base: int) -> dict[str, Any]:
    values = [get(r) for r in results]
    ref = values[base]
    deltas = []
    for i, v in enumerate(values):
        if i == base or v is None or ref is None:
            deltas.append(None)
            continue
        deltas.append({"abs": v - ref, "pct": 100.0 * (v - ref) / ref if ref else None})
    return {"metric": key, "label": label, "unit": unit, "better": better, "values": values, "deltas": deltas}


def _gates(rows: list[dict], columns: list[dict], base: int, limit: float) -> list[dict[str, Any]]:
    """Per non-baseline column and gated metric: regression beyond `limit` % of the baseline fails."""
    out = []
    for row in (r for r in rows if r["metric"] in GATED):
        for i, col in enumerate(columns):
            if i == base:
                continue
            d = row["deltas"][i]
            worse = None if d is None or d["pct"] is None else (-d["pct"] if row["better"] == "higher" else d["pct"])
            passed = col["comparable"] and worse is not None and worse <= limit
            why = ("not comparable: " + "; ".join(col["issues"])) if not col["comparable"] else \
                ("no value" if worse is None else f"{worse:+.2f} % worse than baseline (limit {limit:g} %)")
            out.append({"column": col["label"], "metric": row["metric"], "baseline": row["values"][base],
                        "value": row["values"][i], "change_pct": None if d is None else d["pct"],
                        "regression_pct": worse, "limit_pct": limit, "passed": passed, "detail": why})
    return out


def parse_pct(text: str) -> float:
    """'5%' or '5' -> 5.0; the CLI's --max-regression."""
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError:
        raise UsageError(f"--max-regression {text!r}: give a percentage such as 5%") from None
    if value < 0:
        raise UsageError("--max-regression must not be negative")
    return value


def gate_lines(doc: dict[str, Any]) -> list[str]:
    """The failing figures, for stderr in CI logs."""
    return [f"regression: {g['column']} {g['metric']}: {_g(g['value'])} vs baseline {_g(g['baseline'])} — {g['detail']}"
            for g in doc["gates"] if not g["passed"]]



def _g(v: float | None) -> str:
    return "—" if v is None else f"{v:.6g}"
