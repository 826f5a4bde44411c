"""Exposed communication per NCCL communicator (analysis/communicators.py): by hand, and on the real DDP trace."""

from __future__ import annotations

import sqlite3

from nsys_export import Export, gpid, gtid
from pipeline.analysis import classes, communicators
from pipeline.job.config import Region
from pipeline.trace.synth import COMPUTE_NAMES, NCCL_NAME
from tests.measuring import measure

MAIN, PID = gtid(1, 1), gpid(1)
A, B = 11, 2 ** 64 - 3              # two communicators, one above 2**63
NS = 1e9
STEP = Region(name="step", match="exact", domain=None, first=1, last=None, attribution="process", covers="step")


def by_hand() -> Export:
    """One process, step 0..10000, NCCL's domain 1. Device 0: a GEMM 1000..2000; communicator A's kernels
    1500..2500 and 2400..2600; B's 3000..3400; an NCCL kernel 5000..5100 launched outside any NCCL call (no
    communicator). Device 1: A's kernel 1000..1300, no compute.
      device 0, A: union 1500..2600 = 1100; with the GEMM 1000..2600 = 1600, less the GEMM's 1000: exposed 600,
                   hidden 500
      device 0, B: 400, no compute under it: exposed 400
      device 1, A: 300, exposed 300"""
    e = Export()
    e.range(0, 10_000, MAIN, "step")
    e.domain(MAIN, 1, "NCCL")
    kernels = [(1, 100, 1000, 2000, 0, COMPUTE_NAMES[0], None), (2, 200, 1500, 2500, 0, NCCL_NAME, A),
               (3, 300, 2400, 2600, 0, NCCL_NAME, A), (4, 400, 3000, 3400, 0, NCCL_NAME, B),
               (5, 500, 5000, 5100, 0, NCCL_NAME, None), (6, 600, 1000, 1300, 1, NCCL_NAME, A)]
    for corr, launch, start, end, device, name, comm in kernels:
        if comm is not None:
            e.nccl(launch - 10, launch + 10, MAIN, "ncclAllReduce", comm)
        e.launch(launch, MAIN, corr)
        e.kernel(start, end, PID, corr, device=device, name=name)
    return e


def test_exposed_communication_per_communicator_by_hand(open_export) -> None:
    trace = open_export(by_hand())
    measure(trace, STEP)
    got = [(r["device_id"], r["communicator"], r["count"], round(r["comm_s"] * NS), round(r["exposed_s"] * NS),
            round(r["hidden_s"] * NS)) for r in communicators.communicator_times(trace, classes.COMM_CLASS)]
    assert got == [(0, str(A), 2, 1100, 600, 500), (0, str(B), 1, 400, 400, 0), (1, str(A), 1, 300, 300, 0)]


def test_no_communicator_known_no_rows(open_export) -> None:
    e = by_hand()
    e.nvtx = [r for r in e.nvtx if r["domainId"] != 1]        # the export kept no NCCL range
    trace = open_export(e)
    measure(trace, STEP)
    assert communicators.communicator_times(trace, classes.COMM_CLASS) == []


def test_the_real_ddp_trace_names_its_one_communicator(real_trace) -> None:
    """Two ranks, one communicator: its ID as ncclCommInitRankConfig's payload says, and on each device the
    NCCL kernels the kernel table holds (read here with sqlite3)."""
    from pipeline.trace.open import open_trace
    from pipeline.trace import queries
    path = real_trace("lizhieffe__assignment2-systems__2f6fc30e_ddp53_profile.sqlite")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
        (init,) = con.execute("SELECT jsonText FROM NVTX_EVENTS e JOIN StringIds s ON s.id = e.textId "
                              "WHERE s.value = 'ncclCommInitRankConfig' LIMIT 1").fetchone()
        per_device = dict(con.execute("SELECT k.deviceId, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds "
                                      "s ON s.id = k.shortName WHERE s.value LIKE 'nccl%' GROUP BY 1").fetchall())
    comm = init.split('"NCCL communicator ID":')[1].split(",")[0]
    trace = open_trace(path)
    try:
        queries.run(trace.con, "views")
        measure(trace, Region(name="distributed_training", match="exact", domain=None, first=1, last=None,
                              attribution="process", covers="step"))
        rows = communicators.communicator_times(trace, classes.COMM_CLASS)
    finally:
        trace.con.close()
    assert comm == "13429301450432826988"
    assert sorted((r["communicator"], r["count"]) for r in rows) == [(comm, per_device[0]), (comm, per_device[1])]
    ns = [[round(r[k] * NS) for k in ("comm_s", "exposed_s", "hidden_s")] for r in rows]
    assert all(0 <= exposed <= union and hidden == union - exposed for union, exposed, hidden in ns)
