"""A table packed in one process and viewed in another has the same columns, types and values."""

from __future__ import annotations

import pickle

import pytest

from pipeline.trace import handover
from pipeline.trace.connection import connect

ROWS = [  # (i, small, d, b, n, s, t): NULLs in an integer and a string column, repeated strings, an empty one
    (1, 7, 0.5, True, None, "gemm", "x"),
    (2, -3, 1 / 3, False, 5, None, "x"),
    (3, 0, -2.25, None, 6, "gemm", ""),
    (4, 1, 1e300, True, None, "nccl 'all'", "y"),
]
TYPES = [("i", "BIGINT"), ("small", "INTEGER"), ("d", "DOUBLE"), ("b", "BOOLEAN"), ("n", "BIGINT"),
         ("s", "VARCHAR"), ("t", "VARCHAR")]


def _table(con, name: str, rows) -> None:
    con.execute(f"CREATE TEMP TABLE {name} ({', '.join(f'{c} {t}' for c, t in TYPES)})")
    if rows:
        con.executemany(f"INSERT INTO {name} VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


@pytest.mark.parametrize("rows", [ROWS, []], ids=["rows", "empty"])
def test_round_trip_keeps_types_values_and_nulls(rows):
    src, dst = connect(), connect()
    _table(src, "planted", rows)
    packed = pickle.loads(pickle.dumps(handover.pack(src, "planted")))
    with handover.as_views(dst, {"planted": packed}):
        assert [(r[0], r[1]) for r in dst.execute("DESCRIBE planted").fetchall()] == TYPES
        assert dst.execute("SELECT * FROM planted ORDER BY i").fetchall() == rows
    assert dst.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = 'planted'").fetchone() == (0,)


def test_rows_travel_as_parquet_in_order(tmp_path):
    """Issue 34: the handed-over form is a Parquet file's bytes (read here by DuckDB on its own, no pipeline code),
    not pickled Python objects, and the table's row order is kept."""
    con = connect()
    _table(con, "planted", list(reversed(ROWS)))
    packed = handover.pack(con, "planted")
    assert packed.parquet[:4] == b"PAR1" and packed.parquet[-4:] == b"PAR1"
    assert set(vars(packed)) == {"types", "parquet"}
    path = tmp_path / "t.parquet"
    path.write_bytes(packed.parquet)
    other = connect()
    assert other.execute(f"SELECT i, s FROM read_parquet('{path}')").fetchall() == [(r[0], r[5]) for r in reversed(ROWS)]



def test_a_type_parquet_cannot_hold_exactly_is_refused():
    con = connect()
    con.execute("CREATE TEMP TABLE wide AS SELECT CAST(1 AS HUGEINT) AS h, 1.5::DECIMAL(18, 3) AS d")
    with pytest.raises(ValueError, match="HUGEINT.*DECIMAL"):
        handover.pack(con, "wide")
