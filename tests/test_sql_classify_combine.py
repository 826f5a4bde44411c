"""classify_combine.sql: classified rows of several files on the combined rank, device and name keys."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries
from tests.sqlfixtures import COLUMNS, NAME_COLUMNS, RESOLVED

GPID = 1 << 48 | 4000 << 24     # the same process key in both files (two hosts, same pid)


def _con() -> duckdb.DuckDBPyConnection:
    """Keys as rank_combine.sql leaves them for two files that both ran pid 4000 on device 0."""
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE rank_keys AS SELECT * FROM (VALUES (0, ?, 1), (1, ?, 2)) "
                "AS t(file, global_pid, rank_key)", [GPID, GPID])
    con.execute("CREATE TEMP TABLE device_keys AS SELECT * FROM (VALUES (0, 0, 0), (1, 0, 1)) "
                "AS t(file, device_id, device_key)")
    con.execute(f"CREATE TEMP TABLE all_classified (file INTEGER, {COLUMNS})")
    con.execute(f"CREATE TEMP TABLE all_kernel_names (file INTEGER, {NAME_COLUMNS})")
    return con


def _add(con, file: int, name_id: int, name: str, cls: str, gpid, device, start: int, end: int,
         precision: str | None = None, stream: int | None = 7, comm: int | None = None) -> None:
    """One row of one file, its name under that file's own name id."""
    kind = "memory" if cls == "memory" else "kernel"
    con.execute("INSERT INTO all_kernel_names SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS "
                "(SELECT 1 FROM all_kernel_names WHERE file = ? AND name_id = ?)",
                [file, name_id, name, cls, kind, precision, file, name_id])
    con.execute("INSERT INTO all_classified VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?)",
                [file, gpid, device, name_id, start, end, stream, comm])


def _rows(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    queries.run(con, "classify_combine")
    return con.execute(f"SELECT global_pid, device_id, name, class, kind, start_ns, end_ns FROM ({RESOLVED}) "
                       "ORDER BY global_pid, device_id, start_ns").fetchall()


def test_equal_pids_and_devices_of_two_files_stay_apart():
    con = _con()
    for f in (0, 1):
        _add(con, f, 1, "gemm_k", "gemm", GPID, 0, 10, 20, "bf16")
    assert _rows(con) == [(1, 0, "gemm_k", "gemm", "kernel", 10, 20), (2, 1, "gemm_k", "gemm", "kernel", 10, 20)]
    assert con.execute(f"SELECT DISTINCT precision FROM ({RESOLVED})").fetchall() == [("bf16",)]


def test_each_rows_stream_is_kept_as_its_file_has_it():
    """Stream ids are named within a device, and device keys are per (file, device): they pass through as they are."""
    con = _con()
    _add(con, 0, 1, "gemm_k", "gemm", GPID, 0, 10, 20, stream=7)
    _add(con, 1, 1, "nccl_x", "communication", GPID, 0, 10, 20, stream=13)
    _add(con, 1, 2, "[CUDA memcpy]", "memory", GPID, 0, 30, 40, stream=None)
    queries.run(con, "classify_combine")
    assert con.execute("SELECT device_id, stream_id FROM classified ORDER BY device_id, start_ns").fetchall() == [
        (0, 7), (1, 13), (1, None)]


def test_a_communicator_key_is_kept_as_each_file_has_it():
    """A communicator ID is the same on every rank of the communicator: both files' rows keep it, unmapped."""
    con = _con()
    _add(con, 0, 1, "nccl_x", "communication", GPID, 0, 10, 20, comm=2 ** 64 - 1)
    _add(con, 1, 1, "nccl_x", "communication", GPID, 0, 10, 20, comm=2 ** 64 - 1)
    _add(con, 1, 2, "gemm_k", "gemm", GPID, 0, 30, 40)
    queries.run(con, "classify_combine")
    assert con.execute("SELECT device_id, comm_key FROM classified ORDER BY device_id, start_ns").fetchall() == [
        (0, 2 ** 64 - 1), (1, 2 ** 64 - 1), (1, None)]


def test_name_ids_of_each_file_map_onto_one_id_per_name():
    con = _con()
    # file 0 calls gemm_k 1 and relu 2; file 1 the other way round; file 1 also has its own name
    _add(con, 0, 1, "gemm_k", "gemm", GPID, 0, 10, 20)
    _add(con, 0, 2, "relu", "elementwise", GPID, 0, 20, 30)
    _add(con, 1, 2, "gemm_k", "gemm", GPID, 0, 10, 20)
    _add(con, 1, 1, "relu", "elementwise", GPID, 0, 20, 30)
    _add(con, 1, 3, "nccl_x", "communication", GPID, 0, 30, 40)
    assert _rows(con) == [(1, 0, "gemm_k", "gemm", "kernel", 10, 20), (1, 0, "relu", "elementwise", "kernel", 20, 30),
                          (2, 1, "gemm_k", "gemm", "kernel", 10, 20), (2, 1, "relu", "elementwise", "kernel", 20, 30),
                          (2, 1, "nccl_x", "communication", "kernel", 30, 40)]
    assert con.execute("SELECT name FROM kernel_names ORDER BY name_id").fetchall() == [
        ("gemm_k",), ("nccl_x",), ("relu",)]


def test_memory_only_devices_get_their_own_keys_after_the_kernel_devices():
    con = _con()
    # file 0 and file 1 both copy on device 3, where no kernel was attributed: two devices, not one
    for f in (0, 1):
        _add(con, f, 1, "[CUDA memcpy]", "memory", GPID, 3, 5, 9)
    _add(con, 1, 2, "[CUDA memset]", "memory", GPID, 0, 1, 2)
    assert _rows(con) == [(1, 2, "[CUDA memcpy]", "memory", "memory", 5, 9),
                          (2, 1, "[CUDA memset]", "memory", "memory", 1, 2),
                          (2, 3, "[CUDA memcpy]", "memory", "memory", 5, 9)]


def test_unknown_device_stays_unknown():
    con = _con()
    _add(con, 0, 1, "[CUDA memcpy]", "memory", None, None, 5, 9)
    assert _rows(con) == [(None, None, "[CUDA memcpy]", "memory", "memory", 5, 9)]
