"""The job file's own rules (docs/figures.md §7): what a schema cannot say, checked before any trace is opened.

The FLOPs numerator and the time denominator must describe the same work: batch arithmetic, parallel
degrees, a backward pass only in training, names and patterns that will work. Each rule takes the job
document as written and returns Problems (exit 3), located in the job file by `job_problems`.
A new rule is a function here, listed in `JOB_RULES`, with its own test in tests/test_checks_job_file.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pipeline.analysis.classes import pattern_problems
from pipeline.errors import HardwareError, Problem
from pipeline.hardware.catalog import load_catalog
from pipeline.hardware.detect import resolve_peak
from pipeline.job.config import Job
from pipeline.trace import re2

Doc = Mapping[str, Any]

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
    """The region's `match: regex`, the kernel-class patterns and the figures' `kernels` patterns are run by
    DuckDB's RE2, so RE2 judges them (Python's re accepts lookarounds RE2 refuses), before any trace is opened."""
    region, found = doc["region"], pattern_problems(doc.get("analysis", {}).get("kernel_classes"))
    if region.get("match") == "regex" and "name" in region and (why := re2.problem(region["name"])):
        found.insert(0, Problem(f"not a valid regular expression (RE2): {why}", "/region/name",
                                hint="RE2 has no lookarounds or backreferences; escape special characters, "
                                     "or use match: prefix / contains for plain text"))
    figures = doc.get("analysis", {}).get("figures") or []
    found += [Problem(f"invalid regular expression {f['kernels']!r} (RE2): {why}", f"/analysis/figures/{i}/kernels",
                      hint="RE2 syntax, e.g. (?i)flash_fwd") for i, f in enumerate(figures)
              if "kernels" in f and (why := re2.problem(f["kernels"]))]
    return found


def trace_paths_are_paths(doc: Doc) -> list[Problem]:
    """No file system takes a NUL character in a path: the trace stage would fail on it with no word of
    where it came from, so it is said here, at the entry holding it."""
    listed = isinstance(doc["trace"], list)
    return [Problem("a path cannot hold a NUL character (\\0)", "/trace" + (f"/{i}" if listed else ""),
                    hint="write the trace file's path or glob")
            for i, path in enumerate(doc["trace"] if listed else [doc["trace"]]) if "\0" in path]


# The keys that pick NVTX ranges, refused beside a window kind, which has none: said rather than ignored.
RANGE_KEYS = {"name": "the range's name", "match": "how the name is matched", "domain": "the range's NVTX domain",
              "occurrences": "which of the range's occurrences",
              "attribution": "which kernels a range's launches own (a window holds every GPU row inside it)"}


def region_fits_kind(doc: Doc) -> list[Problem]:
    """A window (kind gpu_active or time_window) is one occurrence holding every GPU row inside it: the keys that
    select NVTX ranges have nothing to select there, and start_s/end_s belong to time_window only."""
    region = doc["region"]
    kind = region.get("kind", "nvtx")
    if kind == "nvtx":
        return [Problem(f"{key} is for kind time_window; kind nvtx selects NVTX ranges by name", f"/region/{key}",
                        hint=f"remove {key}, or set region.kind: time_window (and remove name)")
                for key in ("start_s", "end_s") if key in region]
    found = [Problem(f"{key} ({what}) selects NVTX ranges; kind {kind} selects none", f"/region/{key}",
                     hint=f"remove {key}, or set region.kind: nvtx to measure NVTX ranges")
             for key, what in RANGE_KEYS.items() if key in region]
    if kind == "gpu_active":
        found += [Problem(f"{key} is for kind time_window; gpu_active is the whole GPU-active window", f"/region/{key}",
                          hint=f"remove {key}, or set region.kind: time_window")
                  for key in ("start_s", "end_s") if key in region]
    elif "start_s" in region and "end_s" in region and region["end_s"] <= region["start_s"]:
        found.append(Problem(f"end_s ({region['end_s']}) is not after start_s ({region['start_s']})",
                             "/region/end_s", hint="the window runs from start_s to a later end_s, in seconds "
                                                   "after the capture's start"))
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
    """global_batch = micro_batch x grad_accum x data-parallel replicas (docs/figures.md §7)."""
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


def components_need_architecture(doc: Doc) -> list[Problem]:
    """analysis.components maps the model's FLOPs components onto ranges: an explicit numerator has none."""
    if doc.get("analysis", {}).get("components") and "flops_per_step" in doc["model"]:
        return [Problem("analysis.components needs the model's components, and flops_per_step gives one total",
                        "/analysis/components", hint="declare the architecture (a preset, or hidden, layers, "
                        "heads, ...) instead of flops_per_step, or remove analysis.components")]
    return []


def gpu_in_catalog(doc: Doc) -> list[Problem]:
    """A GPU the job names (not `auto`) must be a catalog entry with a peak at the job's precision: the trace
    cannot change that, so `mfu validate` (and the pre-commit hook) refuse a mistyped key as `mfu run` does.
    With peak_tflops given, run needs no entry either. fp8_fraction is left to fp8_fraction_needs_fp8."""
    hardware = {k: v for k, v in doc["hardware"].items() if k != "fp8_fraction"}
    if (hardware.get("gpu") or "auto") == "auto":
        return []                       # identified from the trace: only `mfu run` can tell
    try:
        resolve_peak(load_catalog(), hardware, None)
    except HardwareError as exc:
        return [Problem(str(exc), exc.pointer)]
    return []


def _model_parallel(par: Doc) -> int:
    return par.get("tensor", 1) * par.get("pipeline", 1) * par.get("context", 1)


JOB_RULES: tuple[Callable[[Doc], list[Problem]], ...] = (
    name_is_a_folder, trace_paths_are_paths, regex_compiles, region_fits_kind, occurrences_ordered, token_counts_given,
    no_backward_without_training, decode_has_context, microbatch_is_sized, packed_documents_fit, gpu_product,
    batch_arithmetic, fp8_fraction_needs_fp8, components_need_architecture, gpu_in_catalog)


def job_problems(job: Job) -> list[Problem]:
    """Every job-file rule over the document as written, each problem located in its file."""
    return [job.locate(p) for rule in JOB_RULES for p in rule(job.data)]
