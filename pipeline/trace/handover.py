"""A DuckDB table carried to another process as numpy columns (a multi-file job's per-file rows).

Each file of a multi-file job can be measured by a worker on its own connection
(analysis/ranks.extract); its result tables travel back pickled and are rebuilt on the
parent's connection. The columns are read from the table itself (DESCRIBE), never listed
here, so a table that changes its columns travels unchanged, with its declared types.

Why this form: rows as Python tuples cost a loop per kernel; pyarrow would be a large new
dependency; and DuckDB scans a numpy column of Python strings at about 0.5 s per 100 k rows.
So strings travel as integer codes into one small dictionary per table, and a column with
NULLs as its values plus a boolean mask. Types numpy cannot hold exactly are refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import duckdb
import numpy as np

# Types that survive fetchnumpy -> pickle -> DuckDB's numpy scan -> CAST unchanged.
_EXACT = re.compile(r"(U?(TINY|SMALL|BIG)?INT(EGER)?|DOUBLE|FLOAT|BOOLEAN|VARCHAR)")


@dataclass
class Packed:
    types: list[tuple[str, str]]           # (column, DuckDB type), in table order
    values: dict[str, np.ndarray]          # VARCHAR columns as codes into `strings`
    nulls: dict[str, np.ndarray]           # column -> True where NULL (only columns holding NULLs)
    strings: np.ndarray                    # the distinct strings of every VARCHAR column; code = position


def pack(con: duckdb.DuckDBPyConnection, table: str) -> Packed:
    """`table` as numpy columns, strings encoded against one dictionary (task side)."""
    types = [(r[0], r[1]) for r in con.execute(f"DESCRIBE {table}").fetchall()]
    if odd := [f"{c} {t}" for c, t in types if not _EXACT.fullmatch(t)]:
        raise ValueError(f"handover of {table}: columns {odd} do not travel exactly as numpy arrays")
    text = [c for c, t in types if t == "VARCHAR"]
    strings = np.array([], dtype=object)
    if text:
        distinct = " UNION ".join(f"SELECT {_q(c)} AS value FROM {table}" for c in text)
        strings = con.execute(f"SELECT DISTINCT value FROM ({distinct}) WHERE value IS NOT NULL").fetchnumpy()["value"]
    con.register("handover_strings", {"value": strings, "code": np.arange(len(strings), dtype=np.int64)})
    try:
        cols = ", ".join(f"s{i}.code AS {_q(c)}" if c in text else f"t.{_q(c)}" for i, (c, _) in enumerate(types))
        joins = " ".join(f"LEFT JOIN handover_strings AS s{i} ON s{i}.value = t.{_q(c)}"
                         for i, (c, _) in enumerate(types) if c in text)
        fetched = con.execute(f"SELECT {cols} FROM {table} AS t {joins}").fetchnumpy()
    finally:
        con.unregister("handover_strings")
    values = {c: np.ma.getdata(a) for c, a in fetched.items()}
    nulls = {c: np.ma.getmaskarray(a) for c, a in fetched.items() if np.ma.is_masked(a)}
    return Packed(types, values, nulls, np.asarray(strings, dtype=object))


@contextmanager
def as_views(con: duckdb.DuckDBPyConnection, tables: dict[str, Packed]) -> Iterator[None]:
    """While inside, each packed table is a temp view of its name on `con` (parent side).

    Views, not tables: what reads them (a collect query) copies the rows once, straight from numpy.
    """
    try:
        for table, packed in tables.items():
            _view(con, table, packed)
        yield
    finally:
        for table in tables:
            con.execute(f"DROP VIEW IF EXISTS {table}")
            con.unregister(f"handed_{table}")
            con.unregister(f"handed_{table}_strings")


def _view(con: duckdb.DuckDBPyConnection, table: str, packed: Packed) -> None:
    """Same columns, types and values as the packed table; strings looked up by code, NULLs restored."""
    rows, strings = f"handed_{table}", f"handed_{table}_strings"
    con.register(rows, {f"v{i}": packed.values[c] for i, (c, _) in enumerate(packed.types)}
                 | {f"n{i}": packed.nulls[c] for i, (c, _) in enumerate(packed.types) if c in packed.nulls})
    con.register(strings, {"value": packed.strings, "code": np.arange(len(packed.strings), dtype=np.int64)})
    exprs, joins = [], []
    for i, (c, t) in enumerate(packed.types):
        value = f"h.v{i}"
        if t == "VARCHAR":
            joins.append(f"LEFT JOIN {strings} AS s{i} ON s{i}.code = h.v{i}")
            value = f"s{i}.value"
        if c in packed.nulls:
            value = f"CASE WHEN h.n{i} THEN NULL ELSE {value} END"
        exprs.append(f"CAST({value} AS {t}) AS {_q(c)}")
    con.execute(f"CREATE OR REPLACE TEMP VIEW {table} AS SELECT {', '.join(exprs)} FROM {rows} AS h {' '.join(joins)}")


def _q(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
