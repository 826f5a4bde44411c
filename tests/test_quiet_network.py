"""Nothing tries the network at run time (issue 33): every DuckDB connection is made by connection.duckdb_connect, with
extension autoloading and autoinstalling off. A `--history` file holding SQLite made DuckDB download its scanner
and create ~/.duckdb."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from pipeline.cli import main

PACKAGE = Path(__file__).resolve().parents[1] / "pipeline"


def test_a_sqlite_file_as_history_fetches_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    with sqlite3.connect(tmp_path / "h.duckdb") as con:
        con.execute("CREATE TABLE history (run INTEGER)")
    assert main(["history", str(tmp_path / "h.duckdb"), "--out", str(tmp_path / "out")]) == 2
    assert "h.duckdb: not a DuckDB history file (it holds an SQLite database)" in capsys.readouterr().err
    assert list((tmp_path / "home").iterdir()) == []            # no ~/.duckdb, no extension fetched


def test_every_connection_is_made_by_the_one_helper():
    """A connection made elsewhere would have autoloading on again."""
    made = [f"{p.relative_to(PACKAGE)}:{n}" for p in PACKAGE.rglob("*.py")
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"duckdb\.connect\(", line)]
    assert made == ["trace/connection.py:" + str(next(n for n, line in enumerate(
        (PACKAGE / "trace/connection.py").read_text(encoding="utf-8").splitlines(), 1) if "return duckdb.connect(" in line))]
