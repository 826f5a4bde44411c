"""DuckDB's spill folder: capped memory spills under the system temp folder, never beside the
trace, and folders of killed processes are cleared (trace/connection.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from pipeline.trace import connection as trace_connection


def test_connection_is_capped_and_spills_under_the_temp_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    con = trace_connection.connect()
    limit, folder = con.execute("SELECT current_setting('memory_limit'), current_setting('temp_directory')").fetchone()
    assert limit.endswith("MiB") and float(limit.split()[0]) < 600          # 512 MB = 488.2 MiB
    assert folder.startswith(str(tmp_path / trace_connection.SPILL_PREFIX))
    con.execute("SET memory_limit = '20MB'")                                 # force a spill
    con.execute("CREATE TEMP TABLE t AS SELECT range AS i, random() AS r FROM range(3000000)")
    assert con.execute("SELECT count(*) FROM (SELECT * FROM t ORDER BY r)").fetchone() == (3000000,)
    con.close()
    assert list(tmp_path.iterdir()) == []                                    # DuckDB removed its folder


def test_only_folders_of_dead_processes_are_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = tmp_path / f"{trace_connection.SPILL_PREFIX}{dead.pid}-0123"
    mine = tmp_path / f"{trace_connection.SPILL_PREFIX}{os.getpid()}-4567"
    other = tmp_path / "unrelated-folder"
    for folder in (gone, mine, other):
        (folder / "sub").mkdir(parents=True)
    trace_connection.remove_orphaned_spills()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([mine.name, other.name])


def test_a_local_pool_clears_the_spill_folders_of_its_dead_workers(tmp_path, monkeypatch):
    """A worker stopped inside a query that spilled (Ctrl-C, SIGTERM) never closed its connection, so
    DuckDB left its folder: once the pool's workers are stopped, it is removed, on an error as after success."""
    from pipeline import executor
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for failing in (False, True):
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        left = tmp_path / f"{trace_connection.SPILL_PREFIX}{dead.pid}-89ab"
        (left / "sub").mkdir(parents=True)
        try:
            with executor._local_pool(2) as ex:
                assert ex.submit(abs, -3).result() == 3
                if failing:
                    raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass
        assert list(tmp_path.iterdir()) == [], failing
