"""Job files: YAML with positions -> JSON Schema -> scope-consistency checks -> a frozen Job.

Every problem in a file is collected and reported at once, each located by
file:line:col and JSON pointer, with what to write instead. The schema is the
reference documentation; the checks here are the rules a schema cannot say:
that the FLOPs numerator and the time denominator describe the same work.
"""

from __future__ import annotations

import glob
import hashlib
import os
from dataclasses import dataclass, field, replace
from collections.abc import Mapping
from functools import cached_property
from fractions import Fraction
from pathlib import Path
from typing import Any, TypedDict

from pipeline.job.documents import locate, schema_problems, with_defaults
from pipeline.job.parsing import MAX_BYTES, ValueProblem, parse_yaml
from pipeline.job.reading import NotRegular, TooLarge, read_regular
from pipeline.job.todo import covered, todo_problems
from pipeline.errors import ConfigError, Problem, TraceError, UsageError, from_current_folder

NS = 1_000_000_000
SQLITE_HEADER = b"SQLite format 3\0"      # the first 16 bytes of every SQLite database file


# The job's sections as the schema (schemas/job.schema.json) and its defaults leave them: a key with a
# default is always present, a key without one only when the file writes it (the total=False half).
class Hardware(TypedDict):
    gpu: str
    num_gpus: int
    precision: str
    peak_tflops: float | None
    hbm_gbps: float | None
    sparsity: bool
    fp8_fraction: float | None
    achievable_tflops: float | None


class _WorkloadDefaults(TypedDict):
    mode: str
    grad_accum: int
    recompute: str
    flash_recompute: bool


class Workload(_WorkloadDefaults, total=False):
    seq_len: int
    global_batch: int
    micro_batch: int
    seq_lens: list[int]
    context_len: int
    generated_tokens: int


class Thresholds(TypedDict, total=False):
    mfu_pct_wall_min: float
    hfu_pct_wall_min: float
    step_time_s_max: float


# `class` is a Python keyword, so this one is spelled as a call.
KernelClassRule = TypedDict("KernelClassRule", {"class": str, "pattern": str})


class _FigureRequired(TypedDict):
    name: str
    flops: float


class FigureRow(_FigureRequired, total=False):
    """One measured row of the roofline table (analysis.figures)."""

    kernels: str
    bytes: float


class _AnalysisDefaults(TypedDict):
    attention: str


class Analysis(_AnalysisDefaults, total=False):
    kernel_classes: list[KernelClassRule]
    figures: list[FigureRow]
    components: dict[str, str]


@dataclass(frozen=True)
class Region:
    """What delimits the measured work (docs/figures.md §3). Kind nvtx: ranges named `name`, occurrences first..last.
    Kinds gpu_active and time_window: no range, a window per process (analysis/windows.py), one occurrence whose
    kernels are every GPU row of the process inside it (window attribution); `name` is None for them."""

    name: str | None
    match: str | None
    domain: str | None
    first: int
    last: int | None
    attribution: str
    covers: str | int
    kind: str = "nvtx"
    start_s: float | None = None       # time_window: the window, seconds after the capture's start (as written)
    end_s: float | None = None

    @property
    def start_ns(self) -> int | None:
        """The window's start on the export's clock, whose 0 is the capture's start (SQL takes integer ns)."""
        return None if self.start_s is None else round(self.start_s * NS)

    @property
    def end_ns(self) -> int | None:
        return None if self.end_s is None else round(self.end_s * NS)


@dataclass(frozen=True)
class Job:
    """A validated job. `steps_per_occurrence` is the scope bridge: optimizer steps in one occurrence."""

    path: Path
    name: str
    description: str
    trace_text: str
    region: Region
    hardware: Hardware
    model: dict[str, Any]                        # model.schema.json: a preset, an architecture or explicit FLOPs
    workload: Workload
    thresholds: Thresholds
    analysis: Analysis
    steps_per_occurrence: Fraction
    sha256: str
    data: dict[str, Any] = field(repr=False, default_factory=dict)      # the document as written (no defaults)
    positions: dict[str, tuple[int, int]] = field(repr=False, default_factory=dict)
    trace_patterns: tuple[str, ...] = ()
    base: tuple[str, dict[str, tuple[int, int]]] | None = field(repr=False, default=None)   # extends:
    # (resolved model, FLOPs per step) once run.checked has checked the job: a checked job carries its numerator,
    # so run_job neither checks the job file again nor resolves the model twice
    numerator: Any = field(repr=False, default=None, compare=False)

    def trace_files(self) -> list[Path]:
        """Every trace file, globs expanded (sorted, each once): one file per rank or node.

        Expanded at run time, not load time, so `validate` needs no traces; a pattern that
        matches nothing is a trace problem (exit 4) naming the pattern.
        """
        return list(self._expanded[0])

    def repeated_trace_files(self) -> list[tuple[str, str]]:
        """Files named more than once (a symlink, a glob and a path): (the repeat, the file it is)."""
        return list(self._expanded[1])

    @cached_property
    def _expanded(self) -> tuple[list[Path], list[tuple[str, str]]]:
        """The same file reached twice is one file: two ranks from one file would double every figure.

        Expanded once per Job (a run asks several times; a glob may match 10,000 files), sorted as Paths sort
        (by parts) without Path's slow comparison."""
        out: dict[Any, Path] = {}
        repeats: list[tuple[str, str]] = []
        for text in self.trace_patterns or (self.trace_text,):
            if not glob.has_magic(text):
                found = [self.path.parent / text]
            else:
                found = sorted(self.path.parent.glob(text) if not Path(text).is_absolute() else
                               (Path(p) for p in glob.glob(text)), key=lambda p: p.parts)
            if not found:
                raise TraceError(f"{self.path}: trace pattern '{text}' matches no file (relative to the job file)")
            for path in found:
                real = _identity(path)
                if real in out:
                    repeats.append((self.file_label(path), self.file_label(out[real])))
                else:
                    out[real] = path
        return list(out.values()), repeats

    def file_label(self, path: Path) -> str:
        """A trace file as the user would write it: relative to the job file (no machine paths in reports)."""
        try:
            return os.path.relpath(path, self.path.parent)
        except ValueError:      # another drive (Windows): the name alone
            return path.name

    def problem(self, message: str, pointer: str, hint: str = "") -> Problem:
        """A problem found after loading (e.g. against the trace), still located in the job file."""
        return self.locate(Problem(message, pointer, hint=hint))

    def locate(self, problem: Problem) -> Problem:
        """Give a problem raised by a lower layer (FLOPs, hardware) this file's name and position.

        A problem that already names its own file (a broken configs/models.yaml found while resolving
        the job's preset) stays there: its pointer and line are in that file, not in the job."""
        from pipeline.job.extends import relocate
        if problem.file and problem.file != str(self.path):
            return problem
        problem.file = str(self.path)
        return relocate(locate(problem, self.positions), self.positions, self.base)


def _identity(path: Path) -> Any:
    """What makes two paths one file: device and inode (one stat, where realpath takes one per folder of the
    path: 10,000 globbed files took seconds), or the resolved path of a file that cannot be stat'ed."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return os.path.realpath(path)
    return st.st_dev, st.st_ino


def read_job_text(path: Path, hint: str = "") -> tuple[bytes, str]:
    """The file's bytes (for its hash) and text; unreadable or non-UTF-8 files are config problems.

    Read by type and size first (reading.read_regular): a FIFO or device is refused unread, and a file beyond
    MAX_BYTES is refused at that many bytes, not after reading it whole. A file that does not exist is said so,
    with the folder a relative path was looked for in, unless `hint` says where it came from (`extends:`): a
    JSON pointer or a line would point into a file there is not."""
    file = str(path)
    try:
        raw = read_regular(path, MAX_BYTES)
    except FileNotFoundError:
        where = from_current_folder() if not hint and not path.is_absolute() else ""
        raise ConfigError([Problem(f"no such job file{where}", "", file, hint=hint)]) from None
    except NotRegular as exc:
        raise ConfigError([Problem(f"cannot read job file: {exc.strerror}", "", file,
                                   hint="give the path of a YAML job file")]) from None
    except TooLarge:
        raise ConfigError([Problem(f"larger than any job or config file ({MAX_BYTES:,} bytes at most)", "", file,
                                   1, 1, "is this the right file?")]) from None
    except OSError as exc:
        raise ConfigError([Problem(f"cannot read job file ({exc.strerror})", "", file)]) from None
    if raw.startswith(SQLITE_HEADER):     # `mfu run report.sqlite`: the trace where the job file goes
        raise UsageError(f"{file}: is an SQLite file (an Nsight Systems export?), not a job file: a job file names "
                         f"the trace and says what to measure in it. Write one with `mfu init {file} -o job.yaml`, "
                         "fill in its TODOs, then `mfu run job.yaml`")
    try:
        return raw, raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[:exc.start]
        line, col = before.count(b"\n") + 1, len(before) - (before.rfind(b"\n") + 1) + 1
        raise ConfigError([Problem(f"not UTF-8 text (byte {exc.start}: 0x{raw[exc.start]:02x})", "", file, line, col,
                                   "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)")]) from None


def load_job(path: str | Path) -> Job:
    """Read and schema-check one job file; raise ConfigError listing every problem.

    The scope rules (checks.job_file.JOB_RULES) need a schema-valid document; run.run_job applies them.
    """
    from pipeline.job.extends import merge, relocate
    path = Path(path)
    file = str(path)
    raw, text = read_job_text(path)
    data: Any = None
    try:
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
        # a TODO or an absurd number already says what is wrong with that value; a duplicate key does not
        said = todos + [p for p in problems if isinstance(p, ValueProblem)]
        problems += [p for p in schema_problems(data, "job.schema.json", file, positions) if not covered(p, said)]
        problems += todos
        if problems:
            raise ConfigError([relocate(p, positions, base) for p in problems])
    except ConfigError as exc:             # what was read of the failed job, for its row in a history
        name = data.get("name") if isinstance(data, dict) else None
        exc.config_sha256 = hashlib.sha256(raw).hexdigest()
        exc.job_name = name if isinstance(name, str) and all(p.pointer != "/name" for p in exc.problems) else None
        raise
    return replace(_build(path, data, hashlib.sha256(raw).hexdigest(), positions), base=base)


def _build(path: Path, data: dict[str, Any], sha256: str, positions: dict[str, tuple[int, int]]) -> Job:
    """The Job with every default filled in from the schema (the schema is the only place they are written)."""
    full = with_defaults(data, "job.schema.json")
    region, traces = full["region"], _trace_list(data["trace"])
    return Job(
        path=path,
        name=full["name"],
        description=full["description"],
        trace_text=", ".join(traces),
        trace_patterns=tuple(traces),
        region=_region(region),
        hardware=full["hardware"],
        model=dict(data["model"]),
        workload=full["workload"],
        thresholds=full["thresholds"],
        analysis=full["analysis"],
        steps_per_occurrence=steps_per_occurrence(region["covers"], full["workload"]),
        sha256=sha256,
        data=data,
        positions=positions,
    )


def _region(region: dict[str, Any]) -> Region:
    """A window (kinds gpu_active, time_window) is one occurrence, every GPU row of a process inside it."""
    occ = region["occurrences"]
    if region["kind"] == "nvtx":
        return Region(region["name"], region["match"], region["domain"], occ["first"], occ.get("last"),
                      region["attribution"], region["covers"])
    return Region(None, None, None, 1, 1, "window", region["covers"], region["kind"], region.get("start_s"),
                  region.get("end_s"))


def _trace_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def steps_per_occurrence(covers: str | int, workload: Mapping[str, Any]) -> Fraction:
    """Optimizer steps in one occurrence: the factor that scopes per-step FLOPs to the region."""
    if covers == "microbatch":
        return Fraction(1, workload["grad_accum"])
    if covers == "step":
        return Fraction(1)
    return Fraction(int(covers))
