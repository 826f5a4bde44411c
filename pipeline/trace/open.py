"""Open an Nsight Systems SQLite export read-only in DuckDB and expose it as fixed raw views.

This is the only module that knows how exports differ between versions: table
name suffixes, columns added or missing, the renamed metadata table. It maps
whatever the file holds onto `raw_*` views with one fixed set of columns
(NULL where the export lacks a column, empty where it lacks a table), so every
query in `pipeline/trace/sql/` is plain SQL over stable names.

The connection it attaches a trace to comes from connection.py: the one place that loads DuckDB's
SQLite scanner, from the pinned `duckdb-extension-sqlite` wheel, never from the network.
"""

from __future__ import annotations

import re
import shutil
import weakref
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from pipeline.trace import files
from pipeline.trace.connection import connect
from pipeline.errors import TraceError, environment_error

# raw view -> (export table, [(column, duckdb type)]). Only these columns are read.
RAW_TABLES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "raw_strings": ("StringIds", [("id", "BIGINT"), ("value", "VARCHAR")]),
    "raw_kernel": ("CUPTI_ACTIVITY_KIND_KERNEL", [
        ("start", "BIGINT"), ("end", "BIGINT"), ("deviceId", "BIGINT"),
        ("streamId", "BIGINT"), ("correlationId", "BIGINT"), ("globalPid", "BIGINT"),
        ("shortName", "BIGINT"), ("demangledName", "BIGINT"), ("graphId", "BIGINT"),
        ("graphNodeId", "BIGINT")]),
    # One row per CUDA graph launch when captured with --cuda-graph-trace=graph (the graph's
    # kernels are then absent from the kernel table; docs/figures.md §4).
    "raw_graph_trace": ("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", [
        ("start", "BIGINT"), ("end", "BIGINT"), ("deviceId", "BIGINT"), ("streamId", "BIGINT"),
        ("correlationId", "BIGINT"), ("globalPid", "BIGINT"), ("graphId", "BIGINT"),
        ("graphExecId", "BIGINT")]),
    "raw_runtime": ("CUPTI_ACTIVITY_KIND_RUNTIME", [
        ("start", "BIGINT"), ("end", "BIGINT"), ("globalTid", "BIGINT"),
        ("correlationId", "BIGINT"), ("nameId", "BIGINT")]),
    "raw_nvtx": ("NVTX_EVENTS", [
        ("start", "BIGINT"), ("end", "BIGINT"), ("eventType", "BIGINT"),
        ("text", "VARCHAR"), ("textId", "BIGINT"), ("globalTid", "BIGINT"),
        ("domainId", "BIGINT"), ("jsonText", "VARCHAR")]),
    "raw_gpu": ("TARGET_INFO_GPU", [
        ("id", "BIGINT"), ("name", "VARCHAR"), ("chipName", "VARCHAR"),
        ("totalMemory", "BIGINT"), ("memoryBandwidth", "BIGINT"),
        ("smCount", "BIGINT"), ("clockRate", "BIGINT"), ("cuDevice", "BIGINT")]),
    "raw_processes": ("PROCESSES", [("globalPid", "BIGINT"), ("pid", "BIGINT"), ("name", "VARCHAR")]),
    "raw_memcpy": ("CUPTI_ACTIVITY_KIND_MEMCPY", [
        ("start", "BIGINT"), ("end", "BIGINT"), ("deviceId", "BIGINT"), ("streamId", "BIGINT"),
        ("correlationId", "BIGINT"), ("globalPid", "BIGINT"), ("bytes", "BIGINT")]),
    "raw_memset": ("CUPTI_ACTIVITY_KIND_MEMSET", [
        ("start", "BIGINT"), ("end", "BIGINT"), ("deviceId", "BIGINT"), ("streamId", "BIGINT"),
        ("correlationId", "BIGINT"), ("globalPid", "BIGINT"), ("bytes", "BIGINT")]),
}

# The raw views whose rows are GPU work: views.sql's `kernels` is their union, so a trace with either measures,
# and one without the other reads it as an empty view (Nsight Systems creates a table only when it has rows: an
# inference server that ran every kernel in a CUDA graph, captured at graph level, has no kernel table).
GPU_WORK = ("raw_kernel", "raw_graph_trace")

# What each table must have, checked once as the trace is opened (issue 33: a kernel table without correlationId
# was measured as a capture whose kernels all lay outside the region). Without an ESSENTIAL column, or without
# every column of a NAMES pair, a present table is unusable and treated as absent, its reason kept in
# Trace.lacking; a run refuses a trace for those of REFUSED (exit 4), and takes a runtime table lacking one as
# absent (attribution by time window, with a warning saying why).
ESSENTIAL = {
    "raw_strings": {"id", "value"},
    "raw_kernel": {"start", "end", "deviceId"},
    "raw_graph_trace": {"start", "end", "deviceId"},
    "raw_runtime": {"start", "end", "correlationId", "globalTid"},
    "raw_nvtx": {"start", "end", "eventType", "globalTid"},
}
NAMES = {"raw_kernel": {"shortName", "demangledName"}, "raw_nvtx": {"text", "textId"}}     # one of each is enough
REFUSED = ("raw_strings", "raw_nvtx", *GPU_WORK)
# Columns only one use of a table needs: the table is read, and that use asks Trace.lacks before it starts.
NEEDED_FOR = {
    "launch attribution": {"raw_kernel": ("correlationId",), "raw_graph_trace": ("correlationId",)},
    "GPU identification": {"raw_gpu": ("name",)},
    "time per CUDA stream": {"raw_kernel": ("streamId",), "raw_graph_trace": ("streamId",)},
}
RE_EXPORT = "export the report again with `nsys export --type sqlite`"


@dataclass
class Trace:
    """An attached export: the connection, what it holds, and how it was identified."""

    path: Path
    con: duckdb.DuckDBPyConnection
    tables: dict[str, str]                       # raw view -> export table name used
    columns: dict[str, set[str]]                 # raw view -> columns present in the file
    nsys_version: str | None = None
    export_schema_version: str | None = None
    digest: str | files.Hashing = ""             # SHA-256 of the file, or its computation still running
    notes: list[str] = field(default_factory=list)
    cache_entry: Path | None = None              # the Parquet cache entry the raw views read (trace/cache.py)
    lacking: dict[str, str] = field(default_factory=dict)   # raw view -> why its table, present, is unusable

    @property
    def sha256(self) -> str:
        """The file's SHA-256 (provenance in result.json); finishes the hash started at attach."""
        if isinstance(self.digest, files.Hashing):
            self.digest = self.digest.result()
        return self.digest

    def has(self, raw: str) -> bool:
        return raw in self.tables

    def has_column(self, raw: str, column: str) -> bool:
        return column in self.columns.get(raw, set())

    def refusals(self, views: Collection[str] = REFUSED) -> list[str]:
        """Why a run refuses this trace: each of `views` present but lacking a column every export has."""
        return [self.lacking[raw] for raw in views if raw in self.lacking]

    def lacks(self, purpose: str) -> str | None:
        """What the trace's tables lack for `purpose` (NEEDED_FOR), naming each table and column, or None."""
        gaps = [f"its {self.tables[raw]} table has no {column} column" for raw, columns in NEEDED_FOR[purpose].items()
                if self.has(raw) for column in columns if not self.has_column(raw, column)]
        return (f"{' and '.join(gaps)}, which {purpose} needs and every Nsight Systems export has (a file edited "
                f"or written by another tool?); {RE_EXPORT}") if gaps else None

    def gpu_work(self) -> list[str]:
        """The GPU_WORK views whose export table is present: none means no GPU work was captured."""
        return [raw for raw in GPU_WORK if self.has(raw)]


def open_trace(path: str | Path) -> Trace:
    """Attach `path` read-only, check it is an Nsight Systems export, and build the raw views."""
    con = connect()
    try:
        return attach(con, path)
    except BaseException:
        con.close()
        raise


def attach(con: duckdb.DuckDBPyConnection, path: str | Path, copy_as: str | None = None,
           pool: int | None = None) -> Trace:
    """Attach `path` as `nsys` on an existing connection (several files share one, in turn).

    `copy_as` (a suffix): the raw rows are copied into temp tables `raw_*<suffix>` instead of read through views,
    and checked there (integrity.check); the caller detaches the file and points the raw views at them
    (ranks.open_set, several files). One statement per table, not a view and then its copy: with 64 small files
    the views were a sixth of opening them (issue 34). `pool` (the file's index among several small ones): its rows
    are appended to the tables `raw_*__all` (pool_tables) with that index in their `file` column instead, so the
    catalog holds nine tables, not nine per file, and nothing is copied for a table the file lacks."""
    path = Path(path)
    files.check_file(path)
    source = files.rollback_copy(path) if files.wal_header(path) else path
    try:
        con.execute(f"ATTACH {literal(source)} AS nsys (TYPE sqlite, READ_ONLY)")
        present, nullable = _export_columns(con)
    except duckdb.Error as exc:
        if environment_error(exc) is not None:         # out of memory: the machine's limit, not the trace (exit 2)
            raise
        reason = re.sub(r'^Failed to prepare query ".*": ', "", _first_line(exc))    # DuckDB's own schema query
        hint = next((f"; {h}" for said, h in _ATTACH_HINTS.items() if said in reason), "")
        raise TraceError(f"{path}: cannot be read as SQLite ({reason}){hint}") from exc
    if not any(t in present for t in ("StringIds", "NVTX_EVENTS", "TARGET_INFO_GPU")) and not any(
            t.startswith("CUPTI_ACTIVITY_KIND_") for t in present):
        raise TraceError(f"{path}: an SQLite file, but not an Nsight Systems export (no StringIds, "
                         "NVTX_EVENTS or CUPTI_ACTIVITY_KIND_* tables); create one with "
                         "`nsys export --type sqlite report.nsys-rep`")
    trace = Trace(path=path, con=con, tables={}, columns={}, digest=files.Hashing(path))
    if source != path:                            # the private copy lives as long as the trace using it
        weakref.finalize(trace, shutil.rmtree, source.parent, True)
    for raw, (table, cols) in RAW_TABLES.items():
        _make_raw_view(trace, present, raw, table, cols, copy_as, pool)
    trace.nsys_version, trace.export_schema_version = _versions(con, present)
    from pipeline.trace import integrity          # it names tables with open's resolve_table
    integrity.check(trace, nullable, lambda raw: raw + (copy_as or "") if pool is None
                    else f"(SELECT * FROM {raw}__all WHERE file = {pool:d})")
    return trace


def pool_tables(con: duckdb.DuckDBPyConnection) -> None:
    """The empty tables `raw_*__all` that attach(pool=i) appends each small file's rows to: a `file` column, then
    the raw view's columns (what analysis/merged.py builds as one, and ranks.TraceSet.use reads one file of)."""
    for raw, (_, cols) in RAW_TABLES.items():
        con.execute(f"CREATE OR REPLACE TEMP TABLE {raw}__all (file INTEGER, "
                    + ", ".join(f"{_quote(c)} {t}" for c, t in cols) + ")")


# What to do about what SQLite says when the file cannot even be attached.
_ATTACH_HINTS = {
    "database is locked": "another program holds a lock on it (an export or copy still writing it?): run again "
                          "when it has finished",
    "malformed": "the file is damaged: copy or export it again",
    "not a database": "the file is damaged: copy or export it again",
}


def _export_columns(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, set[str]], set[tuple[str, str]]]:
    """The attached file's columns by table, and its (table, time column) pairs that allow NULL (integrity.check):
    one listing of the catalog, which lists every table of the connection (each small file's copies too, so with 64
    files the 64th listing took 3.5x the first), not one here and one for the check (issue 34)."""
    rows = con.execute("SELECT table_name, column_name, is_nullable FROM duckdb_columns() "
                       "WHERE database_name = 'nsys'").fetchall()
    out: dict[str, set[str]] = {}
    for table, column, _ in rows:
        out.setdefault(table, set()).add(column)
    return out, {(table, column) for table, column, null in rows if null and column in ("start", "end")}


def resolve_table(present: Collection[str], name: str) -> str | None:
    """Exact name first, then the highest numeric `_V<n>` suffix (docs/figures.md §2)."""
    if name in present:
        return name
    suffixed = [(int(m.group(1)), t) for t in present
                if (m := re.fullmatch(re.escape(name) + r"_V(\d+)", t))]
    return max(suffixed)[1] if suffixed else None


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _make_raw_view(trace: Trace, present: dict[str, set[str]], raw: str, table: str,
                   cols: list[tuple[str, str]], copy_as: str | None = None, pool: int | None = None) -> None:
    """Map an export table onto fixed columns; identifiers only, never values, are spliced. `copy_as`: into a temp
    table `raw` + copy_as instead of the view `raw`; `pool`: appended to `raw`__all with that file index (attach)."""
    actual = resolve_table(present, table)
    have = present.get(actual, set()) if actual else set()
    names = NAMES.get(raw, set())
    nameless = bool(names) and not names & have
    missing = sorted(ESSENTIAL.get(raw, set()) - have) + (sorted(names) if nameless else [])
    if actual and missing:
        trace.notes.append(f"{actual} lacks columns {missing}; treated as absent")
        either = f" (one of {sorted(names)} would do)" if nameless else ""
        trace.lacking[raw] = (f"its {actual} table lacks columns {missing}{either}, which every Nsight Systems "
                              f"export has (a file edited or written by another tool?); {RE_EXPORT}")
        actual, have = None, set()
    select = ", ".join(
        f"{_column(c, t)} AS {_quote(c)}" if c in have else f"CAST(NULL AS {t}) AS {_quote(c)}" for c, t in cols)
    source = f"nsys.{_quote(actual)}" if actual else "(SELECT 1) AS empty WHERE false"
    if pool is not None:
        if actual:                              # a table the file lacks adds no rows
            trace.con.execute(f"INSERT INTO {raw}__all SELECT {pool:d} AS file, {select} FROM {source}")
    else:
        made = f"TEMP TABLE {raw}{copy_as}" if copy_as is not None else f"TEMP VIEW {raw}"
        trace.con.execute(f"CREATE OR REPLACE {made} AS SELECT {select} FROM {source}")
    if actual:
        trace.tables[raw] = actual
        trace.columns[raw] = {c for c, _ in cols if c in have}


def _column(name: str, duckdb_type: str) -> str:
    """A column of the export as `duckdb_type`. Text that is not UTF-8 (SQLite stores the bytes it is given,
    e.g. an NVTX name pushed as Latin-1) becomes 'not UTF-8: 0x<hex>': as it is, DuckDB refuses it wherever
    it is printed (an internal error, exit 5). RE2's '.' matches only whole UTF-8 characters."""
    value = f"CAST({_quote(name)} AS {duckdb_type})"
    if duckdb_type != "VARCHAR":
        return value
    return f"CASE WHEN regexp_full_match({value}, '(?s).*') THEN {value} ELSE 'not UTF-8: 0x' || hex({value}) END"


def _versions(con: duckdb.DuckDBPyConnection, present: dict[str, set[str]]) -> tuple[str | None, str | None]:
    """META_DATA_EXPORT, named EXPORT_META_DATA up to schema 3.1.7, absent in 2021 exports."""
    table = resolve_table(present, "META_DATA_EXPORT") or resolve_table(present, "EXPORT_META_DATA")
    if not table or not {"name", "value"} <= present[table]:
        return None, None
    rows = dict(con.execute(
        f"SELECT name, CAST(value AS VARCHAR) FROM nsys.{_quote(table)} "
        "WHERE name IN ('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION')").fetchall())
    return rows.get("EXPORT_PRODUCT_VERSION"), rows.get("EXPORT_SCHEMA_VERSION")


def literal(path: str | Path) -> str:
    """A path as a SQL string literal, quotes doubled: ATTACH, COPY and read_parquet take no parameters
    for it, so it is the one value spliced into SQL."""
    return "'" + str(path).replace("'", "''") + "'"


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
