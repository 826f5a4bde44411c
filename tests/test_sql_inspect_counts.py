"""inspect_counts.sql: the event counts that say what a trace supports."""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.trace import chain


def counts(con) -> list[dict]:
    """inspect_counts.sql over inspect_read.sql's one read of the trace."""
    return chain.run(con, {"inspect_read", "inspect_counts"})["inspect_counts"]


def test_counts_by_hand(open_export) -> None:
    e = Export()
    e.range(100, 200, gtid(1, 1), "step")
    e.range(150, 160, gtid(2, 2), "fwd", via_text_id=True, event_type=60)
    e.range(170, None, gtid(2, 2), "mark", event_type=34)          # not a range
    e.launch(100, gtid(1, 1), 1)
    e.launch(101, gtid(1, 1), 1, name="cudaLaunchKernel_v7000")    # launch rows are counted as rows
    e.kernel(120, 300, gpid(1), 1)
    e.kernel(90, 130, gpid(2), 1, device=1)                        # correlationId 1 launched in process 1 only
    e.kernel(400, 450, None, None)
    trace = open_export(e)
    assert counts(trace.con) == [{
        "kernels": 3, "launches": 2, "nvtx_ranges": 2, "kernel_processes": 2, "kernels_without_process": 1,
        "kernels_without_launch": 2, "backwards_kernels": 0, "backwards_ranges": 0, "first_kernel_ns": 90,
        "last_kernel_ns": 450}]


def test_rows_ending_before_they_start_are_counted(open_export) -> None:
    e = Export()
    e.range(100, 200, gtid(1, 1), "step")
    e.range(300, 250, gtid(1, 1), "step")                          # backwards
    e.range(400, 400, gtid(1, 1), "step")                          # zero length: not backwards
    e.launch(100, gtid(1, 1), 1)
    e.kernel(120, 110, gpid(1), 1)                                 # backwards
    e.kernel(130, 130, gpid(1), 1)
    (row,) = counts(open_export(e).con)
    assert (row["backwards_kernels"], row["backwards_ranges"]) == (1, 1)


def test_synthetic_totals(synth_trace, open_views) -> None:
    path, truth = synth_trace(ranks=2, steps=3, kernels_per_step=20, duplicate_every=10, setup_kernels=3,
                              drop_launch_every=7)
    spec = truth["spec"]
    trace = open_views(path)
    (row,) = counts(trace.con)
    kernels = spec["ranks"] * (spec["steps"] * spec["kernels_per_step"] + spec["setup_kernels"])
    dropped = spec["ranks"] * spec["steps"] * 2           # launches 6 and 13 of each step's 20 (every 7th)
    duplicates = spec["ranks"] * spec["steps"] * 2        # launches 0 and 10 of each step's 20
    ranges = spec["ranks"] * spec["steps"] * 2            # the step range and one aten::mm range per step
    assert (row["kernels"], row["launches"], row["nvtx_ranges"], row["kernel_processes"]) == (
        kernels, kernels - dropped + duplicates, ranges, spec["ranks"])
    assert row["kernels_without_launch"] == dropped
