"""Every scope and plausibility rule in one place, each a small function (SEMANTICS §7, §11).

Three kinds, in the order run.run_job applies them:
- job-file rules (`JOB_RULES`): what a schema cannot say — the FLOPs numerator and the
  time denominator must describe the same work. Each takes the job document as written
  and returns Problems (exit 3), located in the job file by `job_problems`.
- trace rules: the measured work must fit the job (`gpu_scope`, exit 3), the selected
  ranges must be real time intervals (`ranges_have_length`, exit 4), a file given twice is
  one rank (`repeated_files`, a warning).
- plausibility rules (`VERDICT_RULES`): a figure that is physically impossible is never a
  measurement; each returns the reason it is, and the first reason makes the result `invalid`.
A new rule is a function here, listed in its tuple, with its own test in tests/test_checks.py.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.analysis.classes import pattern_problems
from pipeline.errors import Problem
from pipeline.job.config import Job
from pipeline.model.roofline import ABOVE_PEAK, JOB_NOTE
from pipeline.trace import re2

Doc = Mapping[str, Any]
Warning = dict[str, str]

# --------------------------------------------------------------------------- job-file rules

# Names of the output folder's own entries (report/publish.py writes them): a job may not be called like one.
RESERVED = frozenset({"index.md", "index.html", "index.json", "compare", "history"})


def name_is_a_folder(doc: Doc) -> list[Problem]:
    """The job name becomes the report folder's name: plain characters, none of the output folder's own entries."""
    name = doc["name"]
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        return [Problem("a name is letters, digits, '.', '_' and '-' only (no spaces or line breaks)", "/name",
                        hint="it becomes the report folder's name")]
    if name.lower() in RESERVED:
        return [Problem(f"'{name}' is the name of one of the output folder's own files or folders", "/name",
                        hint=f"choose a name other than {', '.join(sorted(RESERVED))}")]
    return []


def regex_compiles(doc: Doc) -> list[Problem]:
    """The region's `match: regex` and the kernel-class patterns are run by DuckDB's RE2, so RE2 judges
    them (Python's re accepts lookarounds RE2 refuses), before any trace is opened."""
    region, found = doc["region"], pattern_problems(doc.get("analysis", {}).get("kernel_classes"))
    if region.get("match") == "regex" and (why := re2.problem(region["name"])):
        found.insert(0, Problem(f"not a valid regular expression (RE2): {why}", "/region/name",
                                hint="RE2 has no lookarounds or backreferences; escape special characters, "
                                     "or use match: prefix / contains for plain text"))
    return found


def occurrences_ordered(doc: Doc) -> list[Problem]:
    occ = doc["region"].get("occurrences", {})
    first = occ.get("first", 1)
    if "last" in occ and occ["last"] < first:
        return [Problem(f"last ({occ['last']}) is before first ({first})", "/region/occurrences/last",
                        hint="last must be >= first")]
    return []


def token_counts_given(doc: Doc) -> list[Problem]:
    """Counting FLOPs needs seq_len and global_batch; an explicit numerator does not (a CNN has none),
    unless seq_lens must be spread over them."""
    wl, model = doc["workload"], doc["model"]
    needed = [k for k in ("seq_len", "global_batch") if k not in wl]
    if not needed or ("flops_per_step" in model and "seq_lens" not in wl):
        return []
    why = "seq_lens needs" if "flops_per_step" in model else "counting the model's FLOPs needs"
    return [Problem(f"{why} {' and '.join(needed)}", "/workload",
                    hint=f"add workload.{needed[0]}, or give model.flops_per_step")]


def no_backward_without_training(doc: Doc) -> list[Problem]:
    """Inference and decode run no backward pass: nothing is recomputed or accumulated."""
    wl = doc["workload"]
    if wl["mode"] == "training":
        return []
    out = []
    if wl.get("recompute", "none") != "none" or wl.get("flash_recompute"):
        out.append(Problem(f"{wl['mode']} has no backward pass, so nothing is recomputed", "/workload/recompute",
                           hint="remove recompute/flash_recompute or set mode: training"))
    if wl.get("grad_accum", 1) != 1:
        out.append(Problem(f"{wl['mode']} has no gradient accumulation", "/workload/grad_accum",
                           hint="remove grad_accum"))
    return out


def decode_has_context(doc: Doc) -> list[Problem]:
    wl = doc["workload"]
    if wl["mode"] == "decode" and "context_len" not in wl:
        return [Problem("decode mode needs the KV-cache length", "/workload", hint="add workload.context_len")]
    return []


def microbatch_is_sized(doc: Doc) -> list[Problem]:
    """covers: microbatch scales the step's FLOPs by 1/grad_accum, so the microbatch must be declared."""
    wl, region = doc["workload"], doc["region"]
    out = []
    if region.get("covers") == "microbatch" and wl.get("micro_batch") is None:
        out.append(Problem("covers: microbatch needs micro_batch to size one microbatch", "/workload",
                           hint="add workload.micro_batch (and grad_accum)"))
    if "flops_per_step" in doc["model"] and region.get("covers") == "microbatch" and "grad_accum" not in wl:
        out.append(Problem("an explicit flops_per_step with covers: microbatch needs grad_accum to split the step",
                           "/workload", hint="add workload.grad_accum"))
    return out


def packed_documents_fit(doc: Doc) -> list[Problem]:
    wl = doc["workload"]
    if "seq_lens" in wl and "seq_len" in wl and sum(wl["seq_lens"]) > wl["seq_len"]:
        return [Problem(f"seq_lens add up to {sum(wl['seq_lens'])}, more than seq_len {wl['seq_len']}",
                        "/workload/seq_lens", hint="packed documents must fit in one sequence of seq_len tokens")]
    return []


def gpu_product(doc: Doc) -> list[Problem]:
    """Declared parallel degrees must multiply to num_gpus (data derived when omitted)."""
    par, gpus = doc.get("parallelism"), doc["hardware"]["num_gpus"]
    if par is None:
        return []
    model_par = _model_parallel(par)
    if "data" in par and par["data"] * model_par != gpus:
        return [Problem(f"data {par['data']} x tensor x pipeline x context ({model_par}) = "
                        f"{par['data'] * model_par}, but num_gpus is {gpus}", "/parallelism",
                        hint="make the product equal hardware.num_gpus")]
    if "data" not in par and gpus % model_par:
        return [Problem(f"num_gpus {gpus} is not divisible by tensor x pipeline x context = {model_par}",
                        "/parallelism", hint="fix the parallel degrees or num_gpus")]
    return []


def batch_arithmetic(doc: Doc) -> list[Problem]:
    """global_batch = micro_batch x grad_accum x data-parallel replicas (SEMANTICS §7)."""
    wl, par, gpus = doc["workload"], doc.get("parallelism"), doc["hardware"]["num_gpus"]
    mb, ga, gb = wl.get("micro_batch"), wl.get("grad_accum", 1), wl.get("global_batch")
    if mb is None or gb is None or (par is not None and "data" not in par and gpus % _model_parallel(par)):
        return []           # nothing to check, or no data-parallel degree (gpu_product reports why)
    where = "/workload/global_batch"
    if par is not None:
        dp = par.get("data", gpus // _model_parallel(par))
        if mb * ga * dp != gb:
            return [Problem(f"global_batch {gb} != micro_batch {mb} x grad_accum {ga} x data-parallel {dp} = "
                            f"{mb * ga * dp}", where,
                            hint=f"set global_batch: {mb * ga * dp}, or fix micro_batch/grad_accum/parallelism")]
        return []
    if gb % (mb * ga):
        return [Problem(f"global_batch {gb} is not a multiple of micro_batch {mb} x grad_accum {ga}", where,
                        hint="global_batch = micro_batch x grad_accum x data-parallel replicas")]
    if gpus % (gb // (mb * ga)):
        return [Problem(f"global_batch / (micro_batch x grad_accum) = {gb // (mb * ga)} data-parallel replicas, "
                        f"which does not divide num_gpus {gpus}", where,
                        hint="check the batch sizes, or declare parallelism")]
    return []


def fp8_fraction_needs_fp8(doc: Doc) -> list[Problem]:
    hw = doc["hardware"]
    if hw.get("fp8_fraction") is not None and hw["precision"] != "fp8":
        return [Problem("fp8_fraction only applies to precision fp8", "/hardware/fp8_fraction",
                        hint="remove it or set precision: fp8")]
    return []


def _model_parallel(par: Doc) -> int:
    return par.get("tensor", 1) * par.get("pipeline", 1) * par.get("context", 1)


JOB_RULES: tuple[Callable[[Doc], list[Problem]], ...] = (
    name_is_a_folder, regex_compiles, occurrences_ordered, token_counts_given, no_backward_without_training,
    decode_has_context, microbatch_is_sized, packed_documents_fit, gpu_product, batch_arithmetic,
    fp8_fraction_needs_fp8)


def job_problems(job: Job) -> list[Problem]:
    """Every job-file rule over the document as written, each problem located in its file."""
    return [job.locate(p) for rule in JOB_RULES for p in rule(job.data)]


# --------------------------------------------------------------------------- numerator vs architecture

NUMERATOR_TOLERANCE = 0.10          # SEMANTICS §11: conventions differ by up to ~10 %; beyond, the inputs differ
SCOPE_RATIO = (0.5, 2.0)            # outside: a different amount of work (scope error), not another convention
FORWARD_ONLY_RATIO = (0.28, 0.38)   # ~1/3: one forward pass where training counts forward + backward (3x)


def numerator_agrees(flops: int, reference: int | None, convention: str) -> list[Warning]:
    """An explicit numerator next to a declared architecture must agree with it (SEMANTICS §11:
    one forward pass over a 5-step region printed 5.1 % "MFU"). Far off is a scope error."""
    if reference is None:
        return []
    ratio = flops / reference
    if abs(ratio - 1) <= NUMERATOR_TOLERANCE:
        return []
    low, high = SCOPE_RATIO
    code = "scope_mismatch" if not low <= ratio <= high else "numerator_differs"
    forward = FORWARD_ONLY_RATIO[0] <= ratio <= FORWARD_ONLY_RATIO[1]
    return [{"code": code, "message":
             f"flops_per_step ({flops:.4g}) is {ratio:.3f}x what the declared architecture gives "
             f"for this workload ({reference:.4g}, convention {convention}); "
             + ("about 1/3 looks like one forward pass where training needs forward + backward (3x); "
                if forward else "")
             + "check that the numerator covers exactly one optimizer step of global_batch sequences"}]


def numerator_checkable(beside_architecture: bool, tokens_per_step: int | None) -> list[Warning]:
    """Without seq_len and global_batch the architecture's FLOPs cannot be counted: say it was not checked."""
    if not beside_architecture or tokens_per_step is not None:
        return []
    return [{"code": "numerator_unchecked", "message": "flops_per_step is not cross-checked against the "
             "declared architecture: add workload.seq_len and global_batch to check it"}]


# --------------------------------------------------------------------------- trace rules


def gpu_scope(job: Job, devices_used: list[Any]) -> list[Problem]:
    """The time denominator uses num_gpus: fewer GPUs than ran the work is a scope error."""
    ran, gpus = len(devices_used), job.hardware["num_gpus"]
    if ran <= gpus:
        return []
    return [job.problem(f"kernels of the selected occurrences ran on {ran} devices "
                        f"({', '.join(map(str, devices_used))}), but num_gpus is {gpus}", "/hardware/num_gpus",
                        f"set num_gpus to the GPUs of the whole job (at least {ran})")]


def ranges_have_length(ranks: list[Doc]) -> str | None:
    """A selected range that ends before it starts, or has no length, is not a time interval: the trace's
    NVTX data cannot be right (exit 4), and no figure over it could be either."""
    bad = [r for r in ranks if r["cpu_range_ns"] <= 0]
    if not bad:
        return None
    shown = "; ".join(f"occurrence {r['occurrence']} rank {r.get('rank', r['pid'])}: "
                      + ("ends before it starts" if r["cpu_range_ns"] < 0 else "zero length")
                      + f" ({r['cpu_range_ns']} ns)" for r in bad[:10])
    more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
    return (f"{len(bad)} selected range(s) of NVTX_EVENTS are not time intervals: {shown}{more}. Check the capture "
            "(unbalanced or cross-thread push/pop, a truncated export) or select other occurrences")


def occurrences_above_100(occurrences: list[Doc]) -> list[Warning]:
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


def ranks_above_100(summary: list[Doc], rows: list[Doc]) -> list[Warning]:
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


def roofline_under_roof(rows: list[Doc]) -> list[Warning]:
    """Achieved above attainable is impossible: the FLOPs or the matched time describe other work."""
    return [_above_roof(r, r["attainable_tflops"], "roof")
            for r in rows if r["pct_of_roof"] is not None and r["pct_of_roof"] > PCT_LIMIT]


def roofline_under_peak(rows: list[Doc], peak_tflops: float) -> list[Warning]:
    """A row without a bytes figure has no attainable roof, but the dense peak bounds it all the same:
    achieved above the peak is impossible, not "compute-bound". The rows roofline.heuristic_bound labelled
    so: one test of "above the peak", so the warning and the row's label cannot disagree."""
    return [_above_roof(r, peak_tflops, "dense peak") for r in rows if r["bound"] == ABOVE_PEAK]


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
    """Whose FLOPs are off: the job's own figure (its FLOPs or its kernel pattern), or the analytic model's."""
    if r["note"] != JOB_NOTE:
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


def repeated_files(repeats: list[tuple[str, str]]) -> list[Warning]:
    """The same file given twice (a symlink, a glob and a path) is one rank, read once: say so."""
    if not repeats:
        return []
    pairs = "; ".join(f"{a} is {b}" for a, b in repeats)
    return [{"code": "trace_file_repeated", "message": f"the job names the same trace file more than once ({pairs}); "
             "it is read once, as one set of ranks"}]


# --------------------------------------------------------------------------- plausibility of the figures


PCT_LIMIT = 100.0      # a utilization is a share of the peak: above 100 % the inputs describe other work


@dataclass(frozen=True)
class Evidence:
    """What the plausibility rules judge: the headline metrics, the step times and what was measured."""

    metrics: Doc
    step_times_s: list[float]
    processes: int                  # processes (ranks) that had the region
    warnings: list[Warning]


def _causes(job: Job, ev: Evidence) -> str:
    """The scope errors most likely behind an impossible ratio, most specific first."""
    causes = []
    if ev.metrics["active_ratio_pct_union"] is None and (ev.metrics["mfu_pct_wall"] or 0) > 0:
        causes.append("no attributed kernel ran in the selected occurrences, so the time is only the ranges' CPU "
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
    while busy, even if MFU on the wall looks plausible (SEMANTICS §1: a diagnostic, still bounded).
    With FLOPs but no kernel at all the ratio is infinite (SEMANTICS §6), not missing."""
    ratio = ev.metrics["active_ratio_pct_union"]
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
    """A numerator far from the declared architecture's is not a measurement (SEMANTICS §11's 5.1 %)."""
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


# --------------------------------------------------------------------------- thresholds

_PASSES = {"mfu_pct_wall_min": lambda v, t: v >= t, "hfu_pct_wall_min": lambda v, t: v >= t,
           "step_time_s_max": lambda v, t: v <= t}


def thresholds(limits: Doc, metrics: Doc, step_time: Doc, status: str) -> list[dict[str, Any]]:
    """The job's gates (a missed one exits 1); a figure that could not be computed never passes. An invalid
    result's figures are no measurement: they neither pass nor fail (None, not tested); the result exits 1."""
    values = {"mfu_pct_wall_min": metrics["mfu_pct_wall"], "hfu_pct_wall_min": metrics["hfu_pct_wall"],
              "step_time_s_max": step_time["median_s"]}
    return [{"name": name, "limit": limit, "value": values[name],
             "passed": None if status == "invalid" else
             values[name] is not None and bool(_PASSES[name](values[name], limit))}
            for name, limit in sorted(limits.items())]
