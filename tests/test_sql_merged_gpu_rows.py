"""merged_gpu_rows.sql: gpu_rows.sql's rows of every file built as one, with each row's file and own id."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries


def test_each_gpu_row_names_its_file_and_its_id():
    con = duckdb.connect()
    con.execute("CREATE TABLE gpus (device_id BIGINT, name VARCHAR, chip_name VARCHAR, memory_bytes BIGINT, "
                "bandwidth_bytes_per_s BIGINT, sm_count BIGINT, clock_hz BIGINT, cuda_device BIGINT)")
    con.execute("INSERT INTO gpus VALUES (?, 'H100', 'GH100', 1, 2, 132, 3, 0), (1, 'H100', 'GH100', 1, 2, 132, 3, 1)",
                [1 << 32])
    rows = queries.run(con, "merged_gpu_rows")
    assert [(r["file"], r["id"], r["cuDevice"]) for r in rows] == [(0, 1, 1), (1, 0, 0)]
    one = {k: v for k, v in rows[0].items() if k != "file"}
    con.execute("UPDATE gpus SET device_id = device_id & 4294967295")
    assert one == next(r for r in queries.run(con, "gpu_rows") if r["id"] == 1)     # as gpu_rows.sql gives it
