"""rank_combine.sql: equal pids and device ids in different files become different ranks and devices."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries
from tests.sqlfixtures import COLUMNS, NAME_COLUMNS

GPID = 1 << 48 | 4000 << 24     # the same process key in both files (two hosts, same pid)


def test_colliding_pids_and_devices_get_separate_keys():
    con = duckdb.connect()
    con.execute("CREATE TEMP TABLE all_ranges (file INTEGER, occurrence BIGINT, global_pid BIGINT, pid BIGINT, "
                "global_tid BIGINT, start_ns BIGINT, end_ns BIGINT, name VARCHAR, period_ns BIGINT)")
    con.execute(f"CREATE TEMP TABLE all_classified (file INTEGER, {COLUMNS})")
    con.execute(f"CREATE TEMP TABLE all_kernel_names (file INTEGER, {NAME_COLUMNS})")
    con.execute("CREATE TEMP TABLE all_operator_work (file INTEGER, occurrence BIGINT, calls BIGINT)")
    con.execute("INSERT INTO all_operator_work VALUES (0, 1, 2), (1, 1, 3)")     # counted FLOPs rows: no key to map
    for f in (0, 1):
        con.execute("INSERT INTO all_ranges VALUES (?, 1, ?, 4000, ?, 0, 100, 's', NULL)", [f, GPID, GPID | 4000])
        con.execute("INSERT INTO all_kernel_names VALUES (?, 1, 'k', 'gemm', 'kernel', NULL)", [f])
        con.execute("INSERT INTO all_classified VALUES (?, 1, ?, 0, 1, 10, 20, 7, NULL)", [f, GPID])
    # a device that only copied gets no key here (classify_combine.sql keys it after the kernel devices)
    con.execute("INSERT INTO all_kernel_names VALUES (0, 2, '[CUDA memcpy]', 'memory', 'memory', NULL)")
    con.execute("INSERT INTO all_classified VALUES (0, 1, ?, 5, 2, 10, 20, 7, NULL)", [GPID])
    keys = queries.run(con, "rank_combine")
    assert keys == [
        {"kind": "device", "file": 0, "original": 0, "key": 0},
        {"kind": "device", "file": 1, "original": 0, "key": 1},
        {"kind": "rank", "file": 0, "original": GPID, "key": 1},
        {"kind": "rank", "file": 1, "original": GPID, "key": 2},
    ]
    assert con.execute("SELECT global_pid, pid FROM selected_ranges ORDER BY 1").fetchall() == [(1, 4000), (2, 4000)]
    assert con.execute("SELECT occurrence, calls FROM operator_work ORDER BY calls").fetchall() == [(1, 2), (1, 3)]
