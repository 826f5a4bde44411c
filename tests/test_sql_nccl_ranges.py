"""nccl_ranges.sql: NCCL's own NVTX ranges and the communicator ID their payload names."""

from __future__ import annotations

import sqlite3

from nsys_export import Export, gtid
from pipeline.trace import queries

T = gtid(1, 1)
BIG = 13429301450432826988          # a real commHash (the DDP trace's): above 2**63, kept exactly


def nccl_export() -> Export:
    e = Export()
    e.domain(T, 1, "NCCL")
    e.domain(T, 2, "CCCL")
    e.nccl(100, 200, T, "ncclAllReduce", BIG)
    e.nccl(300, 400, T, "ncclGroupEnd", None)                          # names no communicator
    e.range(500, 600, T, "ncclBroadcast", domain_id=1, json_text="not json")
    e.nccl(700, 800, T, "ncclAllReduce", 7, domain_id=2)                 # another library's domain
    e.range(900, 1000, T, "step", json_text='{"NCCL communicator ID":5}')   # the default domain
    e.nccl(1100, None, T, "ncclAllReduce", 9)                            # never closed: no range
    return e


def test_ranges_of_the_nccl_domain_with_their_communicator(open_export) -> None:
    trace = open_export(nccl_export())
    assert queries.run(trace.con, "nccl_ranges") == [{"ranges": 3, "with_communicator": 1}]
    assert trace.con.execute("SELECT global_tid, start_ns, end_ns, comm_key FROM nccl_ranges ORDER BY start_ns"
                             ).fetchall() == [(T, 100, 200, BIG), (T, 300, 400, None), (T, 500, 600, None)]


def test_an_export_without_payloads_names_no_communicator(open_export, tmp_path) -> None:
    """NVTX_EVENTS without a jsonText column (exports before NVTX payloads): the ranges, no communicator."""
    path = nccl_export().write(tmp_path / "old.sqlite")
    with sqlite3.connect(path) as con:
        con.execute("ALTER TABLE NVTX_EVENTS DROP COLUMN jsonText")
    from pipeline.trace.open import open_trace
    trace = open_trace(path)
    try:
        queries.run(trace.con, "views")
        assert queries.run(trace.con, "nccl_ranges") == [{"ranges": 3, "with_communicator": 0}]
    finally:
        trace.con.close()


def test_no_nvtx_table(open_export) -> None:
    e = Export()
    e.kernel(0, 10, 1 << 24, 1)
    assert queries.run(open_export(e).con, "nccl_ranges") == [{"ranges": 0, "with_communicator": 0}]
