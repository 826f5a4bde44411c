"""views.sql: id decoding, NVTX names (text vs textId), domains per process, event-type filter."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import chain, queries

HOST = 3          # bits 48+ must not leak into pid or tid
A_MAIN = gtid(1234, 5678, HOST)
A_WORKER = gtid(1234, 5679, HOST)
B_MAIN = gtid(77, 77)


def _rows(trace, sql: str) -> list[tuple]:
    return trace.con.execute(sql).fetchall()


def _nvtx_export() -> Export:
    e = Export()
    e.range(100, 200, A_MAIN, "step")                                  # push/pop, text
    e.range(110, 150, A_MAIN, "fwd", via_text_id=True, event_type=60)  # start/end, textId
    e.range(120, 130, A_WORKER, "imported_pp", event_type=70)
    e.range(130, 140, A_WORKER, "imported_se", event_type=71)
    e.range(105, None, A_MAIN, "a mark", event_type=34)                # marks are not ranges
    e.range(106, None, A_MAIN, "unterminated")                         # push without pop
    e.range(0, None, A_MAIN, "thread name", event_type=39)
    e.domain(A_MAIN, 5, "MPI", via_text_id=True)
    e.range(160, 170, A_MAIN, "MPI_Send", via_text_id=True, domain_id=5)
    e.domain(B_MAIN, 5, "TensorRT")                                    # same domainId, other process
    e.range(10, 20, B_MAIN, "layer", domain_id=5)
    e.range(30, 40, B_MAIN, "no domain row", domain_id=7)
    return e


def test_ranges_decode_ids_names_and_domains(open_export) -> None:
    trace = open_export(_nvtx_export())
    a, b = gpid(1234, HOST), gpid(77)
    assert _rows(trace, "SELECT start_ns, end_ns, global_tid, global_pid, pid, tid, name, domain "
                        "FROM ranges ORDER BY global_pid, start_ns") == [
        (10, 20, B_MAIN, b, 77, 77, "layer", "TensorRT"),
        (30, 40, B_MAIN, b, 77, 77, "no domain row", None),
        (100, 200, A_MAIN, a, 1234, 5678, "step", None),
        (110, 150, A_MAIN, a, 1234, 5678, "fwd", None),
        (120, 130, A_WORKER, a, 1234, 5679, "imported_pp", None),
        (130, 140, A_WORKER, a, 1234, 5679, "imported_se", None),
        (160, 170, A_MAIN, a, 1234, 5678, "MPI_Send", "MPI"),
    ]


def test_domains_are_keyed_by_process(open_export) -> None:
    trace = open_export(_nvtx_export())
    assert _rows(trace, "SELECT global_pid, domain_id, domain FROM nvtx_domains ORDER BY domain") == [
        (gpid(1234, HOST), 5, "MPI"), (gpid(77), 5, "TensorRT")]


def test_launches_and_kernels(open_export) -> None:
    e = Export()
    e.launch(300, A_WORKER, 9)
    e.kernel(310, 400, gpid(1234, HOST), 9, device=2, stream=13, name="short")
    e.kernel(500, 600, None, None)
    trace = open_export(e)
    assert _rows(trace, "SELECT start_ns, end_ns, global_tid, global_pid, correlation_id FROM launches") == [
        (300, 305, A_WORKER, gpid(1234, HOST), 9)]
    assert _rows(trace, "SELECT start_ns, end_ns, device_id, stream_id, correlation_id, global_pid, name_id "
                        "FROM kernels ORDER BY start_ns") == [
        (310, 400, 2, 13, 9, gpid(1234, HOST), e.strings["short"]),   # shortName wins over demangledName
        (500, 600, 0, 7, None, None, e.strings["gemm"]),
    ]


def test_gpus_view_renames_columns(open_export) -> None:
    e = Export(gpus=[{"id": 1, "name": "NVIDIA H200", "chipName": "GH100", "totalMemory": 150_000_000_000,
                      "memoryBandwidth": 4_800_000_000_000, "smCount": 132, "clockRate": 1_980_000_000}])
    trace = open_export(e)
    assert _rows(trace, "SELECT device_id, name, chip_name, memory_bytes, bandwidth_bytes_per_s, sm_count, "
                        "clock_hz FROM gpus") == [
        (1, "NVIDIA H200", "GH100", 150_000_000_000, 4_800_000_000_000, 132, 1_980_000_000)]


def test_missing_tables_give_empty_views(open_export) -> None:
    """Only non-empty tables are exported: absent RUNTIME/KERNEL/NVTX/GPU mean no events, not an error."""
    e = Export()
    e.sid("unused")
    trace = open_export(e)
    for view in ("ranges", "nvtx_domains", "launches", "kernels", "gpus"):
        assert _rows(trace, f"SELECT count(*) FROM {view}") == [(0,)], view
    assert chain.run(trace.con, {"inspect_read", "inspect_counts"})["inspect_counts"][0]["kernels"] == 0
