"""comm_times.sql: per device and NCCL communicator, its communication time exposed and hidden, most exposed first."""

from __future__ import annotations

from pipeline.trace import chain
from tests.sqlfixtures import classified


def test_exposed_and_hidden_by_hand():
    """Device 0: gemm 0..10 and 20..30; communicator 5: 5..25 (union 20; with compute 0..30 = 30, compute 20:
    exposed 10, hidden 10); communicator 6: 40..44 (exposed 4). Device 1: communicator 5, 0..50, no compute
    (exposed 50). No device: communicator 6, 0..2 (exposed 2, device NULL)."""
    con = classified([(1, 0, "gemm", "gemm", 0, 10), (1, 0, "gemm", "gemm", 20, 30),
                      (1, 0, "nccl", "communication", 5, 25), (1, 0, "nccl", "communication", 40, 44),
                      (1, 1, "nccl", "communication", 0, 50), (1, None, "nccl", "communication", 0, 2)],
                     comms=[None, None, 5, 6, 5, 6])
    got = chain.run(con, {"comm_unions", "comm_times"}, comm_class="communication")["comm_times"]
    assert [tuple(r.values()) for r in got] == [(1, 5, 1, 50, 50, 0), (0, 5, 1, 20, 10, 10), (0, 6, 1, 4, 4, 0),
                                                (None, 6, 1, 2, 2, 0)]
    assert list(got[0]) == ["device_id", "comm_key", "kernel_count", "comm_ns", "exposed_ns", "hidden_ns"]
