"""What changed between two results: the step-time change decomposed by what ran (docs/compare.md).

Read from result.json alone (`step_parts`, `top_kernels`, `devices`, `straggler`), so `mfu compare`
and `mfu history` can say where a change went without the traces. A median is not additive, so the
parts compared are those of each side's median occurrence (the middle one by step time, or the two
middle ones averaged): they add up to the median step time, and their differences to its change.
"""

from __future__ import annotations

import re
from typing import Any

from pipeline import gate

# Table order; also the order among equal contributions (communication first: what an overlap moves).
PARTS = ("comm", "comm_overlap", "gemm", "attention", "other_compute", "mixed_compute", "memory", "idle")
LABELS = {"comm": "communication, exposed", "comm_overlap": "communication under compute", "gemm": "GEMM / convolution only",
          "attention": "attention only", "other_compute": "other compute only", "mixed_compute": "several compute groups at once",
          "memory": "memory copies only", "idle": "idle (no kernel)"}
TOP = 10


def seconds(ns: float) -> float:
    """A figure in ns as the pages print it, in seconds: computed here so templates only format (issue #35)."""
    return ns / 1e9


def what_ran(r: dict[str, Any]) -> dict[str, Any]:
    """The part of a result that `decompose` reads, as a history keeps it with each run (history.py what_ran)."""
    return {"step_parts": r.get("step_parts"), "top_kernels": r.get("top_kernels"),
            "unclassified_kernels": r.get("unclassified_kernels"), "devices": r.get("devices"),
            "straggler": {"slowest_rank": (r.get("straggler") or {}).get("slowest_rank")},
            "totals": {"occurrences": r["totals"].get("occurrences")}}


def median_parts(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Step and parts (ns) of the median occurrence: sorted by step (ties by occurrence), the middle one, or
    the mean of the two middle ones; its step is the median step time and its parts add up to it exactly
    (integers or halves, exact in floating point)."""
    ordered = sorted(rows, key=lambda r: (r["step_ns"], r["occurrence"]))
    mid = [ordered[(len(ordered) - 1) // 2], ordered[len(ordered) // 2]]
    return {k: (mid[0][f"{k}_ns"] + mid[1][f"{k}_ns"]) / 2 for k in ("step", *PARTS)}


def _noise(part: str, base: list[dict[str, Any]], cand: list[dict[str, Any]], value: float) -> dict[str, Any]:
    """Whether a part's change is beyond noise: outside the baseline's per-occurrence range AND, with at least
    gate.MIN_SAMPLES occurrences a side, clear by the gate's one-sided Mann-Whitney U test at gate.ALPHA."""
    b = [r[f"{part}_ns"] for r in base]
    c = [r[f"{part}_ns"] for r in cand]
    spread = {"baseline_range_ns": [min(b), max(b)], "candidate_range_ns": [min(c), max(c)],
              "baseline_range_s": [seconds(min(b)), seconds(max(b))],
              "candidate_range_s": [seconds(min(c)), seconds(max(c))]}
    if min(b) <= value <= max(b):
        return {**spread, "noise": "within", "p_value": None}
    if min(len(b), len(c)) < gate.MIN_SAMPLES:
        return {**spread, "noise": "undecided", "p_value": None}
    x, y = (c, b) if value > max(b) else ([-v for v in c], [-v for v in b])
    p = gate.mann_whitney_greater(x, y)["p_value"]
    return {**spread, "noise": "beyond" if p < gate.ALPHA else "within", "p_value": p}


def decompose(base: dict[str, Any], cand: dict[str, Any], reasons: list[str]) -> dict[str, Any]:
    """The "what changed" section for one candidate against the baseline: parts, kernels, devices; or why not."""
    if reasons:
        return {"available": False, "reason": "step time not comparable: " + "; ".join(reasons)}
    missing = [side for side, r in (("baseline", base), ("this input", cand)) if not r.get("step_parts")]
    if missing:
        return {"available": False, "reason": f"no step_parts in {' and '.join(missing)} (a result written before "
                                              "the decomposition existed): run the job again"}
    b, c = median_parts(base["step_parts"]), median_parts(cand["step_parts"])
    rows = []
    for part in PARTS:
        change = c[part] - b[part]
        rows.append({"part": part, "label": LABELS[part], "baseline_ns": b[part], "value_ns": c[part],
                     "change_ns": change, "baseline_s": seconds(b[part]), "value_s": seconds(c[part]),
                     "change_s": seconds(change), "change_ms": change / 1e6, **_noise(part, base["step_parts"], cand["step_parts"], c[part])})
    rows.sort(key=lambda r: (-abs(r["change_ns"]), PARTS.index(r["part"])))
    cause = next((r["part"] for r in rows if r["noise"] == "beyond" and r["change_ns"] != 0), None)
    return {"available": True, "baseline_step_ns": b["step"], "value_step_ns": c["step"],
            "change_ns": c["step"] - b["step"], "sum_of_rows_ns": sum(r["change_ns"] for r in rows),
            "baseline_step_s": seconds(b["step"]), "value_step_s": seconds(c["step"]),
            "change_s": seconds(c["step"] - b["step"]), "change_ms": (c["step"] - b["step"]) / 1e6, "sum_of_rows_s": seconds(sum(r["change_ns"] for r in rows)),
            "rows": rows, "cause": cause, "kernels": kernels(base, cand), "devices": devices(base, cand)}


def normalized(name: str) -> str:
    """A kernel name as the same kernel is called across builds: template arguments and parameter lists
    folded, a leading return type dropped, trailing launch-specific numbers (_37, _v2_12) cut."""
    out, depth = [], 0
    for ch in name:
        depth += ch in "<("
        if not depth:
            out.append(ch)
        depth -= ch in ">)" and depth > 0
    text = re.sub(r"^void\s+", "", "".join(out).strip())
    return re.sub(r"(_\d+)+$", "", text)


def _per_step(r: dict[str, Any]) -> dict[str, dict[str, Any]]:
    occ = r["totals"].get("occurrences") or 1
    out: dict[str, dict[str, Any]] = {}
    for k in (r.get("top_kernels") or []) + (r.get("unclassified_kernels") or []):
        row = out.setdefault(normalized(k["name"]), {"class": k["class"], "count": 0.0, "time_s": 0.0, "names": set()})
        if k["name"] not in row["names"]:
            row["names"].add(k["name"])
            row["count"] += k["count"] / occ
            row["time_s"] += k["sum_s"] / occ
    return out


def kernels(base: dict[str, Any], cand: dict[str, Any]) -> dict[str, Any]:
    """Top kernels by normalized name, count and time per step on each side, largest change first; names in
    one side's top kernels only are new or vanished (a kernel below both tops is not seen)."""
    b, c = _per_step(base), _per_step(cand)
    rows = [{"name": n, "class": (c.get(n) or b[n])["class"],
             "baseline_count": b[n]["count"] if n in b else None, "count": c[n]["count"] if n in c else None,
             "baseline_s": b[n]["time_s"] if n in b else None, "value_s": c[n]["time_s"] if n in c else None,
             "change_s": (c[n]["time_s"] if n in c else 0.0) - (b[n]["time_s"] if n in b else 0.0),
             "status": "new" if n not in b else "vanished" if n not in c else "both"}
            for n in sorted(set(b) | set(c))]
    rows.sort(key=lambda r: (-abs(r["change_s"]), r["name"]))
    return {"rows": rows[:TOP], "new": [r["name"] for r in rows if r["status"] == "new"],
            "vanished": [r["name"] for r in rows if r["status"] == "vanished"]}


def devices(base: dict[str, Any], cand: dict[str, Any]) -> dict[str, Any]:
    """Per device: busy time (kernel union) per step on each side; and the straggler of each side."""
    def busy(r: dict[str, Any]) -> dict[str, float]:
        occ = r["totals"].get("occurrences") or 1
        return {d["label"]: d["union_s"] / occ for d in r.get("devices") or []}
    b, c = busy(base), busy(cand)
    rows: list[dict[str, Any]] = [{"device": d, "baseline_s": b.get(d), "value_s": c.get(d),
                                   "change_s": None if d not in b or d not in c else c[d] - b[d]}
                                  for d in sorted(set(b) | set(c))]
    rows.sort(key=lambda r: (-abs(r["change_s"] or 0.0), r["device"]))
    slow = [(r.get("straggler") or {}).get("slowest_rank") for r in (base, cand)]
    return {"rows": rows, "baseline_straggler": slow[0], "straggler": slow[1],
            "straggler_changed": None if None in slow else slow[0] != slow[1]}
