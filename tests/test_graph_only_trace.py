"""A trace whose GPU work is all CUDA graph launches recorded whole (--cuda-graph-trace=graph, Nsight
Systems' default) has no kernel table at all: Nsight Systems creates a table only when it has rows. Its
graph rows are the GPU work (docs/figures.md §4), measured by `mfu run` (with and without the cache),
`mfu inspect` and `mfu init` alike; a trace with neither table is still refused.

The trace, by hand (pid 100, thread 100; no kernel, memcpy, memset or GPU table):
  `step` ranges 1000..2000 and 3000..4000
  cudaGraphLaunch at   50 (corr 4): graph 5 ran  100..300  on device 0  (before any range: not attributed)
  cudaGraphLaunch at 1100 (corr 1): graph 5 ran 1200..1700 on device 0
  cudaGraphLaunch at 3100 (corr 2): graph 5 ran 3300..4300 on device 0  (300 ns past the range: 30 % > 5 %)
  cudaGraphLaunch at 3150 (corr 3): graph 6 ran 3500..3900 on device 1
Occurrence 1: wall 1000..2000 = 1000, sum 500, union 500, 1 launch.
Occurrence 2: wall 3000..4300 = 1300, sum 1000 + 400 = 1400, union 3300..4300 = 1000, 2 launches;
              device 0 union 1000, device 1 union 400.
Totals (disjoint envelopes): wall 2300, sum 1900, union 1500; device 0 500 + 1000 = 1500, device 1 400.
MFU = 2 x 100 FLOP / (2300 ns x 2 GPUs x 1e9 FLOP/s) = 200 / 4600; per occurrence 100 / 2000, 100 / 2600.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from nsys_export import Export, gpid, gtid
from pipeline.cli import main

NS = 1_000_000_000
MAIN, KEY = gtid(100, 100), gpid(100)
JOB = {"name": "graphs", "region": {"name": "step", "occurrences": {"first": 1, "last": 2}},
       "hardware": {"num_gpus": 2, "peak_tflops": 1e-3, "precision": "bf16"},
       "model": {"flops_per_step": 100.0}, "workload": {"mode": "inference", "seq_len": 4, "global_batch": 1}}


def graph_only(runtime: bool = True) -> Export:
    e = Export()
    e.range(1000, 2000, MAIN, "step")
    e.range(3000, 4000, MAIN, "step")
    for corr, launch, start, end, graph, device in ((4, 50, 100, 300, 5, 0), (1, 1100, 1200, 1700, 5, 0),
                                                     (2, 3100, 3300, 4300, 5, 0), (3, 3150, 3500, 3900, 6, 1)):
        if runtime:
            e.launch(launch, MAIN, corr, name="cudaGraphLaunch")
        e.graph(start, end, KEY, corr, graph, device=device)
    e.processes.append({"globalPid": KEY, "pid": 100, "name": "server"})
    return e


def run(capsys, folder: Path, trace: Path, *extra: str) -> tuple[int, str, dict]:
    job = folder / "job.yaml"
    job.write_text(json.dumps({**JOB, "trace": str(trace)}))
    code = main(["run", str(job), "--out", str(folder / "out"), *extra])
    err = capsys.readouterr().err
    result = folder / "out/graphs/result.json"
    return code, err, json.loads(result.read_text()) if code == 0 else {}


def ns(seconds: float) -> int:
    return round(seconds * NS)


@pytest.mark.parametrize("cache", [False, True])
def test_graph_rows_alone_are_measured(tmp_path, capsys, cache):
    trace = graph_only().write(tmp_path / "graphs.sqlite")
    tables = {t for (t,) in sqlite3.connect(trace).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not tables & {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}
    extra = ("--cache", str(tmp_path / "cache")) if cache else ()
    for _ in range(2 if cache else 1):        # with the cache: built, then read back (its kept window too)
        code, err, res = run(capsys, tmp_path, trace, *extra)
        assert code == 0 and "Traceback" not in err, err
        assert [(ns(o["wall_time_s"]), ns(o["gpu_kernel_sum_s"]), ns(o["gpu_kernel_union_s"]), o["kernel_count"])
                for o in res["occurrences"]] == [(1000, 500, 500, 1), (1300, 1400, 1000, 2)]
        assert res["occurrences"][1]["device_union_s"] == {"0": 1000 / NS, "1": 400 / NS}
        t = res["totals"]
        assert (ns(t["wall_time_s"]), ns(t["gpu_kernel_sum_s"]), ns(t["gpu_kernel_union_s"]), t["kernel_count"]) == (
            2300, 1900, 1500, 3)
        assert [(d["device_id"], ns(d["union_s"]), d["kernel_count"]) for d in res["devices"]] == [(0, 1500, 2),
                                                                                                   (1, 400, 1)]
        assert res["metrics"]["mfu_pct_wall"] == pytest.approx(100 * 200 / 4600)
        assert [o["mfu_pct_wall"] for o in res["occurrences"]] == pytest.approx([100 * 100 / 2000, 100 * 100 / 2600])
        assert res["metrics"]["active_ratio_pct_union"] == pytest.approx(100 * 200 / 3000)   # union 1500 ns
        assert [(c["class"], c["count"], ns(c["sum_s"])) for c in res["kernel_classes"]] == [("cuda_graph", 3, 1900)]
        codes = {w["code"] for w in res["warnings"]}
        assert {"cuda_graph_rows", "gpu_outlasts_range"} <= codes and "attribution_window" not in codes
        [said] = [w["message"] for w in res["warnings"] if w["code"] == "cuda_graph_rows"]
        assert said.startswith("3 CUDA graph launches were recorded as one row each") and "per-kernel detail" in said


def test_without_a_runtime_table_graph_rows_are_clipped_to_the_ranges(tmp_path, capsys):
    """Window attribution, with its warning: occurrence 2's 3300..4300 counts as 3300..4000 (700), so
    sum 700 + 400 = 1100 and union 700, and the wall is the range, 1000; the row at 100..300 lies in no range."""
    trace = graph_only(runtime=False).write(tmp_path / "graphs.sqlite")
    code, err, res = run(capsys, tmp_path, trace)
    assert code == 0, err
    assert [(ns(o["wall_time_s"]), ns(o["gpu_kernel_sum_s"]), ns(o["gpu_kernel_union_s"]), o["kernel_count"])
            for o in res["occurrences"]] == [(1000, 500, 500, 1), (1000, 1100, 700, 2)]
    [said] = [w["message"] for w in res["warnings"] if w["code"] == "attribution_window"]
    assert said.startswith("no CUPTI_ACTIVITY_KIND_RUNTIME table")
    assert main(["inspect", str(trace)]) == 0          # inspect says so too: graph rows are GPU work to attribute
    assert "  - no CUPTI_ACTIVITY_KIND_RUNTIME table: kernel attribution falls back to the time window\n" in (
        capsys.readouterr().out)


def test_inspect_and_init_read_graph_rows_as_the_gpu_work(tmp_path, capsys):
    """Discovery: both occurrences launch 500 and 1400 ns (medians 950 sum, 750 union), of the trace's 2100 ns of
    GPU work (the row at 100..300 is in no range): 1900 / 2100 = 90.5 %."""
    trace = graph_only().write(tmp_path / "graphs.sqlite")
    assert main(["inspect", "--format", "json", str(trace)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["tables"]["raw_kernel"] is None and info["tables"]["raw_memcpy"] is None
    assert info["tables"]["raw_graph_trace"] == "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
    [step] = info["region_discovery"]["regions"]
    assert (step["name_group"], step["step_like"], step["median_kernel_sum_ns"], step["median_kernel_union_ns"]) == (
        "step", True, 950, 750)
    assert step["kernel_share"] == pytest.approx(1900 / 2100)
    assert main(["inspect", str(trace)]) == 0
    text = capsys.readouterr().out
    assert "  device 0: 3 kernels\n  device 1: 1 kernels\n" in text
    assert ("CUDA graphs      graph level (--cuda-graph-trace=graph): 4 launches of 2 graphs, one row each; they "
            "count as GPU work (class cuda_graph), their kernels are not in the trace") in text
    assert ("  - no CUPTI_ACTIVITY_KIND_KERNEL table: all GPU work was recorded as whole CUDA graph launches "
            "(--cuda-graph-trace=graph), which `mfu run` measures as one interval each (class cuda_graph); kernel "
            "names, classes and precision are unavailable: capture with --cuda-graph-trace=node for them\n") in text
    assert "no GPU kernels were captured" not in text and "90.5% " in text
    job = tmp_path / "job.yaml"
    assert main(["init", str(trace), "-o", str(job)]) == 0
    written = job.read_text()
    assert 'name: "step"' in written and "num_gpus: 2 " in written


def test_a_trace_with_neither_table_is_refused_as_before(tmp_path, capsys):
    e = graph_only()
    e.graphs.clear()
    trace = e.write(tmp_path / "none.sqlite")
    code, err, _ = run(capsys, tmp_path, trace)
    assert code == 4 and f"{trace}: the trace has no CUPTI_ACTIVITY_KIND_KERNEL table (no GPU kernels); capture " \
                          "with `nsys profile --trace=cuda,nvtx`" in err and "Traceback" not in err
    assert main(["inspect", str(trace)]) == 0
    assert "no CUPTI_ACTIVITY_KIND_KERNEL table: no GPU kernels were captured" in capsys.readouterr().out
    assert main(["init", str(trace)]) == 4 and "holds no GPU kernels" in capsys.readouterr().err


def test_a_graph_table_lacking_a_column_it_needs_is_named(tmp_path, capsys):
    """Treated as absent, it left a trace of no GPU work, refused as 'no kernel table': the wrong fix."""
    trace = graph_only().write(tmp_path / "bad.sqlite")
    with sqlite3.connect(trace) as con:
        con.execute('ALTER TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE RENAME COLUMN "start" TO renamed')
    code, err, _ = run(capsys, tmp_path, trace)
    assert code == 4 and "its CUPTI_ACTIVITY_KIND_GRAPH_TRACE table lacks columns ['start']" in err, err


def test_a_graph_table_without_globalpid_falls_back_to_the_window_and_says_which_table(tmp_path, capsys):
    """Not the kernel table, which this trace lacks: the warning named a table that is not there."""
    trace = graph_only().write(tmp_path / "nopid.sqlite")
    with sqlite3.connect(trace) as con:
        con.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE DROP COLUMN globalPid")
    code, err, res = run(capsys, tmp_path, trace)
    assert code == 0, err
    [said] = [w["message"] for w in res["warnings"] if w["code"] == "attribution_window"]
    assert said.startswith("the CUDA graph launch table has no globalPid column, so launches cannot be matched")
    assert [ns(o["gpu_kernel_sum_s"]) for o in res["occurrences"]] == [500, 1100]     # clipped, as above


@pytest.mark.parametrize("kernels", [False, True])
def test_inspect_names_a_graph_table_lacking_a_column_as_run_does(tmp_path, capsys, kernels):
    """`mfu run` refuses the trace naming the table (export again); inspect said "no GPU kernels were captured ...
    capture with ..." (graph rows only), or nothing but a note (with a kernel table beside them), for the same file."""
    e = graph_only()
    if kernels:
        e.kernel(1250, 1300, KEY, None, device=0)
    trace = e.write(tmp_path / "bad.sqlite")
    with sqlite3.connect(trace) as con:
        con.execute('ALTER TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE RENAME COLUMN "start" TO renamed')
    code, err, _ = run(capsys, tmp_path, trace)
    said = ("its CUPTI_ACTIVITY_KIND_GRAPH_TRACE table lacks columns ['start'], which every Nsight Systems export has "
            "(a file edited or written by another tool?); export the report again with `nsys export --type sqlite`")
    assert code == 4 and said in err
    assert main(["inspect", str(trace)]) == 0
    out = capsys.readouterr().out
    assert f"  - `mfu run` refuses this trace: {said}\n" in out and "no GPU kernels were captured" not in out


@pytest.mark.parametrize("nullable, sql, message", [
    (False, "UPDATE CUPTI_ACTIVITY_KIND_GRAPH_TRACE SET \"end\" = 'soon' WHERE correlationId IN (1, 2)",
     "CUPTI_ACTIVITY_KIND_GRAPH_TRACE.end: 2 rows hold text or non-integer values"),
    (True, "UPDATE CUPTI_ACTIVITY_KIND_GRAPH_TRACE SET start = NULL WHERE correlationId = 3",
     "CUPTI_ACTIVITY_KIND_GRAPH_TRACE.start: 1 rows are NULL"),
])
def test_graph_rows_the_export_schema_does_not_allow_are_trace_errors(tmp_path, capsys, nullable, sql, message):
    """As in the kernel table (test_trace_faults): run, inspect and init exit 4 naming table, column and rows.
    The graph table was not checked: text in a time column was DuckDB's type error, and a NULL start a Python
    TypeError further on, each an internal error (exit 5) with a traceback."""
    trace = graph_only().write(tmp_path / "bad.sqlite")
    with sqlite3.connect(trace) as con:
        if nullable:        # Nsight Systems declares the times NOT NULL; a file written by another tool may not
            ddl = con.execute("SELECT sql FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE'").fetchone()[0]
            con.execute("ALTER TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE RENAME TO old_graphs")
            con.execute(ddl.replace("NOT NULL", ""))
            con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE SELECT * FROM old_graphs")
            con.execute("DROP TABLE old_graphs")
        con.execute(sql)
    code, err, _ = run(capsys, tmp_path, trace)
    assert code == 4 and f"{trace}: {message}" in err and "Traceback" not in err, err
    for command in (["inspect", str(trace)], ["init", str(trace)]):
        assert main(command) == 4, command
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
