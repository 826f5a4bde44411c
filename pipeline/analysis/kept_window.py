"""A built window kept in the trace's cache entry, so a warm run skips building it (issue #10).

Building the window (measure.build_window: selection, attribution, memory operations,
classification) and its one union pass (window_unions.sql) are most of a warm run's work;
the analyses read only `selected_ranges`, `classified` and `kernel_names` (window_trim.sql
drops the rest), the union pass's `window_unions` and `class_ids`, `name_times`, and the
`Window` record. Those are kept under the trace's cache entry, in `windows/<key>/`: the tables
in a DuckDB file (types and row order exactly as made) and the record as JSON; the window
comes back with `made` naming the two analyses whose tables it holds, as a shared window
does (analysis/sharing.py). The key is
everything the build reads besides the trace content, which the entry already stands for
(trace/cache.py): the trace's path, the region (name, match, domain, attribution, first and
last occurrence asked for), classify.sql's parameters (job class rules, shipped class rules,
precision rules: their patterns, so an edited rules file is another key), and the text of
the code that builds (the SQL files and the Python that orders them), so a changed query
never reads a window its predecessor built.

Only a lone job on its trace keeps and reuses windows (ranks.open_set `keep_windows`): the
jobs of a batch on one trace already share one build (analysis/sharing.py), and one folder per
job window would grow the cache by a window per job. A kept window is written like a cache
entry (a temporary folder renamed into place), and one that cannot be read is built again
with a warning, never trusted or crashed on. Each job run on a trace adds a window, so only
the KEPT most recently used stay.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb

from pipeline.analysis import classes
from pipeline.analysis.measure import WINDOW_MADE, Window, build_inputs, build_window
from pipeline.trace import chain
from pipeline.trace.cache import build_in_place, literal
from pipeline.job.config import Region
from pipeline.trace.open import Trace

FORMAT = 1                     # bump when what is kept changes meaning
TABLES = ("selected_ranges", "classified", "kernel_names", "class_ids", "window_unions", "name_times")
DATABASE, RECORD = "window.duckdb", "window.json"
BUILD_CODE = ("measure.py", "classes.py", "kept_window.py")     # analysis modules whose code shapes a window
KEPT = 8                       # windows kept per trace, the most recently used (about 10 MB each at 0.8 M kernels)


def reuse_or_build(trace: Trace, entry: Path, region: Region, params: dict[str, Any]) -> Window:
    """The window of `region` on the trace's connection: read from `entry` when kept there, else built and kept."""
    folder = entry / "windows" / key(trace.path, region, params)
    window = _load(trace.con, folder)
    if window is not None:
        _used(folder)
        return window
    window = replace(build_window(trace, region, params), made=WINDOW_MADE)
    chain.run(trace.con, WINDOW_MADE, comm_class=classes.COMM_CLASS)
    try:
        _store(trace.con, folder, window)
    except (OSError, duckdb.Error) as exc:        # a full or read-only cache costs the next run a build, nothing else
        print(f"warning: could not keep the built window in {folder} ({exc}); the next run builds it again",
              file=sys.stderr)
    _used(folder)
    _prune(folder.parent)
    return window


def key(path: Path, region: Region, params: dict[str, Any]) -> str:
    """What the build reads besides the trace content, as a folder name."""
    what = {"format": FORMAT, "code": _code_digest(), "trace": str(Path(path).resolve()),
            "build": build_inputs(region, params), "occurrences": [region.first, region.last]}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:24]


@cache
def _code_digest() -> str:
    """SHA-256 of the SQL files and the analysis modules that build a window: a changed query is a new key."""
    digest = hashlib.sha256()
    sql = resources.files("pipeline.trace").joinpath("sql")
    for f in sorted(sql.iterdir(), key=lambda f: f.name):
        if f.name.endswith(".sql"):
            digest.update(f.name.encode() + b"\0" + f.read_bytes())
    here = resources.files("pipeline.analysis")
    for name in BUILD_CODE:
        digest.update(name.encode() + b"\0" + here.joinpath(name).read_bytes())
    return digest.hexdigest()


def _load(con: duckdb.DuckDBPyConnection, folder: Path) -> Window | None:
    """The kept window's tables on `con` and its record; None when not kept or damaged (then removed, with a warning)."""
    if not folder.exists():
        return None
    try:
        record = json.loads((folder / RECORD).read_text())
        if record.get("format") != FORMAT:
            raise ValueError(f"format {record.get('format')}, not {FORMAT}")
        window = Window(record["attribution"], record["first"], record["last"], dict(record["counts_per_process"]),
                        {k: u for k, u in record["unattributed"]}, record["warnings"], WINDOW_MADE)
        _read_tables(con, folder / DATABASE)
        return window
    except (OSError, ValueError, KeyError, TypeError, duckdb.Error) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"warning: kept window {folder} is damaged ({reason}); building it again", file=sys.stderr)
        shutil.rmtree(folder, ignore_errors=True)
        return None


def _read_tables(con: duckdb.DuckDBPyConnection, database: Path) -> None:
    if not database.is_file():
        raise OSError(f"{DATABASE} is missing")
    _copy(con, database, "CREATE OR REPLACE TEMP TABLE {table} AS SELECT * FROM kept_window.{table}", "(READ_ONLY)")


def _copy(con: duckdb.DuckDBPyConnection, database: Path, statement: str, mode: str = "") -> None:
    """`statement` for each kept table, with the DuckDB file `database` attached as kept_window."""
    con.execute(f"ATTACH {literal(database)} AS kept_window {mode}")
    try:
        for table in TABLES:
            con.execute(statement.format(table=table))
    finally:
        con.execute("DETACH kept_window")


def _store(con: duckdb.DuckDBPyConnection, folder: Path, window: Window) -> None:
    """The window's tables and record into `folder`, built beside it and renamed into place (never half-written)."""
    def fill(tmp: Path) -> None:
        tmp.mkdir()
        _copy(con, tmp / DATABASE, "CREATE TABLE kept_window.{table} AS SELECT * FROM {table}")
        record = {"format": FORMAT, "attribution": window.attribution, "first": window.first, "last": window.last,
                  "counts_per_process": list(window.counts_per_process.items()),
                  "unattributed": list(window.unattributed.items()), "warnings": window.warnings}
        (tmp / RECORD).write_text(json.dumps(record, indent=1) + "\n")
    build_in_place(folder, fill, RECORD)


def _used(folder: Path) -> None:
    """Recently used: the last to go (_prune). The clock's own nanoseconds, not the file system's coarser tick."""
    now = time.time_ns()
    with contextlib.suppress(OSError):
        os.utime(folder, ns=(now, now))


def _prune(windows: Path) -> None:
    """Only the KEPT most recently used windows stay: each job (region, occurrences, rules) run on a trace adds one."""
    with contextlib.suppress(OSError):
        kept = [f for f in windows.iterdir() if not f.name.startswith(".") and f.is_dir()]
        for old in sorted(kept, key=lambda f: f.stat().st_mtime_ns, reverse=True)[KEPT:]:
            shutil.rmtree(old, ignore_errors=True)
