"""A built window kept in the trace's cache entry, so a warm run skips building and analysing it (issue #10).

Building the window (measure.build_window: selection, attribution, memory operations,
classification) and its one union pass (window_unions.sql) are most of a warm run's work;
the analyses read only `selected_ranges`, `classified`, `kernel_names` and `operator_work` (window_trim.sql
drops the rest), the union pass's `window_unions` and `class_ids`, `name_times`, and the
`Window` record. Those are kept under the trace's cache entry, in `windows/<key>/`: the tables
in a DuckDB file (types and row order exactly as made) and the record as JSON; the window
comes back with `made` naming the two analyses whose tables it holds, as a shared window
does (analysis/sharing.py). The key is
everything the build reads besides the trace content, which the entry already stands for
(trace/cache.py): the trace's path, the region (name, match, domain, attribution, first and
last occurrence asked for), classify.sql's parameters (job class rules, shipped class rules,
precision rules: their patterns, so an edited rules file is another key), and the text of
the code that builds (the SQL files and the Python that orders and runs them, unions
included), so a changed query never reads a window its predecessor built.

The run that analyses a window records the rows each query gave it (trace/recorded.py), and
they are kept in the record too: a later run asking the same queries with the same parameters
is answered from them, and copies the tables onto its connection only when it asks for
something else (another job's figure patterns: then its calls are recorded as well). Only the
SQL's rows are kept; the Python turning them into figures runs every time.

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
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from pipeline.analysis import classes
from pipeline.analysis.measure import WINDOW_MADE, Window, build_inputs, build_window
from pipeline.trace import chain, recorded
from pipeline.trace.cache import build_in_place
from pipeline.job.config import Region
from pipeline.trace.open import Trace, literal

FORMAT = 8                     # bump when what is kept changes meaning (2: the analysis's rows, the
                               # database's size; 3: the window's duplicate kernel rows; 4: its hosts;
                               # 5: its duplicate memory rows; 6: its counted FLOPs, operator_work;
                               # 7: classified's stream_id; 8: its comm_key)
TABLES = ("selected_ranges", "classified", "kernel_names", "class_ids", "window_unions", "name_times",
          "operator_work")
DATABASE, RECORD = "window.duckdb", "window.json"
BUILD_CODE = ("analysis/measure.py", "analysis/trace_warnings.py", "analysis/classes.py",   # code shaping a window
              "analysis/windows.py", "analysis/kept_window.py", "trace/queries.py", "trace/unions.py", "trace/chain.py")
KEPT = 8                       # windows kept per trace, the most recently used (about 10 MB each at 0.8 M kernels)
T = TypeVar("T")


@dataclass
class Kept:
    """A window kept in (or just built into) the cache: its record, and the rows its analysis asked for.

    The tables are copied onto the connection only when an analysis needs them: a run asking
    what the recording run asked is answered from `calls` (trace/recorded.py) without them.
    """

    trace: Trace
    folder: Path
    region: Region
    params: dict[str, Any]
    window: Window
    loaded: bool                               # the tables are on the trace's connection
    calls: dict[str, str] = field(default_factory=dict)

    def analysed(self, analyse: Callable[[Window], T]) -> T:
        """`analyse(window)`, answered from the recorded rows when they cover it, else run on the tables and recorded."""
        if self.calls:
            try:
                with recorded.replaying(self.calls):
                    return analyse(self.window)
            except (recorded.NotRecorded, duckdb.CatalogException):   # the latter: SQL run around queries.run
                pass
        self._load_tables()
        with recorded.recording() as rec:
            out = analyse(self.window)
        if rec.keepable and rec.calls.keys() - self.calls.keys():
            self.calls = {**self.calls, **rec.calls}
            _keep_calls(self.folder, self.calls)
        return out

    def _load_tables(self) -> None:
        """The kept tables onto the connection; a database that cannot be read is built again, as by _load."""
        if self.loaded:
            return
        try:
            _read_tables(self.trace.con, self.folder / DATABASE)
        except (OSError, duckdb.Error) as exc:
            _damaged(self.folder, exc)
            self.window, self.calls = _build_and_keep(self.trace, self.folder, self.region, self.params), {}
        self.loaded = True


def reuse_or_build(trace: Trace, entry: Path, region: Region, params: dict[str, Any]) -> Kept:
    """The window of `region`: its record read from `entry` when kept there (tables on demand), else built and kept."""
    folder = entry / "windows" / key(trace.path, region, params)
    found = _load(folder)
    if found is None:
        return Kept(trace, folder, region, params, _build_and_keep(trace, folder, region, params), loaded=True)
    _used(folder)
    window, calls = found
    return Kept(trace, folder, region, params, window, loaded=False, calls=calls)


def _build_and_keep(trace: Trace, folder: Path, region: Region, params: dict[str, Any]) -> Window:
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
    package = resources.files("pipeline")
    for name in BUILD_CODE:
        digest.update(name.encode() + b"\0" + package.joinpath(name).read_bytes())
    return digest.hexdigest()


def _load(folder: Path) -> tuple[Window, dict[str, str]] | None:
    """The kept window's record and recorded rows; None when not kept or damaged (then removed, with a warning).

    Its tables are copied later, if an analysis needs them (Kept.analysed); the database's size
    as written must match, so a truncated or overwritten one is found here already.
    """
    if not folder.exists():
        return None
    try:
        record = json.loads((folder / RECORD).read_text())
        if record.get("format") != FORMAT:
            raise ValueError(f"format {record.get('format')}, not {FORMAT}")
        window = Window(record["attribution"], record["first"], record["last"], dict(record["counts_per_process"]),
                        {k: u for k, u in record["unattributed"]}, record["warnings"], WINDOW_MADE,
                        {k: d for k, d in record["duplicates"]}, {k: d for k, d in record["memory_duplicates"]},
                        record["hosts"])
        if not (folder / DATABASE).is_file():
            raise OSError(f"{DATABASE} is missing")
        if (folder / DATABASE).stat().st_size != record["database_bytes"]:
            raise ValueError(f"{DATABASE} is not the size it was written with")
        return window, dict(record.get("calls", {}))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        _damaged(folder, exc)
        return None


def _damaged(folder: Path, exc: Exception) -> None:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    print(f"warning: kept window {folder} is damaged ({reason}); building it again", file=sys.stderr)
    shutil.rmtree(folder, ignore_errors=True)


def _read_tables(con: duckdb.DuckDBPyConnection, database: Path) -> None:
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
                  "unattributed": list(window.unattributed.items()), "warnings": window.warnings,
                  "duplicates": list(window.duplicates.items()),
                  "memory_duplicates": list(window.memory_duplicates.items()), "hosts": window.hosts,
                  "database_bytes": (tmp / DATABASE).stat().st_size}
        (tmp / RECORD).write_text(json.dumps(record, indent=1) + "\n")
    build_in_place(folder, fill, RECORD)


def _keep_calls(folder: Path, calls: dict[str, str]) -> None:
    """The analysis's recorded rows added to the record (a new file renamed over it: readers see one or the other).

    Nothing when the window itself could not be kept (_build_and_keep said so already)."""
    if not (folder / RECORD).is_file():
        return
    try:
        record = json.loads((folder / RECORD).read_text())
        tmp = folder / f".{RECORD}.{os.getpid()}"
        tmp.write_text(json.dumps({**record, "calls": calls}, indent=1) + "\n")
        os.replace(tmp, folder / RECORD)
    except (OSError, ValueError) as exc:           # the next run analyses the tables again, nothing else
        print(f"warning: could not keep the analysis in {folder} ({exc})", file=sys.stderr)


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
