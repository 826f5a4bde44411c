"""host_devices.sql: device ids that ran kernels of processes on several hosts of one file."""

from __future__ import annotations

import duckdb

from pipeline.trace import queries

H1, H2 = 1 << 48, 2 << 48


def test_lists_only_device_ids_shared_by_hosts():
    con = duckdb.connect()
    con.execute("CREATE TABLE classified AS SELECT * FROM (VALUES "
                f"(1, {H1 | 10 << 24}, 0), (1, {H2 | 10 << 24}, 0), "       # device 0: hosts 1 and 2
                f"(1, {H1 | 11 << 24}, 1), (1, {H1 | 12 << 24}, 1), "       # device 1: two processes, one host
                f"(1, {H2 | 10 << 24}, 2), (1, {H1 | 10 << 24}, NULL)) "     # a memory row with no device
                "AS t(occurrence, global_pid, device_id)")
    assert queries.run(con, "host_devices") == [{"device_id": 0, "hosts": 2}]
