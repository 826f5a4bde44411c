"""merge_keys.sql: files whose ids can take the file's index (one host each, no negative key, ids that fit)."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries
from pipeline.trace.open import RAW_TABLES


def _con(rows: dict[str, list[tuple]]) -> duckdb.DuckDBPyConnection:
    """raw_*__all views as merged.py makes them (a `file` column before the raw columns), with `rows` planted."""
    con = duckdb.connect()
    for raw, (_, cols) in RAW_TABLES.items():
        columns = ", ".join(f'"{c}" {t}' for c, t in cols)
        con.execute(f"CREATE TABLE {raw}__all (file INTEGER, {columns})")
        for row in rows.get(raw, []):
            con.execute(f"INSERT INTO {raw}__all VALUES ({', '.join('?' * (len(cols) + 1))})", list(row))
    return con


def _kernel(file: int, gpid: int, device: int = 0, name: int = 1) -> tuple:
    return (file, 0, 10, device, 7, 1, gpid, name, name, None, None)


def test_one_host_per_file_fits():
    con = _con({"raw_kernel": [_kernel(0, 3 << 48 | 4000 << 24), _kernel(1, 3 << 48 | 4000 << 24)]})
    assert queries.run(con, "merge_keys") == [{"files": 2, "one_host_each": True, "devices_fit": True,
                                               "strings_fit": True}]
    assert con.execute("SELECT file, host FROM merged_keys ORDER BY file").fetchall() == [(0, 3), (1, 3)]


def test_two_hosts_a_negative_key_a_big_device_or_string_do_not():
    two_hosts = _con({"raw_kernel": [_kernel(0, 1 << 48 | 5), _kernel(0, 2 << 48 | 5)]})
    negative = _con({"raw_kernel": [_kernel(0, -5)]})
    device = _con({"raw_kernel": [_kernel(0, 5, device=1 << 32)]})
    string = _con({"raw_kernel": [_kernel(0, 5, name=1 << 40)]})
    assert queries.run(two_hosts, "merge_keys")[0]["one_host_each"] is False
    assert queries.run(negative, "merge_keys")[0]["one_host_each"] is False
    assert queries.run(device, "merge_keys")[0]["devices_fit"] is False
    assert queries.run(string, "merge_keys")[0]["strings_fit"] is False
