"""Figures that cannot be measurements (docs/figures.md §1, §11), and the job's gates over the figures.

Applied by run.run_job to the computed figures: an impossible row or ceiling is a warning naming it
(occurrences, ranks, roofline rows, the achievable ceiling above 100 %); an impossible headline figure
is judged by `VERDICT_RULES`, each returning the reason it is, and the first reason makes the result
`invalid` (exit 1). `thresholds` tests the job's gates, which an invalid result neither passes nor fails.
A new rule is a function here, listed in its tuple where it judges the verdict, with its own test in
tests/test_checks_plausibility.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from pipeline.errors import ResultWarning
from pipeline.job.config import Job
from pipeline.model.roofline import ABOVE_PEAK, JOB_NOTE, REGION_ROW

Doc = Mapping[str, Any]
Warning = ResultWarning

PCT_LIMIT = 100.0      # a utilization is a share of the peak: above 100 % the inputs describe other work


# --------------------------------------------------------------------------- rows that cannot be measurements

def occurrences_above_100(occurrences: Sequence[Doc]) -> list[Warning]:
    """An occurrence's MFU or HFU above 100 % is impossible even when the total over all of them is not
    (a short occurrence, e.g. one that holds no whole step): its row is not a measurement, say which."""
    bad = [o["index"] for o in occurrences
           if (o["mfu_pct_wall"] or 0) > PCT_LIMIT or (o["hfu_pct_wall"] or 0) > PCT_LIMIT]
    if not bad:
        return []
    more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
    return [{"code": "occurrence_above_100", "message": f"occurrence(s) {', '.join(map(str, bad[:10]))}{more} have "
             "MFU or HFU above 100 %, which is physically impossible: such an occurrence does not hold the work "
             "the FLOPs describe (check the region and covers); their rows are not measurements"}]


def ranks_above_100(summary: Sequence[Doc], rows: Sequence[Doc]) -> list[Warning]:
    """A rank's MFU (the job's FLOPs over that rank's own wall) above 100 % is impossible: its range does
    not hold the work the FLOPs describe (a rank that wraps less of the step, a clock far off). Say which
    ranks, over all occurrences or in single ones, so the per-rank table is not read as a measurement."""
    whole = [r["rank"] for r in summary if (r["mfu_pct_wall"] or 0) > PCT_LIMIT]
    single = sorted({r["rank"] for r in rows if (r["mfu_pct_wall"] or 0) > PCT_LIMIT} - set(whole))
    if not whole and not single:
        return []
    parts = ([f"rank(s) {_names(whole)} over the selected occurrences"] if whole else []) + \
            ([f"rank(s) {_names(single)} in single occurrences"] if single else [])
    return [{"code": "rank_above_100", "message": f"{' and '.join(parts)} have a per-rank MFU above 100 %, which is "
             "physically impossible: such a rank's range does not hold the work the FLOPs describe (check the "
             "region on that rank, and its clock); those rows are not measurements"}]


def roofline_under_roof(rows: Sequence[Doc]) -> list[Warning]:
    """Achieved above attainable is impossible: the FLOPs or the matched time describe other work."""
    return [_above_roof(r, r["attainable_tflops"], "roof")
            for r in rows if r["pct_of_roof"] is not None and r["pct_of_roof"] > PCT_LIMIT]


def roofline_under_peak(rows: Sequence[Doc], peak_tflops: float) -> list[Warning]:
    """A row without a bytes figure has no attainable roof, but the dense peak bounds it all the same:
    achieved above the peak is impossible, not "compute-bound". The rows roofline.heuristic_bound labelled
    so: one test of "above the peak", so the warning and the row's label cannot disagree."""
    return [_above_roof(r, peak_tflops, "dense peak") for r in rows if r["bound"] == ABOVE_PEAK]


def figures_found_kernels(figures: Sequence[Doc], device_s: list[float | None]) -> list[Warning]:
    """A figure of analysis.figures whose `kernels` pattern names no kernel time has no measured row: its
    "—" read as "not measured yet" while the pattern was mistyped or the kernels are called otherwise."""
    return [{"code": "figure_no_kernels", "message": f"analysis.figures '{f['name']}': no attributed kernel of "
             f"the selected occurrences with a name matching `{f['kernels']}` (an RE2 search anywhere in the name) "
             "took any time, so its roofline row has no measured time; check the pattern against the report's "
             "top kernels"}
            for f, s in zip(figures, device_s) if "kernels" in f and not s]


def achievable_is_a_ceiling(m: Doc, achievable_tflops: float | None) -> list[Warning]:
    """MFU against hardware.achievable_tflops above 100 %: the job ran faster than its "measured ceiling",
    so that ceiling is not one (a benchmark of another precision or GPU count, or a typo)."""
    pct = m["mfu_pct_achievable"]
    if pct is None or pct <= PCT_LIMIT:
        return []
    return [{"code": "above_achievable", "message": f"MFU against the measured ceiling is {pct:.1f} %: the job achieved "
             f"{m['achieved_tflops_per_gpu']:.4g} TFLOP/s per GPU, more than hardware.achievable_tflops "
             f"({achievable_tflops:g}), so that figure is no ceiling; check how it was measured "
             "(precision, per GPU, dense)"}]


def _above_roof(r: Doc, roof: float, what: str) -> Warning:
    """Whose FLOPs are off: the job's own figure (its FLOPs or its kernel pattern), the region's (timed over the
    wall, so no kernel ran 'too briefly'), or an analytic operator's."""
    if r["operator"] == REGION_ROW:
        why = ("this row is timed over the wall, not over kernels: the model FLOPs (and the operators' minimum bytes "
               "behind its roof) describe more work than the selected occurrences hold (check covers, global_batch, "
               "seq_len, num_gpus; at the dense peak it is an MFU above 100 %)")
    elif r["note"] != JOB_NOTE:
        why = ("the kernels matched to it ran too briefly for its analytic FLOPs (a synthetic trace, kernel-class "
               "patterns that miss its kernels, or a scope error)")
    else:
        why = ("the FLOPs given for it in analysis.figures are more than the GPUs could do in its measured time "
               "(FLOPs of more than one occurrence on all GPUs, or a `kernels` pattern that misses some of its kernels)")
    achieved, limit = _apart(r["achieved_tflops"], roof)
    return {"code": "above_roof", "message": f"roofline row '{r['operator']}': {achieved} TFLOP/s "
            f"achieved exceeds the {limit} TFLOP/s {what}; {why}"}


def _apart(larger: float, smaller: float) -> tuple[str, str]:
    """Two numbers with the fewest decimals (at least one) that print them different: "2.0 TFLOP/s achieved
    exceeds the 2.0 TFLOP/s roof" was 2.046 against 1.980."""
    for decimals in range(1, 7):
        a, b = f"{larger:.{decimals}f}", f"{smaller:.{decimals}f}"
        if a != b:
            break
    return a, b


def _names(names: list[str]) -> str:
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    return ", ".join(names[:10]) + more


# --------------------------------------------------------------------------- the verdict

@dataclass(frozen=True)
class Evidence:
    """What the plausibility rules judge: the headline metrics, the step times and what was measured."""

    metrics: Doc
    step_times_s: list[float]
    processes: int                  # processes (ranks) that had the region
    warnings: list[Warning]
    faster_precisions: tuple[str, ...] = ()     # matrix kernels' precisions with a higher peak than the one used


LOST_LENGTHS = ("every attributed kernel of the selected occurrences has no length (warning kernels_without_length): "
                "the trace lost their GPU timestamps, so no kernel time is known and the wall ends at the last "
                "kernel's start, not its end (a GPU tail past the ranges is lost)")


def _lost_lengths(ev: Evidence) -> bool:
    """Kernels were attributed, but none has a length: no kernel time, which is not the same as no kernel."""
    return any(w["code"] == "kernels_without_length" for w in ev.warnings)


def _causes(job: Job, ev: Evidence) -> str:
    """The scope errors most likely behind an impossible ratio, most specific first."""
    causes = []
    if ev.faster_precisions:
        causes.append(f"the matrix kernels ran in {', '.join(ev.faster_precisions)} (warning precision_mismatch), "
                      f"whose peak is above the declared {job.hardware['precision']}'s: check hardware.precision")
    if ev.metrics["active_ratio_pct_union"] is None and (ev.metrics["mfu_pct_wall"] or 0) > 0:
        causes.append(LOST_LENGTHS if _lost_lengths(ev) else
                      "no attributed kernel ran in the selected occurrences, so the time is only the ranges' CPU "
                      "time (select occurrences that launch GPU work: 'mfu inspect' lists them)")
    if job.region.covers == "step" and job.workload.get("grad_accum", 1) > 1:
        causes.append("the region may wrap one microbatch, not a whole step (set region.covers: microbatch)")
    if ev.processes < job.hardware["num_gpus"]:
        causes.append("global FLOPs may be paired with one rank's GPU count, or num_gpus is too small")
    causes.append("the FLOPs may be for more work than one occurrence holds (check covers, global_batch, seq_len)")
    causes.append("the peak may be too low for this GPU or precision")
    return "; ".join(causes)


def mfu_or_hfu_above_100(job: Job, ev: Evidence) -> str | None:
    """MFU or HFU above 100 % is not a measurement: name the scope error most likely behind it."""
    m = ev.metrics
    if not ((m["mfu_pct_wall"] or 0) > PCT_LIMIT or (m["hfu_pct_wall"] or 0) > PCT_LIMIT):
        return None
    which = "MFU" if (m["mfu_pct_wall"] or 0) > PCT_LIMIT else "HFU"
    return f"{which} above 100 % is physically impossible; likely: " + _causes(job, ev)


def union_diagnostic_above_100(job: Job, ev: Evidence) -> str | None:
    """Model FLOPs / (kernel union x GPUs x peak) above 100 %: the GPUs would have beaten their peak
    while busy, even if MFU on the wall looks plausible (docs/figures.md §1: a diagnostic, still bounded).
    With FLOPs but no kernel at all the ratio is infinite (docs/figures.md §6), not missing."""
    ratio = ev.metrics["active_ratio_pct_union"]
    if ratio is None and (ev.metrics["mfu_pct_wall"] or 0) > 0 and _lost_lengths(ev):
        return ("the union diagnostic (model FLOPs / (kernel union x GPUs x peak)) cannot be computed: " + LOST_LENGTHS
                + "; export the report again")
    if ratio is None and (ev.metrics["mfu_pct_wall"] or 0) > 0:
        return ("no attributed kernel ran in the selected occurrences, so the union diagnostic (model FLOPs / "
                "(kernel union x GPUs x peak)) is infinite: the MFU would only measure the ranges' CPU time "
                "(and their skew across ranks); select occurrences that launch GPU work ('mfu inspect' lists "
                "them), or check region.attribution")
    if ratio is None or ratio <= PCT_LIMIT:
        return None
    return (f"the union diagnostic (model FLOPs / (kernel union x GPUs x peak)) is {ratio:.1f} %: while their "
            "kernels ran, the GPUs would have computed faster than their peak, which is physically impossible; "
            "likely: " + _causes(job, ev) + "; or kernels of the step were not attributed (check the region)")


def step_times_finite(job: Job, ev: Evidence) -> str | None:
    """A step time that is not a finite number cannot be a measurement (nor be written as JSON)."""
    bad = [t for t in ev.step_times_s if t is None or not math.isfinite(t)]
    if not bad:
        return None
    return (f"{len(bad)} step time(s) are not finite ({', '.join(map(str, bad[:3]))}): the trace's timestamps "
            "cannot be right; check the export (nsys export --type sqlite) and the selected occurrences")


def numerator_describes_the_work(job: Job, ev: Evidence) -> str | None:
    """A numerator far from the declared architecture's is not a measurement (docs/figures.md §11's 5.1 %)."""
    mismatch = [w["message"] for w in ev.warnings if w["code"] == "scope_mismatch"]
    return "the FLOPs numerator does not describe the measured work: " + mismatch[0] if mismatch else None


VERDICT_RULES: tuple[Callable[[Job, Evidence], "str | None"], ...] = (
    numerator_describes_the_work, step_times_finite, mfu_or_hfu_above_100, union_diagnostic_above_100)


def verdict(job: Job, ev: Evidence) -> tuple[str, str | None]:
    """('ok', None), or ('invalid', the first rule's reason): exit 1, the figures are not printed as results."""
    for rule in VERDICT_RULES:
        reason = rule(job, ev)
        if reason:
            return "invalid", reason
    return "ok", None


# What an invalid result's pages strike out, the one list for the report, the index and compare: the figures
# resting on the job's FLOPs or tokens, whose scope or size the verdict found impossible; the times are measured
# from the trace and stand (step time, wall, kernel union, straggler cost, union over wall).
VOIDED_BY_INVALID = frozenset({"mfu_pct_wall", "hfu_pct_wall", "active_ratio_pct_union", "mfu_pct_achievable",
                               "achieved_tflops_per_gpu", "tokens_per_s"})


def voided(status: str, figure: str) -> bool:
    """Whether `figure` (a key of result.json's metrics) of a result with `status` is no measurement: struck out."""
    return status != "ok" and figure in VOIDED_BY_INVALID


# --------------------------------------------------------------------------- thresholds

_PASSES = {"mfu_pct_wall_min": lambda v, t: v >= t, "hfu_pct_wall_min": lambda v, t: v >= t,
           "step_time_s_max": lambda v, t: v <= t}


class ThresholdResult(TypedDict):
    """One of result.json's thresholds: the job's gate, the figure it tested, and whether it passed."""

    name: str                   # the job file's key under thresholds, e.g. mfu_pct_wall_min
    limit: float
    value: float | None         # None: the figure could not be computed
    passed: bool | None         # None: not tested (an invalid result's figures are no measurement)


def thresholds(limits: Doc, metrics: Doc, step_time: Doc, status: str) -> list[ThresholdResult]:
    """The job's gates (a missed one exits 1); a figure that could not be computed never passes. An invalid
    result's figures are no measurement: they neither pass nor fail (None, not tested); the result exits 1."""
    values = {"mfu_pct_wall_min": metrics["mfu_pct_wall"], "hfu_pct_wall_min": metrics["hfu_pct_wall"],
              "step_time_s_max": step_time["median_s"]}
    return [{"name": name, "limit": limit, "value": values[name],
             "passed": None if status == "invalid" else
             values[name] is not None and bool(_PASSES[name](values[name], limit))}
            for name, limit in sorted(limits.items())]


def percent_thresholds_below_one(limits: Doc) -> list[Warning]:
    """A percentage threshold between 0 and 1 (`mfu_pct_wall_min: 0.35`) is almost surely a fraction written
    where percent is meant: every run passes a 0.35 % gate. Warned, not refused (a tiny gate may be meant)."""
    low = [(name, limit) for name, limit in sorted(limits.items()) if "_pct_" in name and 0 < limit < 1]
    return [{"code": "threshold_below_one_percent", "message":
             f"thresholds.{name} is {limit:g} %, which almost every run passes: it is in percent, so did you mean "
             f"{limit * 100:g} ({limit * 100:g} %)? Write {limit * 100:g} if so"} for name, limit in low]
