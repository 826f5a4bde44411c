"""Several small trace files measured as one trace with many processes: the window's SQL once, not once per file.

A job over many rank files built each file's window in turn (ranks.build_set): about 100 DuckDB statements per
file, each costing a few ms of CPU whatever its size (planning, optimizing), so 64 files of 12,500 kernels took
6x the CPU of the same kernels in one file (issue 34, bench/RESULTS.md). Here every file's raw rows go into one
table per raw view, its process keys, device ids and string ids made unique by putting the file's index in bits
none of them uses (merge_keys.sql checks, merge_files.sql does it), the window is built once over them as over
one trace whose processes are the files' processes, and merge_split.sql hands each row its file and its own ids
back, as rank_collect.sql and classify_collect.sql leave the files built one by one: rank_combine.sql and
classify_combine.sql then combine them the same way, so the reports are the same bytes.

Only where that is sure to hold (`build` returns None otherwise, and ranks.build_set builds the files one by
one, whatever went wrong here): small files (SMALL_BYTES each, MOST_BYTES in all; a big file's statements are not
the cost, and its window can be built by a worker of its own, ranks.build_files), all with the same tables and columns, an NVTX
region, one host per file, ids that fit, every file holding the region, and a window that raised no error and
no warning (a warning is worded per file, an error names its file: building the files one by one says them as
before), and files that all place kernels in counted-FLOPs operators or none do (merged_place.sql).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import replace
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline import interrupts
from pipeline.analysis.measure import Window, build_window, places, prepare, process_counts
from pipeline.job.config import Job
from pipeline.trace import queries
from pipeline.trace.open import RAW_TABLES

if TYPE_CHECKING:
    from pipeline.analysis.ranks import TraceSet

# A file below this is small: its window's ~100 statements cost more than its rows (bench/RESULTS.md, issue 34).
SMALL_BYTES = 8 << 20
# At most this many files in one UNION ALL per raw view, and this many bytes in all (their rows are held in DuckDB
# while built as one: raw_*__all, and with a cache each file's Parquet copy too, kept for building them one by one
# should this fail): beyond, the files are built one by one.
MOST_FILES = 512
MOST_BYTES = 256 << 20
KEY_BITS = 48                         # where merge_files.sql puts the file in a process key (merge_keys.sql)
LOW = (1 << KEY_BITS) - 1


def small(paths: Sequence[Path]) -> bool:
    """Several files, every one below SMALL_BYTES: worth building as one (and not by a worker each: batch.py)."""
    if not 1 < len(paths) <= MOST_FILES:
        return False
    try:
        sizes = [os.stat(p).st_size for p in paths]
    except OSError:
        return False
    return max(sizes) < SMALL_BYTES and sum(sizes) <= MOST_BYTES


def build(ts: TraceSet, job: Job, params: dict[str, Any],
          labels: list[str]) -> tuple[list[Window], list[list[dict[str, Any]]]] | None:
    """Each file's Window and GPU rows (gpu_rows.sql's), with the window tables collected as build_set collects
    them; None when the files cannot be built as one (see the module's docstring): build them one by one."""
    first = ts.traces[0] if ts.traces else None
    if (first is None or job.region.kind != "nvtx" or not ts.materialized or not small(ts.paths)
            or any(t.tables.keys() != first.tables.keys() or t.columns != first.columns or t.lacking
                   for t in ts.traces)):
        return None
    try:
        with one_thread(ts.con):
            built = _build(ts, job, params, labels)
    except Exception:  # noqa: BLE001 - whatever failed here, building the files one by one says it as it should
        interrupts.reraise_if_pending()
        built = None
    if built is None and not ts.pooled:   # the copies _build made (up to MOST_BYTES) are not held while one by one
        for raw in RAW_TABLES:
            ts.con.execute(f"DROP TABLE IF EXISTS {raw}__all")
    return built


def _build(ts: TraceSet, job: Job, params: dict[str, Any],
           labels: list[str]) -> tuple[list[Window], list[list[dict[str, Any]]]] | None:
    con, n = ts.con, len(ts.traces)
    # the files' rows with their index in one table per raw view (pooled files are in such tables already), which
    # merge_files.sql's views read: copied once, not read through a union of every file's copy at each statement
    for raw in RAW_TABLES if not ts.pooled else ():
        con.execute(f"CREATE OR REPLACE TEMP TABLE {raw}__all AS "
                    + " UNION ALL ".join(f"SELECT {i} AS file, * FROM {raw}__f{i}" for i in range(n)))
    fits = queries.run(con, "merge_keys")[0]
    if not (fits["files"] == n and fits["one_host_each"] and fits["devices_fit"] and fits["strings_fit"]):
        return None
    hosts = dict(con.execute("SELECT file, host FROM merged_keys").fetchall())
    queries.run(con, "merge_files")
    trace = replace(ts.traces[0], notes=[])
    prepare(trace)
    per_file: list[dict[str, int]] = [{} for _ in range(n)]

    def counted(rows: list[dict[str, Any]]) -> dict[str, int]:
        """Each file's processes counted as its own window counts them (measure.process_counts), on its keys."""
        mine: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        for r in rows:                          # one pass, each row to its file (bits 48+), on its own key
            if r["global_pid"] is not None:
                i = r["global_pid"] >> KEY_BITS
                mine[i].append({**r, "global_pid": r["global_pid"] & LOW | hosts[i] << KEY_BITS})
        per_file[:] = [process_counts(m) for m in mine]
        return {f"{labels[i]}:{k}": v for i, counts in enumerate(per_file) for k, v in counts.items()}

    def placing(place: bool) -> None:
        """Every file's own window would place kernels in operators as this one does (merged_place.sql), or none:
        operator_work.sql's rows are then the files' rows summed, which counted_flops.sql sums anyway."""
        mine = {r["file"]: places(r) for r in queries.run(con, "merged_place")}
        if any(mine.get(i, False) != place for i in range(n)):
            raise NotAsOne("the files differ in whether kernels are placed in operators")
    window = build_window(trace, job.region, params, several=True, counted=counted, placing=placing)
    if window.warnings or not all(per_file):
        return None
    split = queries.run(con, "merge_split")[0]
    if split["lost_kernels"] or split["lost_ranges"]:
        return None
    return _windows(window, per_file, job), _gpu_rows(ts, n)


def _windows(window: Window, per_file: list[dict[str, int]], job: Job) -> list[Window]:
    """One Window per file, as its own build would leave it: its counts and last occurrence; the per-occurrence
    counts (unattributed kernels, copies) are the files' sums, which ranks._combine adds up, so given once."""
    return [Window(window.attribution, window.first, job.region.last if job.region.last is not None
                   else max(counts.values()), counts, window.unattributed if i == 0 else {}, [],
                   duplicates=window.duplicates if i == 0 else {},
                   memory_duplicates=window.memory_duplicates if i == 0 else {})
            for i, counts in enumerate(per_file)]


def _gpu_rows(ts: TraceSet, n: int) -> list[list[dict[str, Any]]]:
    """Each file's gpu_rows.sql rows, from one query over all of them."""
    out: list[list[dict[str, Any]]] = [[] for _ in range(n)]
    if ts.traces[0].has("raw_gpu"):
        for r in queries.run(ts.con, "merged_gpu_rows"):
            out[r["file"]].append({k: v for k, v in r.items() if k != "file"})
    return out


class NotAsOne(Exception):
    """These files cannot be built as one (build returns None)."""


@contextmanager
def one_thread(con: Any) -> Iterator[None]:
    """Small files' window on one DuckDB thread, as ranks builds each small file's, and read on one (ranks.open_set):
    their statements are many and short, and a second thread only adds CPU."""
    before = int(con.execute("SELECT current_setting('threads')").fetchone()[0])
    con.execute("SET threads = 1")
    try:
        yield
    finally:
        con.execute(f"SET threads = {before}")
