"""gpu_rows.sql: TARGET_INFO_GPU under the column names detection expects, NULL where absent."""

from __future__ import annotations

import sqlite3

from nsys_export import Export
from pipeline.trace import queries

H200 = {"id": 0, "name": "NVIDIA H200", "chipName": "GH100", "totalMemory": 150_754_820_096,
        "memoryBandwidth": 4_915_200_000_000, "smCount": 132, "clockRate": 1_980_000_000, "cuDevice": 0}
A30_MIG = {"id": 1, "name": "NVIDIA A30 MIG 2g.12gb", "chipName": "GA100", "totalMemory": 12_616_466_432,
           "memoryBandwidth": 466_944_000_000, "smCount": 28, "clockRate": 1_440_000_000, "cuDevice": 1}


def test_rows_ordered_by_id(open_export) -> None:
    trace = open_export(Export(gpus=[A30_MIG, H200]))
    assert queries.run(trace.con, "gpu_rows") == [H200, A30_MIG]


def test_cuda_device_number_is_not_the_id(open_export) -> None:
    """As on a real 4-GPU node (cloverleaf): TARGET_INFO_GPU id 0, which kernels name, is CUDA device 3."""
    trace = open_export(Export(gpus=[{**A30_MIG, "id": 0, "cuDevice": 3}, {**H200, "id": 3, "cuDevice": 0}]))
    assert [(r["id"], r["cuDevice"]) for r in queries.run(trace.con, "gpu_rows")] == [(0, 3), (3, 0)]


def test_missing_columns_are_null(open_views, tmp_path) -> None:
    """An old export's GPU table without bandwidth or chip name (e.g. the 2021 layout)."""
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.execute("CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, totalMemory INTEGER, smCount INTEGER, "
                "clockRate INTEGER, busLocation TEXT)")
    con.execute("INSERT INTO TARGET_INFO_GPU VALUES (0, 'Quadro RTX 6000', 25390809088, 72, 1770000000, '0:1')")
    con.commit()
    con.close()
    trace = open_views(path)
    assert queries.run(trace.con, "gpu_rows") == [
        {"id": 0, "name": "Quadro RTX 6000", "chipName": None, "totalMemory": 25_390_809_088,
         "memoryBandwidth": None, "smCount": 72, "clockRate": 1_770_000_000, "cuDevice": None}]


def test_no_gpu_table(open_export) -> None:
    assert queries.run(open_export(Export()).con, "gpu_rows") == []
