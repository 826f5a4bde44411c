"""`mfu compare`: N results side by side, differences against a baseline, and a regression gate for CI.

Inputs may be job files (run now), result.json files or report folders.

Comparability is decided per figure, not per job: MFU-like figures need the same FLOPs
convention, precision, peak, occurrence scope and attribution; time and throughput
figures need, in addition, the same work per step (model FLOPs within 0.1 %, tokens,
GPU count and type). An input that is unknown (null) on either side makes the figure
not comparable. Sign convention everywhere (columns, compare.json, stderr): a change is
value minus baseline, relative to the baseline; "better"/"worse" follow the figure's
direction (MFU up is better, step time up is worse).

Gate (--max-regression): see pipeline/gate.py; a figure fails only when it is worse by
more than the limit and a one-sided Mann–Whitney U test on the per-occurrence samples
says so at alpha 0.01. Several --baseline results are pooled (run-to-run noise).
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Callable, TypedDict

from pipeline import changes, gate
from pipeline.errors import ConfigError, Problem, UsageError, from_current_folder
from pipeline.job.documents import type_validator
from pipeline.job.reading import NotRegular, TooLarge, read_regular
from pipeline.report.result import SCHEMA_VERSION

Getter = Callable[[dict[str, Any]], Any]
RESULT_BYTES = 1 << 30          # a result.json read whole: far beyond a million occurrences' rows


class FigureCheck(TypedDict):
    """One figure of one input in compare.json's columns: comparable with the baseline, and if not, why
    (None: a figure describing the setup, or an input compared with nothing)."""

    metric: str
    label: str
    comparable: bool | None
    reasons: list[str]


class Delta(TypedDict):
    """One input's change from the baseline in compare.json's rows."""

    abs: float
    pct: float | None
    verdict: str | None
FLOPS_TOLERANCE = 1e-3          # model FLOPs per step agree within 0.1 %


def _peak(r: dict[str, Any]) -> str | None:
    hw = r["hardware"]
    if hw.get("peak_tflops") is None:
        return None
    origin = "job file override" if hw.get("peak_source") == "from job file" else f"catalog {hw.get('key')}"
    return f"{origin}, {hw['peak_tflops']:g} TFLOP/s"


def _scope(r: dict[str, Any]) -> str | None:
    steps = r["region"].get("steps_per_occurrence")
    return None if steps is None else f"{steps} step(s) per occurrence"


def _close(a: Any, b: Any) -> bool:
    return abs(a - b) <= FLOPS_TOLERANCE * max(abs(a), abs(b))


# The inputs a figure's comparability rests on: name -> (getter, equality, required on both sides).
# Occurrence scope compares optimizer steps per occurrence, so `covers: microbatch` with
# grad_accum 1 is the same scope as `covers: step`. Tokens per step count only where both are known.
INPUTS: dict[str, tuple[Getter, Callable[[Any, Any], bool], bool]] = {
    "FLOPs convention": (lambda r: r["flops"].get("convention"), lambda a, b: a == b, True),
    "precision": (lambda r: r["hardware"].get("precision"), lambda a, b: a == b, True),
    "peak": (_peak, lambda a, b: a == b, True),
    "occurrence scope": (_scope, lambda a, b: a == b, True),
    "attribution": (lambda r: r["region"].get("attribution"), lambda a, b: a == b, True),
    "model FLOPs per step": (lambda r: r["flops"].get("model_flops_per_step"), _close, True),
    "tokens per step": (lambda r: r["flops"].get("tokens_per_step"), lambda a, b: a == b, False),
    "GPU count": (lambda r: r["hardware"].get("num_gpus"), lambda a, b: a == b, True),
    "GPU type": (lambda r: r["hardware"].get("key") or r["hardware"].get("gpu"), lambda a, b: a == b, True),
    "occurrences": (lambda r: r["totals"].get("occurrences"), lambda a, b: a == b, True),
}
UTILIZATION = ("FLOPs convention", "precision", "peak", "occurrence scope", "attribution")
ACHIEVED = ("FLOPs convention", "precision", "occurrence scope", "attribution")
WORK = UTILIZATION + ("model FLOPs per step", "tokens per step", "GPU count", "GPU type")
TOTALS = WORK + ("occurrences",)

# (key, label, unit, getter, better direction, inputs it rests on; None: describes the setup)
METRICS: list[tuple[str, str, str, Getter, str, tuple[str, ...] | None]] = [
    ("mfu_pct_wall", "MFU (wall)", "%", lambda r: r["metrics"]["mfu_pct_wall"], "higher", UTILIZATION),
    ("hfu_pct_wall", "HFU (wall)", "%", lambda r: r["metrics"]["hfu_pct_wall"], "higher", UTILIZATION),
    ("active_ratio_pct_union", "active-time ratio (diagnostic)", "%",
     lambda r: r["metrics"]["active_ratio_pct_union"], "higher", UTILIZATION),
    ("achieved_tflops_per_gpu", "achieved TFLOP/s per GPU", "TFLOP/s",
     lambda r: r["metrics"]["achieved_tflops_per_gpu"], "higher", ACHIEVED),
    ("tokens_per_s", "tokens/s", "tokens/s", lambda r: r["metrics"]["tokens_per_s"], "higher",
     WORK + ("tokens known",)),
    ("step_time_median_s", "step time (median)", "s", lambda r: r["step_time"]["median_s"], "lower", WORK),
    ("step_time_cv_pct", "step time CV", "%", lambda r: r["step_time"]["cv_pct"], "lower", WORK),
    ("wall_time_s", "wall time (total)", "s", lambda r: r["totals"]["wall_time_s"], "lower", TOTALS),
    ("gpu_kernel_union_s", "kernel union (total)", "s", lambda r: r["totals"]["gpu_kernel_union_s"], "lower",
     TOTALS),
    ("straggler_s", "straggler cost", "s", lambda r: (r.get("straggler") or {}).get("total_s"), "lower", TOTALS),
    ("model_flops_per_occurrence", "model FLOPs per occurrence", "FLOP",
     lambda r: r["flops"]["model_flops_per_occurrence"], "none", None),
    ("num_gpus", "GPUs", "", lambda r: r["hardware"]["num_gpus"], "none", None),
    ("peak_tflops", "peak TFLOP/s per GPU", "TFLOP/s", lambda r: r["hardware"]["peak_tflops"], "none", None),
]
# The fields read by key, not by .get (a result lacking one of the others compares it as unknown): a result
# without one is refused by name (exit 3), not failed on with a KeyError.
READS = ("/job/name", "/job/config_sha256", "/trace/sha256", "/status", "/metrics/mfu_pct_wall",
         "/metrics/hfu_pct_wall", "/metrics/active_ratio_pct_union", "/metrics/achieved_tflops_per_gpu",
         "/metrics/tokens_per_s", "/step_time/median_s", "/step_time/cv_pct", "/totals/wall_time_s",
         "/totals/gpu_kernel_union_s", "/flops/model_flops_per_occurrence", "/hardware/num_gpus",
         "/hardware/peak_tflops", "/region/name", "/region/match", "/region/covers")
SHOWN = ("FLOPs convention", "precision", "peak", "occurrence scope", "attribution", "model FLOPs per step",
         "tokens per step", "GPU count", "GPU type", "region", "status")


def load_input(text: str) -> tuple[str, dict[str, Any]]:
    """A result from a job file (run now), a result.json, or a report folder holding one."""
    path = Path(text)
    if not path.exists():       # a job file too: README's exit 2 for an input that does not exist, not run's 3
        raise UsageError(f"{text}: no such file or folder{from_current_folder() if not path.is_absolute() else ''}")
    if path.is_dir():           # nothing here was read: a location to correct (exit 2), not a damaged result (3)
        path = path / "result.json"
        if not path.is_file():
            raise UsageError(f"{text}: a folder without result.json; give a job's report folder "
                             "(e.g. reports/<job>, written by `mfu run`), a result.json or a job file")
    if path.suffix in (".yaml", ".yml"):
        from pipeline.job.config import load_job
        from pipeline.run import run_job
        return text, run_job(load_job(path))
    if not path.is_file():
        raise UsageError(f"{text}: not a job file, result.json or report folder")
    try:
        doc = json.loads(read_regular(path, RESULT_BYTES).decode("utf-8"), parse_constant=_not_a_number)
    except RecursionError:                     # [[[[...]]]] thousands deep: Python's parser gives up
        raise ConfigError([Problem("cannot read as result JSON: nested deeper than Python's JSON parser goes, "
                                   "and any result.json", "", str(path))]) from None
    except (OSError, ValueError) as exc:       # ValueError: UnicodeDecodeError, JSONDecodeError, NaN
        why = exc.strerror if isinstance(exc, (NotRegular, TooLarge)) else exc
        raise ConfigError([Problem(f"cannot read as result JSON ({why})", "", str(path))]) from None
    if not isinstance(doc, dict) or "metrics" not in doc or "schema_version" not in doc:
        raise ConfigError([Problem("not an mfu-pipeline result.json (no schema_version/metrics)", "", str(path))])
    if doc["schema_version"] == SCHEMA_VERSION:   # this tool's own shape: a value of another type was edited in
        found = sorted((e for e in type_validator("result.schema.json").iter_errors(doc) if e.validator == "type"),
                       key=lambda e: list(map(str, e.absolute_path)))
        if found:
            raise ConfigError([Problem(e.message, "/" + "/".join(map(str, e.absolute_path)), str(path),
                                       hint="the file was edited or damaged: write it again with `mfu run`")
                               for e in found[:5]])
    missing = _missing(doc)
    if missing:
        raise ConfigError([Problem("missing, and mfu compare reads it", pointer, str(path),
                                   hint="the file was edited or damaged: write it again with `mfu run`")
                           for pointer in missing[:5]])
    return text, doc


def _missing(doc: dict[str, Any]) -> list[str]:
    """JSON pointers of READS absent from `doc`, each named once at the shallowest level that is missing."""
    out: list[str] = []
    for pointer in READS:
        node: Any = doc
        keys = pointer.split("/")[1:]
        for depth, key in enumerate(keys, start=1):
            if not isinstance(node, dict) or key not in node:
                at = "/" + "/".join(keys[:depth])
                out += [] if at in out else [at]
                break
            node = node[key]
    return out


def _not_a_number(word: str) -> None:
    raise ValueError(f"{word} is not a number JSON allows")


def gather(texts: Sequence[str], baselines: Sequence[str]) -> tuple[list[tuple[str, dict[str, Any]]], list[int]]:
    """Load the inputs and find the baselines: an input's job name, text as written or 1-based position,
    or another result (loaded and put in front). Default: the first input."""
    inputs = [load_input(t) for t in texts]
    labels = _labels(inputs)
    chosen: list[int | tuple[str, dict[str, Any]]] = []
    for wanted in baselines:
        hit = next((i for i, (label, (src, _)) in enumerate(zip(labels, inputs))
                    if wanted in (label, src) or wanted == str(i + 1)), None)
        if hit is None and not Path(wanted).exists():
            raise UsageError(f"--baseline {wanted!r} is none of the inputs ({', '.join(labels)}) and no result: "
                             "give a job name, an input as written, its 1-based position, or a result.json / "
                             "report folder")
        chosen.append(hit if hit is not None else load_input(wanted))
    extra = [c for c in chosen if not isinstance(c, int)]
    index = iter(range(len(extra)))
    base = [c + len(extra) if isinstance(c, int) else next(index) for c in chosen] or [0]
    if len(set(base)) != len(base):
        raise UsageError("the same baseline is given twice")
    return extra + inputs, base


def compare(inputs: list[tuple[str, dict[str, Any]]], baselines: Sequence[int] = (0,),
            max_regression_pct: float | None = None, strict: bool = False,
            allow_incomparable: bool = False, job_file: str | None = None) -> dict[str, Any]:
    """The comparison document (compare.json); the templates only format it.

    `job_file` names the job file of the non-baseline inputs for CI annotations (--job-file).
    """
    labels = _labels(inputs)
    results = [r for _, r in inputs]
    primary = results[baselines[0]]
    columns = [_column(src, r, label, i in baselines, primary if i != baselines[0] else None,
                       None if i in baselines else job_file)
               for i, ((src, r), label) in enumerate(zip(inputs, labels))]
    rows = [_row(m, results, columns, baselines) for m in METRICS]
    for b in baselines[1:]:
        bad = [f for f in columns[b]["figures"] if f["metric"] in gate.GATED and f["comparable"] is False]
        if bad:
            raise UsageError(f"baseline {labels[b]} is not comparable with baseline {labels[baselines[0]]}: "
                             + "; ".join(bad[0]["reasons"]))
    changes = [{"column": columns[i]["label"],
                **changes_of(primary, r, next(f for f in columns[i]["figures"] if f["metric"] == "step_time_median_s"))}
               for i, r in enumerate(results) if i not in baselines]
    for n, c in enumerate(changes, start=1):
        if c["available"]:
            c["waterfall_svg"] = f"what-changed-{n}.svg"
    gates = ([] if max_regression_pct is None else
             gate.judge(rows, columns, results, baselines, max_regression_pct, strict, allow_incomparable))
    return {"baseline": labels[baselines[0]], "baselines": [labels[b] for b in baselines],
            "max_regression_pct": max_regression_pct, "alpha": gate.ALPHA, "min_samples": gate.MIN_SAMPLES,
            "strict": strict, "allow_incomparable": allow_incomparable, "columns": columns,
            "scope": [{"name": n, "values": [_text(_input_value(n, r)) for r in results]} for n in SHOWN],
            "rows": rows, "changes": changes, "gates": gates, "passed": all(g["passed"] for g in gates),
            "gate": gate.gate_word(gates)}


def changes_of(base: dict[str, Any], r: dict[str, Any], step_figure: dict[str, Any]) -> dict[str, Any]:
    """What changed in `r` against the baseline (changes.decompose), where its step time is comparable."""
    return changes.decompose(base, r, step_figure["reasons"] if step_figure["comparable"] is False else [])


def _input_value(name: str, r: dict[str, Any]) -> Any:
    if name == "region":
        region = r["region"]
        kind = region.get("kind", "nvtx")          # a result written before region kinds is an NVTX region
        what = (f"{region['name']} ({region['match']})" if kind == "nvtx" else "GPU-active window (no NVTX range)"
                if kind == "gpu_active" else f"time window {region['start_s']:g} s to {region['end_s']:g} s")
        return f"{what}, covers {region['covers']}"
    if name == "status":
        return r["status"]
    return INPUTS[name][0](r)


def _text(v: Any) -> str:
    return "unknown" if v is None else f"{v:,}" if isinstance(v, int) else str(v)


def _labels(inputs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Column headings: the job name; inputs sharing one told apart by where each came from, the shortest end
    of the path given that differs ('step (baseline/step)', 'step (pr/step)'), not '#1'/'#2', which the
    reader had to map back to the command line. A path's root is never shown (no machine's folders); the
    same file given twice keeps its position."""
    names = [r["job"]["name"] for _, r in inputs]
    places = [_place(src) for src, _ in inputs]
    labels = []
    for i, name in enumerate(names):
        others = [places[j] for j in range(len(inputs)) if j != i and names[j] == name]
        labels.append(f"{name} ({_distinct_end(places[i], others, name)})" if others else name)
    return [lbl if labels.count(lbl) == 1 else f"{lbl} #{i + 1}" for i, lbl in enumerate(labels)]


def _place(src: str) -> tuple[str, ...]:
    """Where an input came from, as path parts without the root: a result.json stands for its report folder."""
    parts = Path(os.path.normpath(src)).parts
    parts = parts[1:] if parts and Path(parts[0]).anchor == parts[0] else parts
    return parts[:-1] if len(parts) > 1 and parts[-1] == "result.json" else parts


def _distinct_end(place: tuple[str, ...], others: list[tuple[str, ...]], name: str) -> str:
    """The fewest trailing parts of `place` that no other place ends with (all of it when none do); never the
    job's name alone, the folder `mfu run` names after the job ('step (step)' said nothing), while there is more."""
    for k in range(2 if len(place) > 1 and place[-1] == name else 1, len(place) + 1):
        if all(other[-k:] != place[-k:] for other in others):
            return "/".join(place[-k:])
    return "/".join(place)


def inputs_of(r: dict[str, Any]) -> dict[str, Any]:
    """A result's comparability inputs by name (None: unknown); what a history stores with each run, so that
    its trend applies these rules (`input_reasons`) to runs whose result.json files are gone."""
    return {name: get(r) for name, (get, _, _) in INPUTS.items()}


def figure_reasons(needs: tuple[str, ...], base: dict[str, Any], other: dict[str, Any]) -> list[str]:
    """Why one figure of `other` cannot be compared with the baseline's; empty when it can."""
    out = input_reasons(needs, inputs_of(base), inputs_of(other))
    if "invalid" in (base["status"], other["status"]):
        side = ("both" if base["status"] == other["status"] else
                "this input" if other["status"] == "invalid" else "the baseline")
        out.append(f"status invalid ({side})")
    return out


def input_reasons(needs: tuple[str, ...], base: dict[str, Any], other: dict[str, Any]) -> list[str]:
    """The rules on inputs alone (`inputs_of` of each side; a name absent counts as unknown): why a figure
    resting on `needs` cannot be compared; empty when it can."""
    out = []
    for name in needs:
        # "tokens known": the tokens per step must be known on both sides, equal or not
        key, (_, equal, required) = (("tokens per step", (None, None, True)) if name == "tokens known"
                                     else (name, INPUTS[name]))
        a, b = other.get(key), base.get(key)
        if a is None or b is None:
            if required:
                side = "both" if a is None and b is None else "this input" if a is None else "the baseline"
                out.append(f"{name.replace(' known', ' per step')} unknown ({side})")
        elif equal is not None and not equal(a, b):
            out.append(f"{name}: {_text(a)} vs baseline {_text(b)}")
    return out


def by_reasons(refused: Iterable[tuple[str, list[str]]]) -> dict[tuple[str, ...], list[str]]:
    """Refused figures grouped by the same reasons, in first-seen order: one line per cause, not per figure
    (compare.json's not_comparable, and the history's)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for name, reasons in refused:
        if reasons:
            groups.setdefault(tuple(reasons), []).append(name)
    return groups


def _column(src: str, r: dict[str, Any], label: str, is_base: bool, primary: dict[str, Any] | None,
            job_file: str | None) -> dict:
    figures: list[FigureCheck] = []
    for key, name, _, get, _, needs in METRICS:
        if needs is None or primary is None:
            figures.append({"metric": key, "label": name, "comparable": None, "reasons": []})
            continue
        reasons = figure_reasons(needs, primary, r)
        if get(r) is None or get(primary) is None:
            reasons.append("no value" + (" in the baseline" if get(r) is not None else ""))
        figures.append({"metric": key, "label": name, "comparable": not reasons, "reasons": reasons})
    groups = by_reasons((f["label"], f["reasons"]) for f in figures if f["comparable"] is False)
    field, samples = gate.step_samples(r)
    job_file = job_file or (src if Path(src).suffix in (".yaml", ".yml") else r["job"].get("file") or "")
    return {"label": label, "source": Path(src).name if Path(src).is_absolute() else src,
            "job": r["job"]["name"], "job_file": Path(job_file).name if Path(job_file).is_absolute() else job_file,
            "status": r["status"], "config_sha256": r["job"]["config_sha256"], "trace_sha256": r["trace"]["sha256"],
            "baseline": is_base, "samples": {"field": field, "n": len(samples)},
            "comparable": not groups, "figures": figures,
            "comparable_figures": [f["label"] for f in figures if f["comparable"]],
            "not_comparable": [{"figures": names, "reasons": list(reasons)} for reasons, names in groups.items()],
            "issues": sorted({x for reasons in groups for x in reasons})}


def reference(values: Sequence[Any], baselines: Sequence[int]) -> Any:
    """The baseline value of a figure: the baseline's, or the median over several baseline runs."""
    vals = [values[b] for b in baselines]
    if any(v is None for v in vals):
        return None
    return vals[0] if len(vals) == 1 else statistics.median(vals)


def _row(metric: tuple, results: list[dict], columns: list[dict], baselines: Sequence[int]) -> dict[str, Any]:
    key, label, unit, get, better, _ = metric
    values = [get(r) for r in results]
    ref = reference(values, baselines)
    deltas: list[Delta | None] = []
    for i, v in enumerate(values):
        if (len(baselines) == 1 and i == baselines[0]) or v is None or ref is None:
            deltas.append(None)
            continue
        pct = 100.0 * (v - ref) / ref if ref else None
        deltas.append({"abs": v - ref, "pct": pct, "verdict": gate.verdict(v - ref, better)})
    comparable = [next(f["comparable"] for f in c["figures"] if f["metric"] == key) for c in columns]
    return {"metric": key, "label": label, "unit": unit, "better": better, "values": values,
            "reference": ref, "deltas": deltas, "comparable": comparable}
