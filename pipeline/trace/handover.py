"""A DuckDB table carried to another process as Parquet bytes (a multi-file job's per-file rows).

Each file of a multi-file job can be measured by a worker on its own connection
(analysis/ranks.extract); its result tables travel back as the bytes of a Parquet file
DuckDB wrote (COPY), and the parent's connection reads them (read_parquet). The columns
are read from the table itself (DESCRIBE), never listed here, so a table that changes its
columns travels unchanged, with its declared types.

Why Parquet (issue 34): a columnar format DuckDB writes and reads natively, so nothing
is rebuilt row by row or column by column in Python and no new dependency is needed
(Arrow would need pyarrow, about 100 MB). The bytes, not a path, travel: a Dask worker on
another host has no folder in common with the parent but the ones a job names. Types
Parquet does not hold exactly (HUGEINT is written as DOUBLE) are refused.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipeline.trace.open import literal

# Types that survive COPY ... (FORMAT parquet) -> read_parquet -> CAST unchanged.
_EXACT = re.compile(r"(U?(TINY|SMALL|BIG)?INT(EGER)?|DOUBLE|FLOAT|BOOLEAN|VARCHAR)")


@dataclass
class Packed:
    types: list[tuple[str, str]]           # (column, DuckDB type), in table order
    parquet: bytes                         # the table's rows in order, as a Parquet file


def pack(con: duckdb.DuckDBPyConnection, table: str) -> Packed:
    """`table` as the bytes of a Parquet file (task side)."""
    types = [(r[0], r[1]) for r in con.execute(f"DESCRIBE {table}").fetchall()]
    if odd := [f"{c} {t}" for c, t in types if not _EXACT.fullmatch(t)]:
        raise ValueError(f"handover of {table}: columns {odd} do not travel exactly as Parquet")
    folder = tempfile.mkdtemp(prefix="mfu-handover-")
    try:
        path = Path(folder) / "table.parquet"
        con.execute(f"COPY {table} TO {literal(path)} (FORMAT parquet)")
        return Packed(types, path.read_bytes())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def as_views(con: duckdb.DuckDBPyConnection, tables: dict[str, Packed]) -> Iterator[None]:
    """While inside, each packed table is a temp view of its name on `con` (parent side).

    Views, not tables: what reads them (a collect query) copies the rows once, straight from Parquet.
    """
    folder = tempfile.mkdtemp(prefix="mfu-handover-")
    try:
        for table, packed in tables.items():
            path = Path(folder) / f"{table}.parquet"
            path.write_bytes(packed.parquet)
            exprs = ", ".join(f"CAST({_q(c)} AS {t}) AS {_q(c)}" for c, t in packed.types)
            con.execute(f"CREATE OR REPLACE TEMP VIEW {table} AS SELECT {exprs} FROM read_parquet({literal(path)})")
        yield
    finally:
        for table in tables:
            con.execute(f"DROP VIEW IF EXISTS {table}")
        shutil.rmtree(folder, ignore_errors=True)


def _q(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
