"""classify_combine.sql: classified rows of several files on the combined rank and device keys."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries

GPID = 1 << 48 | 4000 << 24     # the same process key in both files (two hosts, same pid)


def _con() -> duckdb.DuckDBPyConnection:
    """Keys as rank_combine.sql leaves them for two files that both ran pid 4000 on device 0."""
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE rank_keys AS SELECT * FROM (VALUES (0, ?, 1), (1, ?, 2)) "
                "AS t(file, global_pid, rank_key)", [GPID, GPID])
    con.execute("CREATE TEMP TABLE device_keys AS SELECT * FROM (VALUES (0, 0, 0), (1, 0, 1)) "
                "AS t(file, device_id, device_key)")
    con.execute("CREATE TEMP TABLE all_classified (file INTEGER, occurrence BIGINT, global_pid BIGINT, "
                "device_id BIGINT, name VARCHAR, class VARCHAR, kind VARCHAR, start_ns BIGINT, end_ns BIGINT, "
                "precision VARCHAR)")
    return con


def _rows(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    queries.run(con, "classify_combine")
    return con.execute("SELECT global_pid, device_id, name, class, kind, start_ns, end_ns FROM classified "
                       "ORDER BY global_pid, device_id, start_ns").fetchall()


def test_equal_pids_and_devices_of_two_files_stay_apart():
    con = _con()
    for f in (0, 1):
        con.execute("INSERT INTO all_classified VALUES (?, 1, ?, 0, 'gemm_k', 'gemm', 'kernel', 10, 20, 'bf16')", [f, GPID])
    assert _rows(con) == [(1, 0, "gemm_k", "gemm", "kernel", 10, 20), (2, 1, "gemm_k", "gemm", "kernel", 10, 20)]
    assert con.execute("SELECT DISTINCT precision FROM classified").fetchall() == [("bf16",)]


def test_memory_only_devices_get_their_own_keys_after_the_kernel_devices():
    con = _con()
    # file 0 and file 1 both copy on device 3, where no kernel was attributed: two devices, not one
    for f in (0, 1):
        con.execute("INSERT INTO all_classified VALUES (?, 1, ?, 3, '[CUDA memcpy]', 'memory', 'memory', 5, 9, NULL)",
                    [f, GPID])
    con.execute("INSERT INTO all_classified VALUES (1, 1, ?, 0, '[CUDA memset]', 'memory', 'memory', 1, 2, NULL)", [GPID])
    assert _rows(con) == [(1, 2, "[CUDA memcpy]", "memory", "memory", 5, 9),
                          (2, 1, "[CUDA memset]", "memory", "memory", 1, 2),
                          (2, 3, "[CUDA memcpy]", "memory", "memory", 5, 9)]


def test_unknown_device_stays_unknown():
    con = _con()
    con.execute("INSERT INTO all_classified VALUES (0, 1, NULL, NULL, '[CUDA memcpy]', 'memory', 'memory', 5, 9, NULL)")
    assert _rows(con) == [(None, None, "[CUDA memcpy]", "memory", "memory", 5, 9)]
