"""merge_split.sql: each row of a window built as one gets its file and its own process key and device back."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries
from tests.sqlfixtures import COLUMNS, NAME_COLUMNS

PID = 4000 << 24


def test_rows_get_their_file_host_and_device_back():
    con = duckdb.connect()
    con.execute("CREATE TABLE merged_keys AS SELECT * FROM (VALUES (0, 0), (1, 7)) AS t(file, host)")
    con.execute("CREATE TABLE selected_ranges (occurrence BIGINT, global_pid BIGINT, pid BIGINT, global_tid BIGINT, "
                "start_ns BIGINT, end_ns BIGINT, name VARCHAR, period_ns BIGINT)")
    con.execute("INSERT INTO selected_ranges VALUES (1, ?, 4000, ?, 0, 9, 's', NULL), (1, ?, 4000, ?, 0, 9, 's', NULL)",
                [PID, PID | 1, 1 << 48 | PID, 1 << 48 | PID | 1])
    con.execute(f"CREATE TABLE classified ({COLUMNS})")
    con.execute("INSERT INTO classified VALUES (1, ?, 0, 1, 0, 5, 3, NULL), (1, ?, ?, 1, 0, 5, 3, NULL)",
                [PID, 1 << 48 | PID, 1 << 32 | 2])
    con.execute(f"CREATE TABLE kernel_names ({NAME_COLUMNS})")
    con.execute("INSERT INTO kernel_names VALUES (1, 'k', 'gemm', 'kernel', NULL)")
    con.execute("CREATE TABLE operator_work (occurrence BIGINT, calls BIGINT)")
    assert queries.run(con, "merge_split") == [{"lost_kernels": 0, "lost_ranges": 0}]
    assert con.execute("SELECT file, global_pid, global_tid FROM all_ranges ORDER BY file").fetchall() == [
        (0, PID, PID | 1), (1, 7 << 48 | PID, 7 << 48 | PID | 1)]
    assert con.execute("SELECT file, global_pid, device_id FROM all_classified ORDER BY file").fetchall() == [
        (0, PID, 0), (1, 7 << 48 | PID, 2)]
    assert con.execute("SELECT file, name_id, name FROM all_kernel_names ORDER BY file").fetchall() == [
        (0, 1, "k"), (1, 1, "k")]                 # every file is given every name
