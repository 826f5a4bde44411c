"""`mfu init TRACE`: a job file skeleton from what the trace shows, with every unknown left as TODO.

Region discovery (trace/discovery.py) picks the step-like range and the warm-up occurrences;
the trace names the devices, processes, GPU and (through kernel names) the precision. What a
trace cannot say — the model, the batch, whether it was training — is written as `TODO`, which
`mfu validate` reports at its line until the user fills it in (job/todo.py). Nothing is guessed
silently: every value carries a comment saying where it came from.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
from pathlib import Path
from typing import Any

from pipeline.errors import TraceError, UsageError
from pipeline.hardware.catalog import load_catalog
from pipeline.model.presets import presets
from pipeline.trace.discovery import WARMUP_FACTOR, skip
from pipeline.trace.inspect import inspect_trace
from pipeline.job.todo import MARK

COMMENT_COL = 36


def skeleton(trace: Path, preset: str | None, job_dir: Path | None) -> str:
    """The job file text; `job_dir` is where it will live (the trace path is written relative to it), None when
    the text is printed."""
    if preset is not None and preset not in presets():
        close = difflib.get_close_matches(preset, presets(), n=3, cutoff=0.4)
        raise UsageError(f"--preset: unknown model preset {preset!r}"
                         + (f" (did you mean {', '.join(close)}?)" if close else " (`mfu models` lists them)"))
    info = inspect_trace(trace, regions=6)
    found = info["region_discovery"]
    shaped = info["operator_shapes"]["shaped_ranges"]
    if info["lacking"]:                     # a table lacking a column `mfu run` needs: it refuses every job
        raise TraceError(f"{trace}: {'; '.join(info['lacking'])}. No job file written")
    if found["proposal"] is None:           # no GPU work: a job of TODOs could never run: say why instead
        raise TraceError(f"{trace}: {found['message']}. No job file written")
    lines = [f"# Job skeleton written by `mfu init` from {_comment(trace.name)}.",
             f"# Fill in every {MARK} (`mfu validate` lists each with its line), then `mfu run` this file.",
             f"# Region discovery: {_comment(found['message'])}",
             *([f"# Operator shapes: {shaped:,} PyTorch operator ranges record them, so `mfu run` counts FLOPs "
                "from the trace and checks the model section against the count"] if shaped else []),
             f"name: {_name(trace)}",
             _kv("trace", json.dumps(path := _trace_path(trace, job_dir)),
                 ("absolute: printed, so this file's folder is unknown" if job_dir is None
                  else "absolute: the trace is outside this file's folder" if os.path.isabs(path)
                  else "relative to this file") + "; opened read-only"),
             "region:", *_region(found), "hardware:", *_hardware(info), "model:"]
    lines.append(_kv("  preset", preset, "a built-in preset (`mfu models`)") if preset else
                 _kv("  preset", MARK, "a name from `mfu models`; or hidden/layers/heads/... or flops_per_step"))
    lines += ["workload:",
              _kv("  mode", MARK, "training | inference | decode"),
              _kv("  seq_len", MARK, "tokens per sequence"),
              _kv("  global_batch", MARK, "sequences per optimizer step (or inference batch), all GPUs")]
    return "\n".join(lines) + "\n"


def _region(found: dict[str, Any]) -> list[str]:
    """The region lines of the proposal (trace/proposal.py), its reason beside each value it chose."""
    p, rows = found["proposal"], found["regions"]
    if p["kind"] == "gpu_active":
        out = [_kv("  kind", "gpu_active", "no NVTX range marks a step: the GPU-active window of each process "
                   "(one occurrence); see the discovery line above"),
               _kv("  covers", "step", "the window as one step; covers: N if it ran N steps (the FLOPs are per step)")]
        chosen = None
    else:
        chosen = next((r for r in rows if (r["name_group"], r["domain"]) == (p["group"], p["domain"])), None)
        occ = p["occurrences"]
        why = ("step-like: " + "; ".join(chosen["reasons"]) if p["shape"] == "steps" and chosen is not None
               else f"{'a guess: ' if p['guess'] else ''}{SHAPES[p['shape']]}; see the discovery line above")
        out = _selected(p, why)
        out.append(_kv("  occurrences", "{" + ", ".join(f"{k}: {v}" for k, v in occ.items()) + "}",
                       _skip_reason(chosen) if p["shape"] == "steps" and chosen is not None
                       else _occurrences_reason(p)))
        out.append(_kv("  attribution", "process", "kernels launched by any thread of the range's process"))
        out.append(_kv("  covers", str(p["covers"]), f"one occurrence = {p['covers']} optimizer steps (the loop's "
                       "repeats)" if isinstance(p["covers"], int) else "one occurrence = one optimizer step; "
                       "microbatch or N otherwise"))
    others = [r for r in rows if r is not chosen][:4]
    if others:
        kind = " (kind: nvtx, the default)" if chosen is None else ""
        out.append(f"  # other candidates, by the GPU work they enclose{kind}:")
        out += [f"  #   {_named(r)}: {'; '.join(r['reasons'])}" for r in others]
    return out


# What each proposal shape is, in the comment beside the region's name.
SHAPES = {"one step": "one occurrence is the whole step",
          "loop": "a loop of steps", "only": "the only top-level range with GPU work"}


def _occurrences_reason(p: dict[str, Any]) -> str:
    occ = p["occurrences"]
    if occ.get("last") == occ["first"]:
        return "one occurrence: no spread between steps can be measured"
    if "last" in occ:
        return f"the repeats inside the loop: occurrences {occ['first']}-{occ['last']}"
    return f"from occurrence {occ['first']} on" + (" (earlier ones are warm-up)" if occ["first"] > 1 else "")


def _selected(p: dict[str, Any], why: str) -> list[str]:
    """The name, match and domain lines selecting a group's ranges (discovery.selector)."""
    match_why = {"regex": f"the {p['names']} names '{p['group']}' differ only in their number",
                 "prefix": "the name carries PyTorch's ', op_id = …' suffix", "exact": ""}[p["match"]]
    out = [_kv("  name", json.dumps(p["name"]), why), _kv("  match", p["match"], match_why)]
    if p["domain"] is not None:
        out.append(_kv("  domain", json.dumps(p["domain"]), "the NVTX domain the range was found in"))
    return out


def _skip_reason(row: dict[str, Any]) -> str:
    first, named = skip(row), row["named_warmup_occurrences"]
    which = f"occurrence{' 1' if first == 1 else f's 1-{first}'}"
    if named and first == named:
        return f"{which} start before the named warm-up ends"
    if first:
        return f"{which} look{'s' if first == 1 else ''} like warm-up (over {WARMUP_FACTOR}x the median duration)"
    return "no warm-up outlier found; skip more if your first steps compile or allocate"


def _named(row: dict[str, Any]) -> str:
    """A candidate as the job must name it: a group of suffixed PyTorch names matches only with prefix, numbered
    names with the regex discovery.selector writes."""
    sel = row["select"]
    return f"{row['name_group']!r}" + ("" if sel["match"] == "exact" else
                                       f" (match: prefix)" if sel["match"] == "prefix" else
                                       f" (name {json.dumps(sel['name'])}, match: regex)")


def _hardware(info: dict[str, Any]) -> list[str]:
    det, gpus = info["gpu_detection"], info["gpus"] or []
    if det.get("entry"):
        gpu = _kv("  gpu", "auto", f"the trace names {gpus[0]['name']}: catalog entry {det['entry']} ({det['name']})")
    elif gpus and gpus[0]["name"]:
        near = load_catalog().close_names(gpus[0]["name"], n=3)
        gpu = _kv("  gpu", MARK, f"the trace names {gpus[0]['name']!r}, not a catalog entry; nearest: "
                  f"{', '.join(near) or 'none'} (`mfu gpus`); or set peak_tflops")
    else:
        gpu = _kv("  gpu", MARK, "no GPU name in the trace: a key from `mfu gpus`, or set peak_tflops")
    devices, procs = info["devices_used"], [p for p in info["processes"] if p["kernels"]]
    seen = (f"{len(devices)} device(s) ran kernels in this trace ({len(procs)} process(es)); "
            "count every GPU of the job if other ranks ran elsewhere")
    count = _kv("  num_gpus", str(len(devices)) if devices else MARK, seen)
    prec = info["precision_by_kernel_names"]
    untyped = 1 - sum(r["share"] for r in prec)           # names that carry no type: the rest of the time
    named = ", ".join(f"{r['precision']} {100 * r['share']:.0f} %" for r in prec) + \
        (f", no type in the name {100 * untyped:.0f} %" if round(100 * untyped) else "")
    precision = (_kv("  precision", prec[0]["precision"], f"suggested by kernel names (share of gemm/attention/convolution time: "
                     f"{named}); the precision of the matrix math") if prec else
                 _kv("  precision", MARK, "bf16 | fp16 | fp8 | tf32 | ...: the precision of the matrix math"))
    return [gpu, count, precision]


def _kv(key: str, value: str, comment: str) -> str:
    text = f"{key}: {value}"
    return f"{text:<{COMMENT_COL - 1}} # {_comment(comment)}" if comment else text


# Characters YAML reads as a line break: in a comment, the rest of the line would be read as YAML.
_BREAKS = str.maketrans({c: repr(c)[1:-1] for c in "\r\n\x85\u2028\u2029"})


def _comment(text: str) -> str:
    """Text from the trace (a file or GPU name) inside a comment, its line breaks escaped."""
    return text.translate(_BREAKS)


def _trace_path(trace: Path, job_dir: Path | None) -> str:
    """Relative to the job file when the trace sits below its folder, else absolute (no ../../ chains);
    absolute when the text is printed (job_dir None): a redirect may put the file anywhere."""
    if job_dir is None:
        return str(trace.resolve())
    rel = os.path.relpath(trace.resolve(), job_dir.resolve())
    return str(trace.resolve()) if rel.startswith("..") else rel


def _name(trace: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", trace.stem).strip("-._") or "job"
    return name[:120]


def write(text: str, out: Path) -> None:
    """Never overwrite a job file the user may have edited; temp file + rename, so no half-written file."""
    if out.exists():
        raise UsageError(f"{out} exists: choose another -o or remove it first")
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as exc:                   # no folder, read-only, disk full: a usage problem, not a bug
        raise UsageError(f"-o {out}: cannot write the job file there ({exc.strerror})") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
