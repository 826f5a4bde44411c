"""Trace contents the export schema does not allow, named by table, column and row count (exit 4).

Nsight Systems writes integer nanoseconds into every start and end column, no kernel, CUDA
graph launch, runtime call or memory operation without both, and no NVTX event without a start (an
end may be NULL: marks, and pushes never popped, which the views skip). A file
that breaks this (hand-edited, written by another tool, damaged) was measured silently
wrong (NULLs) or stopped a query with DuckDB's type error, an internal error (exit 5).

- NULLs: checked when a trace is attached (`check`). NVTX starts are always checked (a
  small table); the big tables only where the file's own table definition allows NULL (Nsight
  Systems declares them NOT NULL, so its exports cost nothing here).
- Values of another type than every column read has (open.RAW_TABLES: text in an integer id, a blob in a
  name; SQLite stores whatever it is given), and times DuckDB cannot subtract (beyond ±2^62 ns): when a
  query fails, `diagnose` counts the offending rows in SQLite itself (one aggregate per table, nothing
  read into Python), the file opened read-only and immutable.
- Pages that contradict themselves (`mfu inspect --verify`, `verify_pages`): SQLite's quick_check.
"""

from __future__ import annotations

import re
import sqlite3
import urllib.parse
from pathlib import Path
from collections.abc import Callable
from typing import TypeVar

import duckdb

from pipeline.errors import TraceError
from pipeline.trace import files
from pipeline.trace.open import RAW_TABLES, Trace, resolve_table

E = TypeVar("E", bound=BaseException)

# export table -> columns that must hold integers; NULL allowed only where noted (NVTX marks have no end)
CHECKED: dict[str, tuple[tuple[str, bool], ...]] = {
    "CUPTI_ACTIVITY_KIND_KERNEL": (("start", False), ("end", False)),
    "CUPTI_ACTIVITY_KIND_RUNTIME": (("start", False), ("end", False)),
    "CUPTI_ACTIVITY_KIND_MEMCPY": (("start", False), ("end", False)),
    "CUPTI_ACTIVITY_KIND_MEMSET": (("start", False), ("end", False)),
    "CUPTI_ACTIVITY_KIND_GRAPH_TRACE": (("start", False), ("end", False)),     # GPU work too (docs/figures.md §4)
    "NVTX_EVENTS": (("start", False), ("end", True)),   # NULL end: a mark, or a push never popped
}
# Export metadata open.py reads when it attaches a trace (its product and schema versions), under either name.
METADATA = [(table, [("name", "VARCHAR"), ("value", "VARCHAR")]) for table in ("META_DATA_EXPORT", "EXPORT_META_DATA")]
# Times from any clock lie within ±2^62 ns (146 years) of its zero; beyond it, an end minus a start can leave 64 bits.
TIME_LIMIT_NS = 2 ** 62


_BIG = ("raw_kernel", "raw_graph_trace", "raw_runtime", "raw_memcpy", "raw_memset")    # trace.tables names their export tables


def check(trace: Trace, nullable: set[tuple[str, str]], rows: Callable[[str], str] = str) -> None:
    """Refuse NULL starts and ends where the schema has none (exit 4), right after attaching. `nullable`: the
    (export table, start or end) pairs the file's own table definitions allow NULL in, as open.attach listed them;
    `rows(raw view)`: where the file's rows of that view are (the view itself, or open.attach's copy of them)."""
    found = []
    try:
        for raw, table in [(r, trace.tables[r]) for r in _BIG if r in trace.tables]:
            cols = [c for c in ("start", "end") if (table, c) in nullable]
            if cols:                            # one scan of the table for both columns
                counts = trace.con.execute("SELECT " + ", ".join(f'count(*) FILTER (WHERE "{c}" IS NULL)' for c in cols)
                                           + f" FROM {rows(raw)}").fetchall()[0]      # an aggregate: one row
                found += [f"{table}.{c}: {n:,} rows are NULL" for c, n in zip(cols, counts) if n]
        if "raw_nvtx" in trace.tables:          # a NULL end is a push never popped: the views skip it
            n = trace.con.execute(f"SELECT count(*) FROM {rows('raw_nvtx')} WHERE start IS NULL").fetchall()[0][0]
            if n:
                found.append(f"{trace.tables['raw_nvtx']}.start: {n:,} rows are NULL")
    except duckdb.Error as exc:
        raise diagnose(exc, [trace.path]) or exc
    if found:
        raise TraceError(f"{trace.path}: " + "; ".join(found) + " (the export schema has a time there); "
                         "re-export the report with `nsys export --type sqlite`, or remove those rows on a copy")


def _read_only(path: Path) -> sqlite3.Connection:
    """The file in the stdlib's SQLite, read-only and immutable: no lock, no -journal, -wal or -shm beside it."""
    return sqlite3.connect("file:" + urllib.parse.quote(str(Path(path).absolute())) + "?mode=ro&immutable=1", uri=True)


def problems(path: Path) -> list[str]:
    """'TABLE.column: N rows hold text' and the like, for every column read (open.RAW_TABLES) that breaks the
    schema: each value must be of the column's type (or NULL), a time within ±TIME_LIMIT_NS, and NULL only
    where CHECKED allows it."""
    con = _read_only(path)
    try:
        present = {name: {c[1]: c[2] for c in con.execute(f'PRAGMA table_info("{name}")')}
                   for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        out = []
        for base, columns in [*RAW_TABLES.values(), *METADATA]:
            table = resolve_table(present, base)
            declared = present[table] if table else {}
            out += [f"{table}.{c}: declared {declared[c]}, where the export schema has "
                    + ("INTEGER" if kind == "BIGINT" else "TEXT") for c, kind in columns
                    if c in declared and _unreadable(declared[c], kind)]
            tests = [t for c, kind in columns if c in declared for t in _tests(base, c, kind)]
            if tests:
                counts = con.execute(f'SELECT {", ".join(sql for sql, _ in tests)} FROM "{table}"').fetchall()[0]
                out += [f"{table}.{what.format(n=n)}" for (_, what), n in zip(tests, counts) if n]
        return out
    finally:
        con.close()


def _unreadable(declared: str, kind: str) -> bool:
    """DuckDB reads a column by its declared type: a BLOB one is no integer and a REAL or INTEGER one no text,
    whatever the rows hold (SQLite's affinity rules, sqlite.org/datatype3.html §3.1)."""
    declared = declared.upper()
    if kind == "BIGINT":
        return "BLOB" in declared and "INT" not in declared
    return not any(t in declared for t in ("CHAR", "CLOB", "TEXT", "BLOB")) and declared != ""


def _tests(base: str, column: str, kind: str) -> list[tuple[str, str]]:
    """(SQL counting the rows of one column that break the schema, what it says about them)."""
    c = f'"{column}"'
    if kind != "BIGINT":
        return [(f"sum(typeof({c}) NOT IN ('text', 'null'))",
                 f"{column}: {{n:,}} rows hold a blob or a number where the export schema has text")]
    tests = [(f"sum(typeof({c}) NOT IN ('integer', 'null'))",
              f"{column}: {{n:,}} rows hold text or non-integer values")]
    if column in ("globalTid", "globalPid"):    # (pid << 24 | tid) plus a host in bits 48-62: never negative
        tests.append((f"sum(typeof({c}) = 'integer' AND {c} < 0)", f"{column}: {{n:,}} rows hold a negative id"))
    nullable = dict(CHECKED.get(base, ()))
    if column in nullable:                      # a time
        tests.append((f"sum(typeof({c}) = 'integer' AND ({c} >= {TIME_LIMIT_NS} OR {c} <= -{TIME_LIMIT_NS}))",
                      f"{column}: {{n:,}} rows hold a time beyond ±2^62 ns (146 years from the clock's zero)"))
        if not nullable[column]:
            tests.append((f"sum({c} IS NULL)", f"{column}: {{n:,}} rows are NULL"))
    return tests


def diagnose(exc: BaseException, paths: list[Path]) -> TraceError | None:
    """The trace problem behind a failed query, if the trace breaks the schema; None otherwise."""
    found = []
    for path in paths:
        try:
            found += [f"{path}: {p}" for p in problems(path)]
        except sqlite3.Error:
            continue
    if not found:
        return None
    return TraceError("; ".join(found) + " (the export schema has integer nanoseconds in time columns, integers "
                      "in ids and text in names); re-export the report with `nsys export --type sqlite`, or remove "
                      "those rows on a copy")


def explain(exc: E, paths: list[Path]) -> E | TraceError:
    """`exc`, or the trace problem behind it when a DuckDB query failed on such contents."""
    if isinstance(exc, duckdb.Error):
        return diagnose(exc, paths) or damaged(exc, paths) or exc
    if isinstance(exc, UnicodeDecodeError):      # DuckDB's error quoting a blob's bytes cannot even be decoded
        return diagnose(exc, paths) or exc
    return exc


# What SQLite says when the file's pages are not what its header and b-trees promise.
_DAMAGE = ("database disk image is malformed", "file is not a database", "disk I/O error")


def damaged(exc: BaseException, paths: list[Path]) -> TraceError | None:
    """A query failing on SQLite's damage errors after the file passed the checks at attach: the trace
    was cut short or rewritten while the run read it (a copy or an export still writing it), or is
    damaged inside. Both are the trace's problem (exit 4), not a bug."""
    said = next((s for s in _DAMAGE if s in str(exc)), None)
    if said is None:
        return None
    for path in paths:
        try:
            files.check_file(path)
        except TraceError as cut:
            return TraceError(f"{cut} (it changed while this run read it)")
    return TraceError(f"{', '.join(map(str, paths))}: SQLite says '{said}' while reading it: the file is damaged, or "
                      "was rewritten while this run read it; copy or export it again, and run when nothing writes it")


SHOWN = 5                               # quick_check's findings named in the error; it stops after as many


def verify_pages(path: Path) -> None:
    """Refuse a trace whose pages SQLite's quick_check finds inconsistent (exit 4), naming page and table.

    Bytes damaged inside a data page can leave a file SQLite reads without complaint, rows lost or values
    wrong, so a run measures it silently wrong. quick_check reads every page and record and checks the
    b-trees' structure (integrity_check adds index contents, which the pipeline never reads, for 1.0-1.2x
    the time). A value changed within a record keeps the structure and is seen by no check here, only by
    the SHA-256 compared with one taken where the trace was recorded. A full read of the file (0.9 s at 2 M
    kernels, 0.26-0.35x a cold run, 2-9x a warm one: bench/integrity_cost.py): on request only.
    """
    files.check_file(path)
    con = _read_only(path)
    try:
        try:
            said = [line for (row,) in con.execute(f"PRAGMA quick_check({SHOWN})")
                    for line in row.splitlines() if not line.startswith("*** in database")]
        except sqlite3.DatabaseError as exc:        # a page it cannot even walk
            said = [str(exc)]
        if said == ["ok"]:
            return
        found = _tables_of(con, said)
    finally:
        con.close()
    raise TraceError(f"{path}: damaged: SQLite's quick_check finds: " + "; ".join(found) + " (rows there may be lost "
                     "or hold wrong values, which a report would measure silently); copy it again from where it was "
                     "recorded, or export it again with `nsys export --type sqlite`")


def _tables_of(con: sqlite3.Connection, said: list[str]) -> list[str]:
    """quick_check's lines, each page it names followed by the table or index that page belongs to (dbstat
    walks the b-trees; when it cannot, or was left out of this SQLite, the lines stay as they are)."""
    pages = {int(n) for line in said for n in re.findall(r"\bpage (\d+)", line)}
    try:
        owner = dict(con.execute(f"SELECT pageno, name FROM dbstat WHERE pageno IN ({','.join('?' * len(pages))})",
                                 sorted(pages)).fetchall()) if pages else {}
    except sqlite3.Error:
        owner = {}
    return [re.sub(r"\bpage (\d+)", lambda m: m.group(0) + (f" (in {owner[int(m.group(1))]})"
                                                          if int(m.group(1)) in owner else ""), line) for line in said]
