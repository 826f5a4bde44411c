"""Where the time goes: kernel classes, communication overlap and idle time (issue #5).

The interval arithmetic lives in pipeline/trace/sql (classify, class_times, comm_overlap,
top_kernels); this module loads the class rules, feeds them to the queries and turns
integer nanoseconds into the result.json sections. Exposed communication and idle
time are their own figures: `wall - union` is neither (docs/figures.md §1).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any


from pipeline.analysis import precision, timeline
from pipeline.trace import chain, queries, re2
from pipeline.bundled import config_path
from pipeline.errors import ConfigError, Problem
from pipeline.job.config import KernelClassRule
from pipeline.job.documents import locate, read_config
from pipeline.analysis.measure import NS, Measurement
from pipeline.trace.open import Trace

CLASSES_FILE = config_path("kernel_classes.yaml")
COMM_CLASS = "communication"
GRAPH_CLASS = "cuda_graph"               # whole CUDA graph launches recorded as one row (classify.sql)
OTHER_CLASS = "other"                    # kernels no rule matched (classify.sql)
TOP_KERNELS = 10
GEMM_CLASSES = ("gemm", "convolution")    # the matrix part of a step (step_parts.sql)
ATTENTION_CLASSES = ("attention",)
STEP_PARTS = ("gemm", "attention", "other_compute", "mixed_compute", "comm", "comm_overlap", "memory", "idle")


@dataclass(frozen=True)
class Rule:
    """One pattern of one class; rules are tried in order and the first match wins."""

    kernel_class: str
    pattern: str


@lru_cache(maxsize=4)
def _document(path: Path) -> dict[str, Any]:
    """Read like the catalog and the presets (job/parsing.py: positions, duplicate keys), checked against
    schemas/kernel_classes.schema.json and every pattern by RE2: a mistake in this human-edited file is a
    located config problem (exit 3), not a failing query."""
    data, positions, label = read_config(path, "kernel_classes.schema.json", "kernel classes")
    where = [(f"/{section}/{i}/patterns/{j}", pattern) for section in ("classes", "precisions")
             for i, rule in enumerate(data[section]) for j, pattern in enumerate(rule["patterns"])]
    where += [(f"/generic_names/{i}", pattern) for i, pattern in enumerate(data["generic_names"])]
    problems = [locate(Problem(f"invalid regular expression {pattern!r} (RE2): {why}", pointer, label,
                               hint="RE2 syntax: no lookarounds or backreferences"), positions)
                for (pointer, pattern), why in zip(where, re2.problems([p for _, p in where])) if why]
    if problems:
        raise ConfigError(problems)
    return data


def _shipped(path: Path) -> list[dict[str, str]]:
    return _document(path)["classes"]


@dataclass(frozen=True)
class PrecisionRules:
    """Which classes get a precision, the ordered (precision, pattern) rules naming it (§5), and the
    patterns of fp16 kernels that accumulate in FP16 (a GeForce card's peak for them is twice its fp16)."""

    classes: tuple[str, ...]
    rules: tuple[tuple[str, str], ...]
    fp16_accumulate: tuple[str, ...] = ()


def load_precision_rules(path: Path = CLASSES_FILE) -> PrecisionRules:
    doc = _document(path)
    return PrecisionRules(tuple(doc["precision_classes"]),
                          tuple((p["precision"], pat) for p in doc["precisions"] for pat in p["patterns"]),
                          tuple(doc["fp16_accumulate"]))


def load_rules(job_rules: list[KernelClassRule] | None = None, path: Path = CLASSES_FILE) -> list[Rule]:
    """The job's own rules first (so they can override), then the shipped ones."""
    shipped = _shipped(path)
    if bad := pattern_problems(job_rules):
        raise ConfigError(bad)
    rules = [Rule(r["class"], r["pattern"]) for r in job_rules or []]
    return rules + [Rule(c["class"], p) for c in shipped for p in c["patterns"]]


def pattern_problems(job_rules: list[KernelClassRule] | None) -> list[Problem]:
    """The job's class patterns that DuckDB's RE2 would refuse (checks.job_file.regex_compiles reports them
    before any trace is opened; load_rules refuses them for any other caller)."""
    return [Problem(f"invalid regular expression {r['pattern']!r} (RE2): {why}",
                    f"/analysis/kernel_classes/{i}/pattern", hint="RE2 syntax, e.g. (?i)my_gemm")
            for i, r in enumerate(job_rules or []) if (why := re2.problem(r["pattern"]))]


def classify_params(rules: list[Rule], said: PrecisionRules | None = None,
                    path: Path = CLASSES_FILE) -> dict[str, list[str]]:
    """The parameters of classify.sql: class rules in order, the short names classed on their demangled
    name instead (`generic_names`), then the precision rules (§5)."""
    said = said or load_precision_rules()
    return {"classes": [r.kernel_class for r in rules], "patterns": [r.pattern for r in rules],
            "generic_names": list(_document(path)["generic_names"]),
            "precision_classes": list(said.classes), "precisions": [p for p, _ in said.rules],
            "precision_patterns": [pattern for _, pattern in said.rules]}


def kernel_classes(trace: Trace, wall_ns: int) -> list[dict[str, Any]]:
    """Per class: count, sum, union across devices, GPU-seconds, and union as a share of wall."""
    return [{"class": r["class"], "count": r["kernel_count"], "sum_s": r["sum_ns"] / NS,
             "union_s": r["union_ns"] / NS, "device_union_s": r["device_union_ns"] / NS,
             "share_of_wall": r["union_ns"] / wall_ns if wall_ns else None}
            for r in queries.run(trace.con, "class_times")]


def top_kernels(trace: Trace, kernel_sum_ns: int, kernel_class: str | None = None) -> list[dict[str, Any]]:
    """The kernels a user should look at first: most summed time (of one class, if given).

    Of class `other`, they are the names no rule matched: what a job names with
    `analysis.kernel_classes` (no shipped rule is written for one application's kernels).
    """
    return [{"name": r["name"], "class": r["class"], "count": r["kernel_count"], "sum_s": r["sum_ns"] / NS,
             "share_of_kernel_sum": r["sum_ns"] / kernel_sum_ns if kernel_sum_ns else None}
            for r in queries.run(trace.con, "top_kernels", limit=TOP_KERNELS, **{"class": kernel_class})]


def graph_rows_warning(kernel_classes: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Say that graph-level rows stand in for kernels nobody recorded (docs/figures.md §4).

    They count in wall, sum and union, but what ran inside them is unknown: classes,
    precision and top kernels cannot see into that time.
    """
    rows = [c for c in kernel_classes if c["class"] == GRAPH_CLASS]
    if not rows:
        return []
    g = rows[0]
    said, they = (("1 CUDA graph launch was recorded as one row", "it counts") if g["count"] == 1 else
                  (f"{g['count']} CUDA graph launches were recorded as one row each", "they count"))
    return [{"code": "cuda_graph_rows", "message":
             f"{said} (CUPTI_ACTIVITY_KIND_GRAPH_TRACE, captured with --cuda-graph-trace=graph; {g['sum_s']:.6g} s "
             f"summed): {they} in wall, kernel sum and union as class {GRAPH_CLASS}, but per-kernel detail (classes, "
             "precision, top kernels) is unavailable for that time; capture with --cuda-graph-trace=node to see the "
             "graph's kernels"}]


def communication(trace: Trace, m: Measurement) -> dict[str, Any]:
    """Exposed / hidden communication and idle time per device and in total (GPU-seconds)."""
    rows = queries.run(trace.con, "comm_overlap", comm_class=COMM_CLASS, wall_ns=m.totals["wall_ns"],
                       devices=m.devices_used)
    keys = ("wall", "busy", "compute", "comm", "exposed", "hidden", "idle")
    devices = [{"device_id": r["device_id"], **{f"{k}_s": r[f"{k}_ns"] / NS for k in keys}} for r in rows]
    totals = {f"{k}_s": sum(r[f"{k}_ns"] for r in rows) / NS for k in keys}
    comm = sum(r["comm_ns"] for r in rows)
    totals["exposed_share_of_comm"] = sum(r["exposed_ns"] for r in rows) / comm if comm else None
    return {"class": COMM_CLASS, "devices": devices, "totals": totals}


def step_parts(trace: Trace, m: Measurement) -> list[dict[str, int]]:
    """Each occurrence's step cut into what ran in it (docs/compare.md), integer ns that add up to the step
    exactly, so `mfu compare` can say where a step-time change went from the results alone.

    On a window shared by several jobs (sharing.py), the window's steps were cut once (step_share.sql):
    a job cuts only those of its steps that differ (step_redo.sql; its last one, usually) and takes the rest."""
    params = step_params()
    if "step_share" in m.made:
        chain.run(trace.con, {"step_redo", "step_unions"}, **params)   # only the steps the window cannot give
        queries.run(trace.con, "step_merge")
        rows = queries.run(trace.con, "step_parts")
    else:
        rows = chain.run(trace.con, {"step_rows", "step_unions", "step_parts"}, **params)["step_parts"]
    return [{"occurrence": r["occurrence"], "step_ns": r["step_ns"], **{f"{p}_ns": r[f"{p}_ns"] for p in STEP_PARTS}}
            for r in rows]


def step_params() -> dict[str, Any]:
    """step_unions.sql's parameters: which classes are communication, GEMM and attention."""
    return {"comm_class": COMM_CLASS, "gemm_classes": list(GEMM_CLASSES), "attention_classes": list(ATTENTION_CLASSES)}


def pattern_time(trace: Trace, pattern: str) -> dict[str, Any]:
    """Measured time of the kernels a user figure names (model/roofline.table rows from the job file)."""
    r = chain.run(trace.con, {"pattern_unions", "pattern_times"}, pattern=pattern)["pattern_times"][0]
    return {"count": r["kernel_count"], "sum_s": r["sum_ns"] / NS, "device_union_s": r["device_union_ns"] / NS}


def kernel_sum_ns(kernel_classes: list[dict[str, Any]]) -> int:
    """The summed time of every attributed kernel and memory operation, from the class rows (top kernels'
    shares are of it)."""
    return round(sum(c["sum_s"] for c in kernel_classes) * NS)


def precision_inputs() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What precision.measure reads of the shipped rules: the classes given a precision, the fp16-accumulate
    patterns."""
    said = load_precision_rules()
    return said.classes, said.fp16_accumulate
