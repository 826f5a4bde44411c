"""Counted FLOPs beside the declared numerator (issue #31): coverage, ratios, per-operator throughput, MFU per part.

analysis/counted.py reads what the trace's operator shapes count (operator_ranges.sql: the formulas and
their sources); this module sets it beside the job. Counted FLOPs are what the hardware ran, recomputation
included, on the GPUs the trace holds: they are compared per GPU with the declared hardware FLOPs (HFU's
numerator) and model FLOPs. Attention's causal flag is not in the shapes, so attention is counted as the
job's convention counts it (Megatron-LM with causal attention: s²/2 pairs; otherwise every pair). Each
part of the step (a named range) gets its counted FLOPs over the GPU time of the kernels launched inside
it; without shapes, `analysis.components` maps the model's FLOPs components onto named ranges instead.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from pipeline.analysis import metrics
from pipeline.analysis.figures import Work
from pipeline.analysis.measure import COVERAGE_CLASSES, NS
from pipeline.model.flops import FlopsResult
from pipeline.model.operators import BYTES_PER_ELEMENT, Operator
from pipeline.model.roofline import Roofs, row
from pipeline.model.transformer import Arch

# The model's FLOPs components (flops.forward_flops) a job's analysis.components name maps onto a range
GROUPS = {"attention": ("q_proj", "kv_proj", "attn_scores", "attn_context", "out_proj"),
          "mlp": ("mlp", "router", "experts", "shared_experts"), "lm_head": ("lm_head",)}
NO_RANGE = "(in no named range)"   # counted operators no named range holds (nor, for a backward one, its forward)
ROOFLINE_OPERATORS = 8      # counted operators the roofline table and chart show, the most FLOPs first


def causal_halved(fl: FlopsResult, model: dict[str, Any]) -> bool:
    """Whether the declared numerator counts causal attention at s²/2 pairs (flops.convention_note)."""
    return fl.convention == "megatron" and Arch.from_model(model).causal


def convention(halved: bool) -> str:
    """How the count was made, as the report states it."""
    pairs = ("causal attention at half its query-key pairs (s²/2), as the job's Megatron-LM convention counts "
             "it" if halved else "attention over every query-key pair (not halved)")
    return ("leaf operators only (a wrapper such as aten::linear → aten::matmul → aten::mm counts once): mm and "
            "addmm 2·m·k·n, bmm and baddbmm 2·b·m·k·n; " + pairs + "; the causal flag is not in the shapes; "
            "attention backward 5 products with QKᵀ recomputed (FlashAttention-2); convolution not counted "
            "(stride, padding and dilation are not in the shapes); shape-less operators not covered")


def section(raw: dict[str, list[dict[str, Any]]], fl: FlopsResult, model: dict[str, Any], work: Work,
            roofs: Roofs, components: dict[str, str], steps: Fraction) -> dict[str, Any]:
    """result.json's counted_flops section from analysis/counted.measure's rows."""
    halved = causal_halved(fl, model) if fl.convention != "explicit" else False
    key = "flops_causal_half" if halved else "flops"
    total = raw["total"][0]
    leaves = [r for r in raw["operator"] if r["status"] != "outside"]
    counted, n = total[key], total["occurrences"]
    return {"available": bool(leaves), "with_shapes": counted is not None, "causal_halved": halved,
            "convention": convention(halved), "occurrences": n, "devices": roofs.devices,
            "flops_total": counted, "flops_per_occurrence": counted / n if counted is not None else None,
            "by_kind": [{"kind": r["kind"], "calls": r["calls"], "flops": r[key],
                         "share": r[key] / counted if counted else None}
                        for r in sorted(raw["kind"], key=lambda r: (-r[key], r["kind"]))],
            "coverage": _coverage(total, raw["operator"]),
            "declared": _declared(counted, n, work, roofs) if counted is not None else None,
            "operators": [_operator(r, key, roofs) for r in sorted(leaves, key=lambda r: _most_first(r, key))],
            "components": (_counted_parts(raw["label"], key, roofs) if counted is not None else [])
            + _mapped_parts(raw["label"], fl, components, steps, n, roofs)}


def _most_first(r: dict[str, Any], key: str) -> tuple:
    """Counted operators by FLOPs as the job's convention counts them, then the not-covered ones by time."""
    return (r[key] is None, -(r[key] or 0), -r["kernel_ns"], r["op"], r["shapes"] or "")


def _coverage(total: dict[str, Any], operators: list[dict[str, Any]]) -> dict[str, Any]:
    """The GEMM and attention kernel time launched inside counted operators, of all of it."""
    covered, of = total["coverage_ns"] or 0, total["class_ns"] or 0
    return {"classes": list(COVERAGE_CLASSES), "share": covered / of if of else None, "covered_s": covered / NS,
            "class_s": of / NS,
            "not_covered": [{"operator": r["op"], "reason": r["reason"], "calls": r["calls"],
                             "class_s": r["class_ns"] / NS} for r in operators if r["status"] == "not_covered"],
            "outside_s": sum(r["class_ns"] for r in operators if r["status"] == "outside") / NS}


def _declared(counted: int, occurrences: int, work: Work, roofs: Roofs) -> dict[str, Any]:
    """Counted vs declared per GPU and occurrence: the count covers the traced GPUs, the job all of its own."""
    if not roofs.devices or not occurrences:
        return {"counted_per_gpu": None, "model_per_gpu": None, "hardware_per_gpu": None,
                "ratio_to_model": None, "ratio_to_hardware": None}
    per_gpu = counted / occurrences / roofs.devices
    model, hardware = work.model_flops / work.num_gpus, work.hardware_flops / work.num_gpus
    return {"counted_per_gpu": per_gpu, "model_per_gpu": model, "hardware_per_gpu": hardware,
            "ratio_to_model": per_gpu / model if model else None,
            "ratio_to_hardware": per_gpu / hardware if hardware else None}


def _operator(r: dict[str, Any], key: str, roofs: Roofs) -> dict[str, Any]:
    """One row of the per-operator table: FLOPs over the GPU time of the kernels the operator launched."""
    seconds, flops = r["kernel_ns"] / NS, r[key]
    nbytes = r["elements"] * BYTES_PER_ELEMENT[roofs.precision] if r["elements"] is not None else None
    return {"operator": r["op"], "shapes": r["shapes"], "kind": r["kind"], "status": r["status"],
            "reason": r["reason"], "calls": r["calls"], "flops": flops, "kernel_count": r["kernel_count"],
            "kernel_s": seconds,
            "achieved_tflops": flops / seconds / metrics.TERA if flops is not None and seconds > 0 else None,
            "pct_of_peak": metrics.utilization_pct(flops, seconds, 1, roofs.peak_tflops) if flops is not None else None,
            "bytes": nbytes, "arithmetic_intensity": flops / nbytes if flops is not None and nbytes else None}


def _counted_parts(labels: list[dict[str, Any]], key: str, roofs: Roofs) -> list[dict[str, Any]]:
    """Each named range's counted FLOPs over the GPU time of every kernel launched inside it."""
    return [_part(r["label"] or NO_RANGE, "counted", r[key], r["kernel_ns"], roofs)
            for r in sorted(labels, key=lambda r: (-(r[key] or 0), r["label"] or "")) if r[key] is not None]


def _mapped_parts(labels: list[dict[str, Any]], fl: FlopsResult, components: dict[str, str], steps: Fraction,
                  occurrences: int, roofs: Roofs) -> list[dict[str, Any]]:
    """The model's FLOPs components on the ranges the job maps them to (analysis.components).

    The ranges are taken to hold the component's forward pass; when backward nodes launched kernels there
    too (emit_nvtx), its backward as well (training: 3x the forward). The FLOPs are the declared ones' share
    of the traced GPUs, as the time is theirs.
    """
    found = {r["label"]: r for r in labels}
    out = []
    for group, name in components.items():
        forward = sum(c.forward_flops for c in fl.breakdown if c.component in GROUPS[group])
        r = found.get(name)
        passes = 3 if fl.mode == "training" and r is not None and r["backward_ns"] else 1
        flops = round(forward * passes * steps * occurrences * roofs.devices / roofs.num_gpus)
        out.append({**_part(name, f"model: {group}", flops, r["kernel_ns"] if r else None, roofs),
                    "passes": passes})
    return out


def _part(name: str, source: str, flops: int, kernel_ns: int | None, roofs: Roofs) -> dict[str, Any]:
    seconds = kernel_ns / NS if kernel_ns else None
    return {"range": name, "source": source, "flops": flops, "time_s": seconds,
            "time_per_gpu_s": seconds / roofs.devices if seconds and roofs.devices else None,
            "achieved_tflops": flops / seconds / metrics.TERA if seconds else None,
            "mfu_pct": metrics.utilization_pct(flops, seconds, 1, roofs.peak_tflops) if seconds else None}


def attention_share(sec: dict[str, Any]) -> float | None:
    """Attention's share of the counted FLOPs (forward and backward), which a causal convention halves."""
    shares = [k["share"] for k in sec["by_kind"] if k["kind"].startswith("attention") and k["share"] is not None]
    return sum(shares) if shares else None


def roofline_rows(sec: dict[str, Any], roofs: Roofs) -> list[dict[str, Any]]:
    """The counted operators with the most FLOPs as roofline rows (source 'trace'), timed by their own kernels;
    named by kind first, which the chart's legend keeps when it cuts a long name."""
    timed = [o for o in sec["operators"] if o["flops"] is not None and o["kernel_s"] > 0]
    top = sorted(timed, key=lambda o: (-o["flops"], o["operator"], o["shapes"]))[:ROOFLINE_OPERATORS]
    devices = roofs.devices or 1
    return [row(Operator(f"{o['kind']}: {o['operator']} {o['shapes']}", None, o["flops"], round(o["bytes"] or 0),
                         f"{o['calls']} calls, counted from the trace's shapes"),
                "trace", o["kernel_s"] / devices, roofs.peak_tflops, roofs.hbm_gbps, devices) for o in top]
