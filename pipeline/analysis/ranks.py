"""Several trace files as one job: one file per rank (or node), measured in turn, combined in SQL.

Multi-node jobs write one export per rank. Each file is attached on one DuckDB
connection in turn and its window built exactly as a single file's is (measure.build_window:
its kernels classified against its own string table); its selected ranges are kept
(rank_collect.sql), and its classified kernels with their names too (classify_collect.sql).
The combined tables key ranks by (file, process) and devices by (file, device), because pids
and device ids repeat across hosts (rank_combine.sql); the one analysis (measure.analyse,
registry.measure_all) then runs on the combination, so every figure means what it means for
one file.

A TraceSet can also be shared by several jobs of a batch: its files are then
copied into DuckDB once (`materialize`), so each file is read once, not per job.

Given spare workers, build_files has each file's window built by a task instead (extract:
its own connection, the same queries) and collects the tables the tasks hand back
(trace/handover.py) as build_set collects its own; the combination is the same.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from pipeline import interrupts, progress
from pipeline.analysis import classes, kept_window, merged, registry
from pipeline.errors import ResultWarning
from pipeline.trace import cache
from pipeline.trace import chain, files, queries
from pipeline.job.config import FigureRow, Job
from pipeline.analysis.measure import Measurement, Window, analyse, build_window, occurrence_range_of, prepare
from pipeline.trace.open import RAW_TABLES, Trace, attach, pool_tables
from pipeline.trace.connection import connect

T = TypeVar("T")

if TYPE_CHECKING:
    from pipeline.trace import handover     # imported by the tasks that hand tables over, and their parent


@dataclass
class TraceSet:
    """Trace files on one connection; `traces[i].con` is that connection for every file."""

    con: Any
    paths: list[Path]
    traces: list[Trace] = field(default_factory=list)
    materialized: bool = False
    keep_windows: bool = False                   # one file, one job, a cache: its built window is kept there
    pooled: bool = False                         # small files, no cache: all rows in raw_*__all (open.attach pool)

    def use(self, i: int) -> Trace:
        """Point the raw_* views at file i (a no-op for a single, unmaterialized file)."""
        if self.pooled:
            for raw in RAW_TABLES:
                self.con.execute(f"CREATE OR REPLACE TEMP VIEW {raw} AS SELECT * EXCLUDE (file) FROM {raw}__all "
                                 f"WHERE file = {i:d}")
        elif self.materialized:
            for raw in RAW_TABLES:
                self.con.execute(f"CREATE OR REPLACE TEMP VIEW {raw} AS SELECT * FROM {raw}__f{i}")
        return self.traces[i]

    def close(self) -> None:
        self.con.close()

    def sha256(self) -> str:
        """One file: its SHA-256. Several: SHA-256 of their hashes in order (the set's identity)."""
        if len(self.traces) == 1:
            return self.traces[0].sha256
        return hashlib.sha256("\n".join(t.sha256 for t in self.traces).encode()).hexdigest()


def open_set(paths: list[Path], materialize: bool = False, cache_dir: Path | None = None,
             lone: bool = True, copy: bool = True) -> TraceSet:
    """Attach every file; with several files (or when several windows are built), copy each into DuckDB once.

    With a cache, each file's tables are Parquet files of the cache (built on first use), and
    per-file views over them replace the in-memory copies: nothing is read twice, nothing copied.
    A lone job's single file (`lone`: no other job on the set) keeps its built window in the cache
    too (kept_window.py). `copy` False (one file, one window built for several jobs): its entry is
    used when there is one, but none is built: the window reads every row once either way, and
    building the copy would read the file once more (cache.attach_cached `build`).
    """
    ts = TraceSet(con=connect(), paths=list(paths),
                  materialized=materialize or len(paths) > 1 or cache_dir is not None,
                  keep_windows=cache_dir is not None and lone and len(paths) == 1)
    try:
        # small files read on one DuckDB thread (as they are built, merged.py): each copy is a few thousand rows, and
        # a second thread only added CPU (64 rank files of 12,500 kernels: 2.3-2.7 CPU s against 2.9-3.2)
        small = merged.small(ts.paths)
        with merged.one_thread(ts.con) if small else nullcontext():
            if cache_dir is None and small:     # no copies per file: nine tables, not nine per file
                pool_tables(ts.con)
                ts.pooled = True
            for i, path in enumerate(ts.paths):
                _attach_file(ts, i, path, cache_dir, materialize, copy)
    except BaseException:
        ts.close()
        raise
    return ts


def _attach_file(ts: TraceSet, i: int, path: Path, cache_dir: Path | None, materialize: bool, copy: bool) -> None:
    """File i of the set attached (open_set): through its cache entry when there is one, copied in when the set is
    materialized."""
    if cache_dir is not None:
        cached = cache.attach_cached(ts.con, path, cache_dir, suffix=f"__f{i}", build=copy or len(ts.paths) > 1)
        if cached is not None:
            ts.traces.append(cached)
            return
        ts.materialized = materialize          # one file, no entry, none built: read the file itself
    trace = attach(ts.con, path, copy_as=f"__f{i}" if ts.materialized and not ts.pooled else None,
                   pool=i if ts.pooled else None)
    if ts.materialized:
        ts.con.execute("DETACH nsys")
    ts.traces.append(trace)


@dataclass
class SetMeasurement:
    """The combined measurement plus what only several files have: per-file GPUs and labels."""

    measurement: Measurement
    files: list[dict[str, Any]]                 # per file: label, sha256, versions, gpu rows, devices
    device_labels: dict[int, str]               # device id in the measurement -> what the user knows it as


@dataclass
class SetWindow:
    """The window of every file (combined when several) and how to name its ranks and devices.

    rank_of / device_of map the combined keys back to (file index, id in that file); None
    for one file, whose keys are its own ids.
    """

    window: Window
    files: list[dict[str, Any]]                 # per file: label, sha256, versions, gpu rows (devices: None yet)
    labels: list[str]
    rank_of: dict[int, tuple[int, int]] | None = None
    device_of: dict[int, tuple[int, int]] | None = None
    kept: kept_window.Kept | None = None        # one file's window kept in the cache: analysed through it


def build_set(ts: TraceSet, job: Job, rules: list[classes.Rule]) -> SetWindow:
    """Build the job's window in every file; combine the windows when there are several.

    Classifying here, while each file is in use, resolves kernel names against that file's own
    string table: ids differ per file, so the combined kernels cannot be named afterwards.
    """
    labels = [job.file_label(p) for p in ts.paths]
    params = classes.classify_params(rules)
    if (as_one := built_as_one(ts, job, params, labels)) is not None:       # small files: their SQL run once
        return as_one
    files, per = [], []
    kept = None
    for i in range(len(ts.traces)):
        with _small_on_one_thread(ts, i):
            window, kept, entry = entry_checked(ts, i, _file_builder(ts, job, params, labels[i]))
        per.append(window)
        files.append(entry)
        if len(ts.traces) > 1:
            chain.run(ts.con, {"rank_collect", "classify_collect"}, file=i)
    if len(per) == 1:
        return SetWindow(per[0], files, labels, kept=kept)
    check_occurrences(job, per, labels)
    return _combine(ts, per, files, labels)


def built_as_one(ts: TraceSet, job: Job, params: dict[str, Any], labels: list[str]) -> SetWindow | None:
    """The set's window with every small file built as one (analysis/merged.py), or None: build them one by one."""
    if (as_one := merged.build(ts, job, params, labels)) is None:
        return None
    per, gpu_rows = as_one
    check_occurrences(job, per, labels)
    return _combine(ts, per, [_file_entry(t, labels[i], gpu_rows[i]) for i, t in enumerate(ts.traces)], labels)


# Below this size, one of several files is built on one DuckDB thread (issue 34). Its window's statements (about
# 100 per file) cost a few ms of CPU each whatever their size, and a second thread only adds to that: on rank files
# of 12,500 kernels (1.1 MB) one thread took about a quarter less CPU (bench/RESULTS.md); the same reports.
ONE_THREAD_BYTES = merged.SMALL_BYTES    # the same cut as small files built as one: a copy, which tests move apart


def _small_on_one_thread(ts: TraceSet, i: int) -> AbstractContextManager[None]:
    """While file i of several is built: one DuckDB thread if it is small (ONE_THREAD_BYTES, merged.one_thread)."""
    try:
        small = len(ts.paths) > 1 and ts.paths[i].stat().st_size < ONE_THREAD_BYTES
    except OSError:
        small = False
    return merged.one_thread(ts.con) if small else nullcontext()


def _file_builder(ts: TraceSet, job: Job, params: dict[str, Any], label: str
                  ) -> Callable[[Trace], tuple[Window, kept_window.Kept | None, dict[str, Any]]]:
    """How build_set builds one file's window (through its kept window when the cache keeps one), for
    entry_checked to run again on a rebuilt cache entry."""
    def build(trace: Trace) -> tuple[Window, kept_window.Kept | None, dict[str, Any]]:
        prepare(trace)
        if ts.keep_windows and trace.cache_entry is not None:
            kept = kept_window.reuse_or_build(trace, trace.cache_entry, job.region, params)
            return kept.window, kept, _file_entry(trace, label)
        return build_window(trace, job.region, params, several=len(ts.traces) > 1), None, _file_entry(trace, label)
    return build


def entry_checked(ts: TraceSet, i: int, build: Callable[[Trace], T]) -> T:
    """`build(trace)` for file i; when a query fails on a cache entry whose pages cannot be read (its footers
    passed), once more on the entry rebuilt (cache.rebuild_damaged): a damaged cache costs a build, not the run."""
    try:
        return build(ts.use(i))
    except duckdb.Error:
        fresh = cache.rebuild_damaged(ts.con, ts.traces[i], suffix=f"__f{i}") if ts.materialized else None
        if fresh is None:
            raise
        ts.traces[i] = fresh
    return build(ts.use(i))


def check_occurrences(job: Job, per: list[Window], labels: list[str]) -> None:
    """Several files: asking for more occurrences than any process of any file has is the error
    (docs/figures.md §3, as for the processes of one file); a file with fewer is ranks missing occurrences."""
    counts = {f"{labels[i]}:{pid}": n for i, w in enumerate(per) for pid, n in w.counts_per_process.items()}
    occurrence_range_of(", ".join(labels), job.region, counts, "")


def _file_entry(trace: Trace, label: str, gpu_rows: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """What result.json's files list says of a file (its devices once analysed); `gpu_rows`: its gpu_rows.sql rows
    when already read (merged.py reads every file's at once)."""
    if not trace.has("raw_gpu"):
        gpu_rows = None
    elif gpu_rows is None:
        gpu_rows = queries.run(trace.con, "gpu_rows")
    return {"label": label, "sha256": trace.sha256, "nsys_version": trace.nsys_version,
            "export_schema_version": trace.export_schema_version, "devices": None, "gpu_rows": gpu_rows,
            "gpu_lacking": trace.lacks("GPU identification")}


# What one file's window leaves for the combination: the tables the collect files read.
HANDED = sorted(chain.header("rank_collect")[0] | chain.header("classify_collect")[0])
Submit = Callable[..., Any]                  # submit(fn, *args) -> a future (executor.pool's submit)


@dataclass
class Extracted:
    """One file's window built by a task: what build_set keeps of it, its tables packed for the parent."""

    window: Window
    entry: dict[str, Any]
    trace: Trace                                 # no connection: the parent gives it its own
    tables: dict[str, handover.Packed]


@dataclass
class Unopened:
    """A file its task could not open: in turn, every file is opened before any window is built."""

    error: Exception


def extract(path: Path, job: Job, params: dict[str, list[str]], cache_dir: Path | None) -> Extracted | Unopened:
    """Task: one file's window built on its own connection, as build_set builds it."""
    try:
        ts = open_set([path], cache_dir=cache_dir)
    except Exception as exc:  # noqa: BLE001 - reported by the parent in the order build_set meets it
        interrupts.reraise_if_pending()
        return Unopened(exc)
    try:
        def build(trace: Trace) -> tuple[Trace, Window, dict[str, Any]]:
            prepare(trace)
            window = build_window(trace, job.region, params, several=True)
            return trace, window, _file_entry(trace, job.file_label(path))
        trace, window, entry = entry_checked(ts, 0, build)
        from pipeline.trace import handover
        tables = {t: handover.pack(ts.con, t) for t in HANDED}
        # a connection cannot cross processes: None in transit, which Trace.con's type rightly refuses elsewhere;
        # build_files gives the parent's connection before the Trace is used
        detached = replace(trace, con=None, digest=trace.sha256)  # type: ignore[arg-type]
        return Extracted(window, entry, detached, tables)
    finally:
        ts.close()


def build_files(job: Job, rules: list[classes.Rule], cache_dir: Path | None,
                submit: Submit) -> tuple[TraceSet, SetWindow]:
    """build_set with each file's window built by a task of `submit`, collected and combined here; small files
    that can be built as one are built so here instead, with no task (merged.py).

    Each finished file is collected while later files still run. Errors are raised once every
    task ended, in build_set's order: an unopenable file first, then the first file (by
    position) whose window failed.
    """
    paths = job.trace_files()
    for path in paths:      # a glob matching 10,000 empty files: refused here in milliseconds, not by 10,000 tasks
        files.check_file(path)
    if (here := _small_here(job, rules, cache_dir)) is not None:
        return here
    futures = [submit(extract, p, job, classes.classify_params(rules), cache_dir) for p in paths]
    ts = TraceSet(con=connect(), paths=list(paths), materialized=True)
    try:
        done: list[Extracted | Unopened | Exception] = []
        with progress.phase("trace files", total=len(futures), unit="files") as shown:
            for i, f in enumerate(futures):
                done.append(outcome := _outcome(f))
                shown.advance()
                if isinstance(outcome, Extracted) and all(isinstance(d, Extracted) for d in done):
                    _collect(ts.con, outcome, i)
        if failed := [d for d in done if not isinstance(d, Extracted)]:
            first = min(failed, key=lambda d: not isinstance(d, Unopened))     # the earliest, unopened ones first
            raise first.error if isinstance(first, Unopened) else first
        extracted = [d for d in done if isinstance(d, Extracted)]             # every file: none failed
        ts.traces = [replace(d.trace, con=ts.con) for d in extracted]
        check_occurrences(job, [d.window for d in extracted], [job.file_label(p) for p in paths])
        return ts, _combine(ts, [d.window for d in extracted], [d.entry for d in extracted],
                            [job.file_label(p) for p in paths])
    except BaseException:
        ts.close()
        raise


def _small_here(job: Job, rules: list[classes.Rule], cache_dir: Path | None) -> tuple[TraceSet, SetWindow] | None:
    """Small files built as one here, when they can be (merged.py): their tasks would cost each file's statements
    again, and a worker's start (bench/RESULTS.md, issue 34). None: give each file a task after all."""
    paths = job.trace_files()
    if not merged.small(paths):
        return None
    try:
        ts = open_set(paths, cache_dir=cache_dir)
    except Exception:  # noqa: BLE001 - the tasks open each file and report what fails in build_set's order
        interrupts.reraise_if_pending()
        return None
    try:
        built = built_as_one(ts, job, classes.classify_params(rules), [job.file_label(p) for p in paths])
    except BaseException:
        ts.close()
        raise
    if built is None:
        ts.close()
        return None
    return ts, built


def _outcome(future: Any) -> Extracted | Unopened | Exception:
    try:
        return future.result()
    except Exception as exc:  # noqa: BLE001 - raised by build_files, after the files that failed to open
        interrupts.reraise_if_pending()
        return exc


def _collect(con: Any, e: Extracted, file: int) -> None:
    """The file's window tables as build_set leaves them on its connection, kept as build_set keeps them."""
    from pipeline.trace import handover
    with handover.as_views(con, e.tables):
        chain.run(con, {"rank_collect", "classify_collect"}, file=file)
    e.tables = {}                                 # freed once collected: hundreds of files may be waiting


def analyse_set(ts: TraceSet, built: SetWindow,
                figures: list[FigureRow]) -> tuple[SetMeasurement, dict[str, Any]]:
    """Every figure of the window tables: times, ranks, devices, then the where-the-time-goes sections.

    A kept window answers from the rows an earlier run's analysis recorded, when it asks the same (kept_window.py).
    """
    if built.kept is not None:
        return built.kept.analysed(lambda window: _analyse_set(ts, replace(built, window=window, kept=None), figures))
    return _analyse_set(ts, built, figures)


def _analyse_set(ts: TraceSet, built: SetWindow,
                 figures: list[FigureRow]) -> tuple[SetMeasurement, dict[str, Any]]:
    m = analyse(ts.con, built.window, classes.COMM_CLASS)
    rank_of = built.rank_of or {r["global_pid"]: (0, r["global_pid"]) for r in m.ranks}
    _label_ranks(m.ranks, rank_of, built.labels, m.counts_per_process)
    device_of = built.device_of or {d: (0, d) for d in m.devices_used}
    files = [{**f, "devices": [device_of[d][1] for d in m.devices_used if device_of[d][0] == i]}
             for i, f in enumerate(built.files)]
    several = len(built.labels) > 1
    labels = {d: f"{built.labels[device_of[d][0]]}:{device_of[d][1]}" if several else str(d)
              for d in m.devices_used}
    sm = SetMeasurement(m, files, labels)
    return sm, registry.measure_all(ts.traces[0], m, figures)


def _combine(ts: TraceSet, per: list[Window], files: list[dict], labels: list[str]) -> SetWindow:
    """One window of several files' collected windows, on combined rank and device keys."""
    keys = chain.run(ts.con, {"rank_combine", "classify_combine"})["rank_combine"]
    counts = {f"{labels[i]}:{pid}": n for i, w in enumerate(per) for pid, n in w.counts_per_process.items()}
    warnings: list[ResultWarning] = [{**w, "message": f"{labels[i]}: {w['message']}"}
                                     for i, win in enumerate(per) for w in win.warnings]
    window = Window(", ".join(sorted({w.attribution for w in per})), min(w.first for w in per),
                    max(w.last for w in per), counts,
                    _added([w.unattributed for w in per], ("kernel_count", "kernel_sum_ns")), warnings,
                    duplicates=_added([w.duplicates for w in per], DUPLICATES),
                    memory_duplicates=_added([w.memory_duplicates for w in per], DUPLICATES))
    return SetWindow(window, files, labels,
                     {k["key"]: (k["file"], k["original"]) for k in keys if k["kind"] == "rank"},
                     {k["key"]: (k["file"], k["original"]) for k in keys if k["kind"] == "device"})


DUPLICATES = ("rows", "duplicate_ns")


def _added(per: list[dict[int, dict[str, int]]], names: tuple[str, ...]) -> dict[int, dict[str, int]]:
    """Per-occurrence counts `names` of several files' windows (unattributed kernels, duplicate rows), added up."""
    out: dict[int, dict[str, int]] = {}
    for counts in per:
        for k, c in counts.items():
            mine = out.setdefault(k, dict.fromkeys(names, 0))
            for name in names:
                mine[name] += c[name]
    return out


def _label_ranks(ranks: list[dict], rank_of: dict[int, tuple[int, int]], labels: list[str],
                 counts: dict[str, int]) -> None:
    """Give each rank row its file and a printable rank name: the process's label in `counts` (pid, or
    pid@host when two hosts of one file share the pid), after its file's label when there are several.
    Rows are grouped by this name (rankstats), so two processes never share one."""
    several = len(labels) > 1
    for r in ranks:
        file, global_pid = rank_of[r["global_pid"]]
        prefix = f"{labels[file]}:" if several else ""
        on_host = f"{r['pid']}@{global_pid >> 48}"
        r["file"] = labels[file]
        r["rank"] = prefix + (on_host if prefix + on_host in counts else str(r["pid"]))
