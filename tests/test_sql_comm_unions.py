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


def _comm_times(rows: list[tuple], comms: list[int | None], first: int, last: int, shared: bool) -> list[dict]:
    """comm_times.sql's rows for occurrences first..last: of the job's own window (`shared` False), or cut from
    the sorted rows of a window of all the occurrences (analysis/sharing.py)."""
    kept = [(r, c) for r, c in zip(rows, comms) if shared or first <= r[0] <= last]
    con = classified([r for r, _ in kept], comms=[c for _, c in kept])
    if shared:
        done = queries.sort_unions(con, "comm_unions", "occurrence", comm_class="communication")
        queries.store_cut(con, "comm_unions", done, first, last)
    else:
        queries.run(con, "comm_unions", comm_class="communication")
    return queries.run(con, "comm_times")


def test_a_shared_window_cut_gives_each_job_its_own_figures():
    """Occurrence k (1..4) spans [100 k, 100 k + 100): device 0 runs communicator 5 [100 k + 10, 100 k + 40) under a
    gemm [100 k, 100 k + 20); communicator 7 runs on device 1 only in occurrence 3, [310, 330), with device 1's gemm
    [100 k + 15, 100 k + 25) in every occurrence; in occurrence 2 communicator 5 also runs on device 1, [250, 290),
    and its kernel of occurrence 4 runs on to [480, 520), past the next start. The window's communicators of
    device 1 are 5 and 7, a job's may be neither: its figures are still its own window's."""
    rows, comms = [], []
    for k in range(1, 5):
        rows += [(k, 0, "nccl", "communication", 100 * k + 10, 100 * k + 40),
                 (k, 0, "gemm", "gemm", 100 * k, 100 * k + 20), (k, 1, "gemm", "gemm", 100 * k + 15, 100 * k + 25)]
        comms += [5, None, None]
    rows += [(3, 1, "nccl", "communication", 310, 330), (2, 1, "nccl", "communication", 250, 290),
             (4, 0, "nccl", "communication", 480, 520)]
    comms += [7, 5, 5]
    for first, last in ((1, 4), (1, 1), (2, 3), (3, 4), (4, 4)):
        own = _comm_times(rows, comms, first, last, shared=False)
        assert _comm_times(rows, comms, first, last, shared=True) == own, (first, last)
    # by hand, occurrence 4 alone: device 0, communicator 5: [410, 440) and [480, 520), 70 ns, of which [410, 420)
    # under the gemm [400, 420): exposed 60, hidden 10
    assert [(r["device_id"], r["comm_key"], r["comm_ns"], r["exposed_ns"]) for r in
            _comm_times(rows, comms, 4, 4, shared=True)] == [(0, 5, 70, 60)]
