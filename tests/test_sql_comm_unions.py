"""comm_unions.sql: per device and NCCL communicator, its kernels' union, the device's compute and both."""

from __future__ import annotations

from pipeline.trace import queries
from tests.sqlfixtures import classified

BIG = 2 ** 64 - 1


def test_unions_per_device_and_communicator_by_hand():
    """Device 0: gemm 0..10; communicator 5: nccl 5..20 and 30..40; communicator BIG: nccl 50..60; an nccl kernel
    without a communicator 0..100 and a memcpy 0..100 (neither counted). Device 1: communicator 5, 0..3, and a
    gemm 100..110, device 1's compute. comm_ids: 5 -> 1, BIG -> 2 (in key order). The gemm of device 0 is
    listed once per communicator of device 0."""
    con = classified([(1, 0, "gemm", "gemm", 0, 10), (1, 0, "nccl", "communication", 5, 20),
                      (2, 0, "nccl", "communication", 30, 40), (1, 0, "nccl", "communication", 50, 60),
                      (1, 0, "nccl", "communication", 0, 100), (1, 0, "[CUDA memcpy]", "memory", 0, 100),
                      (1, 1, "nccl", "communication", 0, 3), (1, 1, "gemm", "gemm", 100, 110)],
                     comms=[None, 5, 5, BIG, None, None, 5, None])
    queries.run(con, "comm_unions", comm_class="communication")
    assert con.execute("SELECT comm_key, comm_id FROM comm_ids ORDER BY 1").fetchall() == [(5, 1), (BIG, 2)]
    got = con.execute("SELECT scope, k1, k2, k3, union_ns, interval_count FROM comm_unions ORDER BY ALL").fetchall()
    assert got == [("alone", 0, 0, 1, 10, 1), ("alone", 0, 0, 2, 10, 1), ("alone", 0, 1, 1, 10, 1),
                   ("alone", 1, 0, 1, 15 + 10, 2), ("alone", 1, 0, 2, 10, 1), ("alone", 1, 1, 1, 3, 1),
                   ("with_compute", 0, 1, None, 20 + 10, 3), ("with_compute", 0, 2, None, 10 + 10, 2),
                   ("with_compute", 1, 1, None, 3 + 10, 2)]


def test_no_communicator_no_rows():
    con = classified([(1, 0, "nccl", "communication", 0, 10), (1, 0, "gemm", "gemm", 0, 10)])
    queries.run(con, "comm_unions", comm_class="communication")
    assert con.execute("SELECT count(*) FROM comm_unions").fetchall() == [(0,)]
