"""Job files: YAML with positions -> JSON Schema -> scope-consistency checks -> a frozen Job.

Every problem in a file is collected and reported at once, each located by
file:line:col and JSON pointer, with what to write instead. The schema is the
reference documentation; the checks here are the rules a schema cannot say:
that the FLOPs numerator and the time denominator describe the same work.
"""

from __future__ import annotations

import glob
import hashlib
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any


from pipeline.job.documents import locate, parse_yaml, schema_problems
from pipeline.job.todo import covered, todo_problems
from pipeline.report.publish import RESERVED
from pipeline.trace import re2
from pipeline.errors import ConfigError, Problem, TraceError

@dataclass(frozen=True)
class Region:
    name: str
    match: str
    domain: str | None
    first: int
    last: int | None
    attribution: str
    covers: str | int


@dataclass(frozen=True)
class Job:
    """A validated job. `steps_per_occurrence` is the scope bridge: optimizer steps in one occurrence."""

    path: Path
    name: str
    description: str
    trace_path: Path
    trace_text: str
    region: Region
    hardware: dict[str, Any]
    model: dict[str, Any]
    workload: dict[str, Any]
    thresholds: dict[str, Any]
    steps_per_occurrence: Fraction
    sha256: str
    data: dict[str, Any] = field(repr=False, default_factory=dict)
    positions: dict[str, tuple[int, int]] = field(repr=False, default_factory=dict)
    trace_patterns: tuple[str, ...] = ()
    base: tuple[str, dict[str, tuple[int, int]]] | None = field(repr=False, default=None)   # extends:

    def trace_files(self) -> list[Path]:
        """Every trace file, globs expanded (sorted, each once): one file per rank or node.

        Expanded at run time, not load time, so `validate` needs no traces; a pattern that
        matches nothing is a trace problem (exit 4) naming the pattern.
        """
        out: list[Path] = []
        for text in self.trace_patterns or (self.trace_text,):
            if not glob.has_magic(text):
                out.append(self.path.parent / text)
                continue
            found = sorted(self.path.parent.glob(text)) if not Path(text).is_absolute() else \
                sorted(Path(p) for p in glob.glob(text))
            if not found:
                raise TraceError(f"{self.path}: trace pattern '{text}' matches no file (relative to the job file)")
            out.extend(found)
        return list(dict.fromkeys(out))

    def problem(self, message: str, pointer: str, hint: str = "") -> Problem:
        """A problem found after loading (e.g. against the trace), still located in the job file."""
        return self.locate(Problem(message, pointer, hint=hint))

    def locate(self, problem: Problem) -> Problem:
        """Give a problem raised by a lower layer (FLOPs, hardware) this file's name and position."""
        from pipeline.job.extends import relocate
        problem.file = str(self.path)
        return relocate(locate(problem, self.positions), self.positions, self.base)


def read_job_text(path: Path, hint: str = "check the path") -> tuple[bytes, str]:
    """The file's bytes (for its hash) and text; unreadable or non-UTF-8 files are config problems."""
    file = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError([Problem("job file not found", "", file, hint=hint)]) from None
    except OSError as exc:
        raise ConfigError([Problem(f"cannot read job file ({exc.strerror})", "", file)]) from None
    try:
        return raw, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError([Problem(f"not UTF-8 text (byte {exc.start})", "", file)]) from None


def load_job(path: str | Path) -> Job:
    """Read, validate and scope-check one job file; raise ConfigError listing every problem."""
    from pipeline.job.extends import merge, relocate
    path = Path(path)
    file = str(path)
    raw, text = read_job_text(path)
    data, positions, problems = parse_yaml(text, file)
    if not isinstance(data, dict):
        raise ConfigError([Problem("the job file must be a YAML mapping of keys (name, trace, region, ...)",
                                   "", file, 1, 1)])
    base = None
    if "extends" in data and not problems:
        data, base_file, base_pos, base_raw = merge(path, data, positions)
        base = (base_file, base_pos)
        raw += b"\0" + base_raw           # the config hash covers the base too
    todos = [locate(p, positions) for p in todo_problems(data, file)]
    problems += [p for p in schema_problems(data, "job.schema.json", file, positions) if not covered(p, todos)]
    problems += todos
    if not problems:
        problems += [locate(p, positions) for p in scope_problems(data, file)]
    if problems:
        raise ConfigError([relocate(p, positions, base) for p in problems])
    return replace(_build(path, data, hashlib.sha256(raw).hexdigest(), positions), base=base)


def _build(path: Path, data: dict[str, Any], sha256: str, positions: dict[str, tuple[int, int]]) -> Job:
    region = data["region"]
    occ = region.get("occurrences", {})
    wl = {"grad_accum": 1, "recompute": "none", "flash_recompute": False, **data["workload"]}
    hw = {"gpu": "auto", "peak_tflops": None, "hbm_gbps": None, "sparsity": False,
          "fp8_fraction": None, "achievable_tflops": None, **data["hardware"]}
    return Job(
        path=path,
        name=data["name"],
        description=data.get("description", ""),
        trace_path=(path.parent / _trace_list(data["trace"])[0]),
        trace_text=", ".join(_trace_list(data["trace"])),
        trace_patterns=tuple(_trace_list(data["trace"])),
        region=Region(region["name"], region.get("match", "exact"), region.get("domain"),
                      occ.get("first", 1), occ.get("last"), region.get("attribution", "process"),
                      region.get("covers", "step")),
        hardware=hw,
        model=dict(data["model"]),
        workload=wl,
        thresholds=dict(data.get("thresholds", {})),
        steps_per_occurrence=steps_per_occurrence(region.get("covers", "step"), wl),
        sha256=sha256,
        data=data,
        positions=positions,
    )


def _trace_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def steps_per_occurrence(covers: str | int, workload: dict[str, Any]) -> Fraction:
    """Optimizer steps in one occurrence: the factor that scopes per-step FLOPs to the region."""
    if covers == "microbatch":
        return Fraction(1, workload.get("grad_accum", 1))
    if covers == "step":
        return Fraction(1)
    return Fraction(int(covers))


def scope_problems(data: dict[str, Any], file: str) -> list[Problem]:
    """Cross-field rules (SEMANTICS §7): batch arithmetic, GPU product, mode vs recompute, scope."""
    wl, hw, region = data["workload"], data["hardware"], data["region"]
    par, model = data.get("parallelism"), data["model"]
    out: list[Problem] = []

    def bad(msg: str, pointer: str, hint: str = "") -> None:
        out.append(Problem(msg, pointer, file, hint=hint))

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", data["name"]):
        bad("a name is letters, digits, '.', '_' and '-' only (no spaces or line breaks)", "/name",
            "it becomes the report folder's name")
    elif data["name"].lower() in RESERVED:
        bad(f"'{data['name']}' is the name of one of the output folder's own files or folders", "/name",
            f"choose a name other than {', '.join(sorted(RESERVED))}")
    if region.get("match") == "regex" and (why := re2.problem(region["name"])):
        bad(f"not a valid regular expression (RE2): {why}", "/region/name", "RE2 has no lookarounds or "
            "backreferences; escape special characters, or use match: prefix / contains for plain text")
    occ = region.get("occurrences", {})
    if "last" in occ and occ["last"] < occ.get("first", 1):
        bad(f"last ({occ['last']}) is before first ({occ.get('first', 1)})", "/region/occurrences/last",
            "last must be >= first")
    gpus = hw["num_gpus"]
    mb, ga, gb = wl.get("micro_batch"), wl.get("grad_accum", 1), wl.get("global_batch")
    needed = [k for k in ("seq_len", "global_batch") if k not in wl]
    if needed and ("flops_per_step" not in model or "seq_lens" in wl):
        why = "seq_lens needs" if "flops_per_step" in model else "counting the model's FLOPs needs"
        bad(f"{why} {' and '.join(needed)}", "/workload", f"add workload.{needed[0]}, or give model.flops_per_step")
    if wl["mode"] != "training":
        if wl.get("recompute", "none") != "none" or wl.get("flash_recompute"):
            bad(f"{wl['mode']} has no backward pass, so nothing is recomputed", "/workload/recompute",
                "remove recompute/flash_recompute or set mode: training")
        if ga != 1:
            bad(f"{wl['mode']} has no gradient accumulation", "/workload/grad_accum", "remove grad_accum")
    if wl["mode"] == "decode" and "context_len" not in wl:
        bad("decode mode needs the KV-cache length", "/workload", "add workload.context_len")
    if region.get("covers") == "microbatch" and mb is None:
        bad("covers: microbatch needs micro_batch to size one microbatch", "/workload",
            "add workload.micro_batch (and grad_accum)")
    if "seq_lens" in wl and "seq_len" in wl and sum(wl["seq_lens"]) > wl["seq_len"]:
        bad(f"seq_lens add up to {sum(wl['seq_lens'])}, more than seq_len {wl['seq_len']}",
            "/workload/seq_lens", "packed documents must fit in one sequence of seq_len tokens")
    dp = _data_parallel(par, gpus, bad)
    if mb is not None and gb is not None:
        if dp is not None and mb * ga * dp != gb:
            bad(f"global_batch {gb} != micro_batch {mb} x grad_accum {ga} x data-parallel {dp} = {mb * ga * dp}",
                "/workload/global_batch", f"set global_batch: {mb * ga * dp}, or fix micro_batch/grad_accum/parallelism")
        elif dp is None and gb % (mb * ga):
            bad(f"global_batch {gb} is not a multiple of micro_batch {mb} x grad_accum {ga}",
                "/workload/global_batch", "global_batch = micro_batch x grad_accum x data-parallel replicas")
        elif dp is None and gpus % (gb // (mb * ga)):
            rep = gb // (mb * ga)
            bad(f"global_batch / (micro_batch x grad_accum) = {rep} data-parallel replicas, which does not "
                f"divide num_gpus {gpus}", "/workload/global_batch", "check the batch sizes, or declare parallelism")
    if hw.get("fp8_fraction") is not None and hw["precision"] != "fp8":
        bad("fp8_fraction only applies to precision fp8", "/hardware/fp8_fraction", "remove it or set precision: fp8")
    if "flops_per_step" in model and region.get("covers") == "microbatch" and "grad_accum" not in wl:
        bad("an explicit flops_per_step with covers: microbatch needs grad_accum to split the step",
            "/workload", "add workload.grad_accum")
    return out


def _data_parallel(par: dict[str, Any] | None, gpus: int, bad) -> int | None:
    """Data-parallel degree from the declared parallelism, checking the GPU product."""
    if par is None:
        return None
    model_par = par.get("tensor", 1) * par.get("pipeline", 1) * par.get("context", 1)
    if "data" in par:
        if par["data"] * model_par != gpus:
            bad(f"data {par['data']} x tensor x pipeline x context ({model_par}) = {par['data'] * model_par}, "
                f"but num_gpus is {gpus}", "/parallelism", "make the product equal hardware.num_gpus")
        return par["data"]
    if gpus % model_par:
        bad(f"num_gpus {gpus} is not divisible by tensor x pipeline x context = {model_par}", "/parallelism",
            "fix the parallel degrees or num_gpus")
        return None
    return gpus // model_par
