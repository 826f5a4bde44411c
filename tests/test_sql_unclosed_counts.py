"""unclosed_counts.sql: matching ranges never closed, per process; end to end, the `unclosed_ranges` warning.

Expected counts are the planted ranges counted by hand; the figures of a trace whose last step was
never closed must equal those of the same trace without that range.
"""

from __future__ import annotations

from nsys_export import Export, gpid, gtid
from pipeline.job.config import load_job
from pipeline.run import run_job
from pipeline.trace import queries
from tests.test_run_synth import write_job

P1, P1_WORKER, P2 = gtid(10, 10), gtid(10, 11), gtid(20, 20)


def test_counts_only_unclosed_ranges_the_region_selects(open_export) -> None:
    e = Export()
    e.domain(P2, 1, "other")
    e.range(100, 200, P1, "step")
    e.range(300, None, P1, "step")                      # unclosed, counted
    e.range(310, None, P1_WORKER, "step", via_text_id=True)   # unclosed, counted (same process)
    e.range(150, None, P2, "step")                      # unclosed, counted for pid 20
    e.range(160, None, P2, "step", domain_id=1)         # another domain: counted only without a domain filter
    e.range(170, None, P2, "step_extra")                # does not match exactly
    e.range(180, None, P2, "step", event_type=34)       # a mark, not a range
    trace = open_export(e)
    queries.run(trace.con, "region_ranges", name="step", match="exact", domain=None)
    assert queries.run(trace.con, "unclosed_counts") == [
        {"pid": 10, "unclosed": 2, "first_start_ns": 300, "example": "step"},
        {"pid": 20, "unclosed": 2, "first_start_ns": 150, "example": "step"}]
    # the closed range alone is an occurrence
    assert trace.con.execute("SELECT pid, start_ns FROM region_ranges").fetchall() == [(10, 100)]
    queries.run(trace.con, "region_ranges", name="step", match="prefix", domain="other")
    assert queries.run(trace.con, "unclosed_counts") == [
        {"pid": 20, "unclosed": 1, "first_start_ns": 160, "example": "step"}]


def test_no_unclosed_ranges_gives_no_rows(open_export) -> None:
    e = Export()
    e.range(100, 200, P1, "step")
    e.range(300, None, P1, "step", event_type=34)       # a mark with the region's name
    trace = open_export(e)
    queries.run(trace.con, "region_ranges", name="step", match="exact", domain=None)
    assert queries.run(trace.con, "unclosed_counts") == []


def _steps(*, cut_off: bool) -> Export:
    """Two closed steps with one kernel each; with cut_off, a third step pushed but never popped."""
    e = Export()
    main, key = gtid(100, 100), gpid(100)
    e.range(0, 1000, main, "step")
    e.range(2000, 3000, main, "step")
    kernels = [(150, 200, 600), (2100, 2200, 2500)] + ([(4050, 4100, 4300)] if cut_off else [])
    if cut_off:
        e.range(4000, None, main, "step")
    for corr, (launch, start, end) in enumerate(kernels, start=1):
        e.launch(launch, main, corr)
        e.kernel(start, end, key, corr)
    return e


def _run(folder, export: Export):
    folder.mkdir()
    job = write_job(folder, export.write(folder / "trace.sqlite"), region={"name": "step"},
                    hardware={"gpu": "auto", "num_gpus": 1, "peak_tflops": 1e-3},
                    model={"flops_per_step": 1.0e5}, workload={"seq_len": 4, "global_batch": 1})
    return run_job(load_job(job))


def test_unclosed_last_step_is_named_and_not_counted(tmp_path) -> None:
    cut, whole = _run(tmp_path / "cut", _steps(cut_off=True)), _run(tmp_path / "whole", _steps(cut_off=False))
    (w,) = [w for w in cut["warnings"] if w["code"] == "unclosed_ranges"]
    assert w["message"].startswith("1 matching range(s) were never closed (pid 100: 1;")
    assert "not counted" in w["message"] and "first starts at 4000 ns" in w["message"]
    assert not [w for w in whole["warnings"] if w["code"] == "unclosed_ranges"]
    assert [(o["start_ns"], o["kernel_count"]) for o in cut["occurrences"]] == [(0, 1), (2000, 1)]
    for key in ("occurrences", "totals", "metrics", "step_time", "ranks"):
        assert cut[key] == whole[key], key
    assert [w for w in cut["warnings"] if w["code"] != "unclosed_ranges"] == whole["warnings"]
